#!/usr/bin/env bash
# Installs what bench/kernelcc/load.sh needs to build and register Hybla
# and Westwood+ as BPF struct_ops programs (Debian's clang, bpftool and
# libbpf-dev), for emu's TestKernelCCProgramsMatchSimulator, which holds
# the simulator's two controllers to the kernel running those programs.
# Only where it can matter: as root, on a kernel that lacks either
# controller and has BTF. Idempotent and quiet; fails loudly. Elsewhere the
# test skips and says why.
set -euo pipefail
avail=/proc/sys/net/ipv4/tcp_available_congestion_control
if [ "$(id -u)" -ne 0 ] || [ ! -r "$avail" ]; then
  exit 0
fi
if grep -qw hybla "$avail" && grep -qw westwood "$avail"; then
  exit 0
fi
if [ ! -r /sys/kernel/btf/vmlinux ]; then
  echo "setup-kernelcc: this kernel has no BTF: TestKernelCCProgramsMatchSimulator will skip" >&2
  exit 0
fi
need=()
for p in clang bpftool libbpf-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "${need[@]}" >/dev/null
fi
clang --version >/dev/null
bpftool version >/dev/null
