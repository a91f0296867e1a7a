#!/usr/bin/env bash
# Compiles dumbbell.cpp against an htsim checkout into bench/htsim/build/dumbbell.
# htsim (https://github.com/Broadcom/csg-htsim) is not packaged and not part of
# cclab: clone it yourself and point HTSIM_DIR at the checkout (the directory
# holding sim/). Only the library objects a TCP dumbbell needs are compiled,
# with the flags of htsim's own sim/Makefile.
#
# usage: HTSIM_DIR=/path/to/csg-htsim bench/htsim/build.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${HTSIM_DIR:?set HTSIM_DIR to an htsim checkout (the directory holding sim/)}"
src="$HTSIM_DIR/sim"
[ -f "$src/eventlist.cpp" ] || { echo "build.sh: $src/eventlist.cpp not found: HTSIM_DIR must hold htsim's sim/" >&2; exit 1; }
command -v g++ >/dev/null || { echo "build.sh: needs g++ (apt-get install g++)" >&2; exit 1; }
out="$here/build"
mkdir -p "$out/obj"
# sim/Makefile's CFLAGS.
flags=(-Wall -std=c++11 -g -Wsign-compare -Wuninitialized -fPIE -O3)
objs=()
for f in eventlist config network route queue pipe tcp tcppacket mtcp loggers logfile fairpullqueue ndppacket eth_pause_packet trigger routetable; do
	g++ "${flags[@]}" -c -o "$out/obj/$f.o" "$src/$f.cpp"
	objs+=("$out/obj/$f.o")
done
g++ "${flags[@]}" -I"$src" -o "$out/dumbbell" "$here/dumbbell.cpp" "${objs[@]}"
echo "build.sh: built $out/dumbbell" >&2
