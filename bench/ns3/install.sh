#!/usr/bin/env bash
# Idempotently install Debian's ns-3 (3.37) and the tools the benchmark scripts
# need. Does nothing when everything is already present.
#
# libgsl-dev is required because ns3-core.pc links libgsl.so by absolute path
# (see shared/NS3-NOTES.md); jq and GNU time are used by compare.sh.
set -euo pipefail

pkgs=(libns3-dev ns3 pkg-config libgsl-dev g++ jq time)
missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
# Also check the things we actually use, in case a package is installed but broken.
if [ ${#missing[@]} -eq 0 ] && pkg-config --exists ns3-core ns3-network ns3-internet \
	ns3-point-to-point ns3-applications ns3-traffic-control 2>/dev/null &&
	command -v g++ >/dev/null && command -v jq >/dev/null && [ -x /usr/bin/time ]; then
	echo "install.sh: ns-3 and tools already installed" >&2
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
echo "install.sh: installing ${missing[*]:-(reinstall check)}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get -o DPkg::Lock::Timeout=900 update
$SUDO apt-get -o DPkg::Lock::Timeout=900 install -y --no-install-recommends "${pkgs[@]}"
pkg-config --modversion ns3-core >&2
