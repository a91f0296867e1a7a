#!/usr/bin/env bash
# Compile dumbbell.cc against Debian's ns-3 into bench/ns3/build/dumbbell.
# Debian's ns3++ wrapper is broken, so call g++ with pkg-config directly.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$here/build"
if ! pkg-config --exists ns3-core 2>/dev/null; then
	"$here/install.sh"
fi
src="$here/dumbbell.cc"
out="$here/build/dumbbell"
if [ -x "$out" ] && [ "$out" -nt "$src" ] && [ "${FORCE:-0}" != 1 ]; then
	echo "build.sh: $out is up to date" >&2
	exit 0
fi
# shellcheck disable=SC2046
g++ -std=c++17 -O2 -Wall -o "$out" "$src" \
	$(pkg-config --cflags --libs ns3-core ns3-network ns3-internet ns3-point-to-point ns3-applications ns3-traffic-control)
echo "build.sh: built $out" >&2
