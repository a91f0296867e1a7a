#!/usr/bin/env bash
# Reno-style TCP (no SACK) and SACK TCP in the simulator against Linux's,
# side by side: the TCP/NC study's flow (tcpnc-5pct.yaml) per seed, goodput
# and retransmission timeouts, simulated (cclab run) and with kernel TCP in
# network namespaces (cclab emu, root; it sets tcp_sack in the namespaces).
# docs/tcpnc.md quotes its output.
#
# usage: [CCLAB=binary] bench/nosack/run.sh [--seeds N] [--sim]
#   --seeds N  seeds 1..N (default 3); each emulated run takes 60 s of wall time
#   --sim      the simulator only (no root needed)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
seeds=3
simonly=0
while [ $# -gt 0 ]; do
	case "$1" in
	--seeds) seeds="$2"; shift ;;
	--sim) simonly=1 ;;
	-h | --help) sed -n '2,11p' "$0"; exit 0 ;;
	*) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
if [ -z "${CCLAB:-}" ]; then
	CCLAB=$(mktemp -d)/cclab
	(cd "$repo" && go build -o "$CCLAB" ./cmd/cclab)
fi
scn="$here/tcpnc-5pct.yaml"

# field prints goodput and RTOs of flow 0 from a cclab JSON result.
field() {
	python3 -c 'import json,sys; f=json.load(sys.stdin)["flows"][0]; print("%.3f %d" % (f["goodput_mbps"], f["rtos"]))'
}

echo "# $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %4s  %-18s %-18s\n' sack seed "sim Mbit/s RTOs" "kernel Mbit/s RTOs"
for sack in true false; do
	for seed in $(seq 1 "$seeds"); do
		sim=$("$CCLAB" run "$scn" --seed "$seed" --set transport.sack=$sack --json | field)
		kern="-"
		if [ "$simonly" = 0 ]; then
			kern=$("$CCLAB" emu "$scn" --seed "$seed" --set transport.sack=$sack --json | field)
		fi
		printf '%-6s %4s  %-18s %-18s\n' "$sack" "$seed" "$sim" "$kern"
	done
done
