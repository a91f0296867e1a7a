#!/usr/bin/env bash
# Run the ns-3 reference set recorded in bench/ns3/RESULTS.md and print
# markdown tables. Raw JSON goes to bench/ns3/build/refs/NAME-sSEED-rREP.json.
#
# usage: bench/ns3/references.sh [--skip-1000] [--reps N] [GROUP...]
#   GROUP: single loss cubicloss delack200 satcom flows100 flows1000 (default: all)
#   --reps N  repeat the deterministic runs N times for wall-time spread (3)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin="$here/build/dumbbell"
refs="$here/build/refs"
mkdir -p "$refs"
"$here/install.sh" >&2 && "$here/build.sh" >&2 || exit 1

reps=3
groups=()
skip1000=0
while [ $# -gt 0 ]; do
	case "$1" in
	--reps) reps="$2"; shift ;;
	--skip-1000) skip1000=1 ;;
	*) groups+=("$1") ;;
	esac
	shift
done
[ ${#groups[@]} -eq 0 ] && groups=(single loss cubicloss delack200 satcom flows100 flows1000)
[ "$skip1000" = 1 ] && groups=("${groups[@]/flows1000/}")

SINGLE="--rate=10Mbps --delay=25ms --queue=100 --duration=30s --flowName=bulk"
SATCOM="--cc=TcpCubic --rate=1Mbps --delay=500ms --queue=100 --duration=120s --bytes=600KB --switchAt=10s --switchRate=256kbps --switchDelay=125ms --flowName=transfer"
MANY="--cc=TcpCubic --rate=1Gbps --delay=10ms --queue=1000 --duration=10s --flowName=bulk"

# run NAME SEED REP ARGS... -> writes $refs/NAME-sSEED-rREP.json
run() {
	local name=$1 seed=$2 rep=$3
	shift 3
	local f="$refs/$name-s$seed-r$rep.json"
	local load
	load=$(awk '{print $1}' /proc/loadavg)
	if ! "$bin" --name="$name" --seed="$seed" "$@" >"$f.tmp" 2>"$f.err"; then
		echo "references.sh: $name seed $seed failed: $(tail -1 "$f.err")" >&2
		rm -f "$f.tmp"
		return 1
	fi
	# Record the 1-minute load average at the start next to the result.
	jq --arg load "$load" '. + {load_at_start: ($load | tonumber)}' "$f.tmp" >"$f" && rm -f "$f.tmp"
	[ -s "$f.err" ] || rm -f "$f.err"
}

# stats over JSON files: prints "mean sd min max" of a jq expression
stats() {
	local expr=$1
	shift
	jq -r "$expr" "$@" | awk '
		$1 != "null" { v[n++] = $1; s += $1 }
		END {
			if (n == 0) { print "n/a n/a n/a n/a"; exit }
			m = s / n; ss = 0; mn = v[0]; mx = v[0]
			for (i = 0; i < n; i++) { ss += (v[i] - m) ^ 2; if (v[i] < mn) mn = v[i]; if (v[i] > mx) mx = v[i] }
			sd = n > 1 ? sqrt(ss / (n - 1)) : 0
			printf "%.6g %.3g %.6g %.6g\n", m, sd, mn, mx
		}'
}
msd() { # "mean ± sd" of a jq expression over files
	local r
	r=$(stats "$@")
	awk -v r="$r" 'BEGIN { split(r, a, " "); if (a[1] == "n/a") print "n/a"; else printf "%.4g ± %.2g", a[1], a[2] }'
}
mm() { # "min-max" of a jq expression over files
	local r
	r=$(stats "$@")
	awk -v r="$r" 'BEGIN { split(r, a, " "); if (a[1] == "n/a") print "n/a"; else printf "%.4g–%.4g", a[3], a[4] }'
}

F1='.flows[0]'
for g in "${groups[@]}"; do
	case "$g" in
	single)
		echo "## single flow: 10 Mbit/s, 25 ms one-way, 100-packet DropTail, 30 s (wall over $reps runs)"
		echo
		echo "| cc | delack | goodput Mbit/s | retx | drops | RTT mean/p50/p95/max ms | qdelay mean/p95 ms | events | wall s (min–max) | CPU s (min–max) | events per CPU s | peak RSS MB | load |"
		echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
		for spec in TcpCubic:2 TcpLinuxReno:2 TcpNewReno:2 TcpBbr:2 TcpVegas:2 TcpVegas:1; do
			cc=${spec%:*}; da=${spec#*:}
			name="single-$cc-delack$da"
			for r in $(seq 1 "$reps"); do run "$name" 1 "$r" --cc="$cc" --delack="$da" $SINGLE; done
			fs=("$refs/$name"-s1-r*.json)
			f=${fs[0]}
			jq -r --arg wall "$(mm '.wall_seconds' "${fs[@]}")" --arg cpu "$(mm '.cpu_seconds' "${fs[@]}")" \
				--arg eps "$(msd '.events / .cpu_seconds' "${fs[@]}")" \
				--arg rss "$(msd '.peak_rss_mb' "${fs[@]}")" --arg load "$(jq -r '.load_at_start' "${fs[@]}" | paste -sd/)" '
				def r(x): (x * 100 | round) / 100;
				"| \(.config.cc | ltrimstr("ns3::")) | \(.config.delack) | \(r(.flows[0].goodput_mbps)) | \(.flows[0].retransmissions) | \(.links[0].drops) | \(r(.flows[0].rtt_mean_ms))/\(r(.flows[0].rtt_p50_ms))/\(r(.flows[0].rtt_p95_ms))/\(r(.flows[0].rtt_max_ms)) | \(r(.flows[0].qdelay_mean_ms))/\(r(.flows[0].qdelay_p95_ms)) | \(.events) | \($wall) | \($cpu) | \($eps) | \($rss) | \($load) |"' "$f"
		done
		echo
		;;
	loss)
		echo "## Bernoulli loss, TcpLinuxReno, 10 Mbit/s, 50 ms RTT, 100-packet DropTail, 30 s, seeds 1-5 (mean ± sd, min–max)"
		echo
		echo "| loss | goodput Mbit/s | goodput min–max | retx | loss drops | queue drops | RTT mean ms | qdelay p95 ms | Mathis Mbit/s |"
		echo "|---|---|---|---|---|---|---|---|---|"
		for p in 0.005 0.01 0.02 0.05; do
			name="loss-TcpLinuxReno-$p"
			for s in 1 2 3 4 5; do run "$name" "$s" 1 --cc=TcpLinuxReno --loss="$p" $SINGLE; done
			fs=("$refs/$name"-s*-r1.json)
			mathis=$(awk -v p="$p" 'BEGIN { printf "%.2f", 1448 * 8 * sqrt(1.5) / (0.0512 * sqrt(p)) / 1e6 }')
			echo "| $p | $(msd "$F1.goodput_mbps" "${fs[@]}") | $(mm "$F1.goodput_mbps" "${fs[@]}") | $(msd "$F1.retransmissions" "${fs[@]}") | $(msd '.links[0].loss_drops' "${fs[@]}") | $(msd '.links[0].queue_drops' "${fs[@]}") | $(msd "$F1.rtt_mean_ms" "${fs[@]}") | $(msd "$F1.qdelay_p95_ms" "${fs[@]}") | $mathis |"
		done
		echo
		;;
	cubicloss)
		echo "## Bernoulli loss, TcpCubic (no Reno-friendly region in ns-3.37), same link, seeds 1-5"
		echo
		echo "| loss | goodput Mbit/s | goodput min–max | retx | queue drops | RTT mean ms |"
		echo "|---|---|---|---|---|---|"
		for p in 0.01 0.02; do
			name="loss-TcpCubic-$p"
			for s in 1 2 3 4 5; do run "$name" "$s" 1 --cc=TcpCubic --loss="$p" $SINGLE; done
			fs=("$refs/$name"-s*-r1.json)
			echo "| $p | $(msd "$F1.goodput_mbps" "${fs[@]}") | $(mm "$F1.goodput_mbps" "${fs[@]}") | $(msd "$F1.retransmissions" "${fs[@]}") | $(msd '.links[0].queue_drops' "${fs[@]}") | $(msd "$F1.rtt_mean_ms" "${fs[@]}") |"
		done
		echo
		;;
	delack200)
		echo "## same loss runs with ns-3's default DelAckTimeout=200 ms (for the record: see the stall note)"
		echo
		echo "| loss | goodput Mbit/s | goodput min–max | retx |"
		echo "|---|---|---|---|"
		for p in 0.01 0.02; do
			name="loss200-TcpLinuxReno-$p"
			for s in 1 2 3 4 5; do run "$name" "$s" 1 --cc=TcpLinuxReno --loss="$p" --delAckTimeout=200ms $SINGLE; done
			fs=("$refs/$name"-s*-r1.json)
			echo "| $p | $(msd "$F1.goodput_mbps" "${fs[@]}") | $(mm "$F1.goodput_mbps" "${fs[@]}") | $(msd "$F1.retransmissions" "${fs[@]}") |"
		done
		echo
		;;
	satcom)
		echo "## SATCOM -> UHF, one 600 KB CUBIC transfer, seeds 1-10 (mean ± sd, min–max)"
		echo
		echo "| UHF loss | FCT s | FCT min–max | handshake s | goodput Mbit/s | retx | queue drops | loss drops | RTT mean ms | RTT max ms | RTI | sim events | wall s |"
		echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
		for p in 0 0.03; do
			name="satcom-$p"
			for s in $(seq 1 10); do run "$name" "$s" 1 $SATCOM --switchLoss="$p"; done
			fs=("$refs/$name"-s*-r1.json)
			echo "| $p | $(msd "$F1.fct_s" "${fs[@]}") | $(mm "$F1.fct_s" "${fs[@]}") | $(msd "$F1.handshake_s" "${fs[@]}") | $(msd "$F1.goodput_mbps" "${fs[@]}") | $(msd "$F1.retransmissions" "${fs[@]}") | $(msd '.links[0].queue_drops' "${fs[@]}") | $(msd '.links[0].loss_drops' "${fs[@]}") | $(msd "$F1.rtt_mean_ms" "${fs[@]}") | $(msd "$F1.rtt_max_ms" "${fs[@]}") | $(msd '.rti' "${fs[@]}") | $(msd '.events' "${fs[@]}") | $(msd '.wall_seconds' "${fs[@]}") |"
		done
		echo
		;;
	flows100 | flows1000)
		n=${g#flows}
		name="cubic-${n}flows"
		nrep=1
		[ "$n" = 100 ] && nrep=2
		for r in $(seq 1 "$nrep"); do run "$name" 1 "$r" --flows="$n" $MANY; done
		fs=("$refs/$name"-s1-r*.json)
		echo "## $n CUBIC flows, 1 Gbit/s, 10 ms one-way, 1000-packet DropTail, 10 s ($nrep run(s))"
		echo
		jq -r --arg wall "$(mm '.wall_seconds' "${fs[@]}")" --arg cpu "$(mm '.cpu_seconds' "${fs[@]}")" --arg load "$(jq -r '.load_at_start' "${fs[@]}" | paste -sd/)" '
			def r(x): (x * 1000 | round) / 1000;
			def col(f): [.flows[] | f | select(. != null)];
			def mean(a): if (a | length) > 0 then (a | add / length) else null end;
			"| metric | value |\n|---|---|",
			"| aggregate goodput Mbit/s | \(r(.aggregate_goodput_mbps)) |",
			"| per-flow goodput min / mean / max Mbit/s | \(r(col(.goodput_mbps) | min)) / \(r(mean(col(.goodput_mbps)))) / \(r(col(.goodput_mbps) | max)) |",
			"| Jain index | \(r(.jain)) |",
			"| bottleneck utilization | \(r(.links[0].utilization)) |",
			"| queue drops | \(.links[0].queue_drops) |",
			"| retransmissions (sum) | \(col(.retransmissions) | add) |",
			"| RTT mean (mean over flows) ms | \(r(mean(col(.rtt_mean_ms)))) |",
			"| RTT p95 (mean over flows) ms | \(r(mean(col(.rtt_p95_ms)))) |",
			"| RTT max (max over flows) ms | \(r(col(.rtt_max_ms) | max)) |",
			"| qdelay mean / p95 (mean over flows) ms | \(r(mean(col(.qdelay_mean_ms)))) / \(r(mean(col(.qdelay_p95_ms)))) |",
			"| flows with no RTT sample | \([.flows[] | select(.rtt_samples == 0)] | length) |",
			"| socket buffer B (max in-flight B) | \(.config.socket_buffer_bytes) (\(col(.max_inflight_bytes) | max)) |",
			"| events | \(.events) |",
			"| wall s (min–max) | \($wall) |",
			"| CPU s (min–max) | \($cpu) |",
			"| events per CPU s | \(r(.events / .cpu_seconds)) |",
			"| peak RSS MB | \(r(.peak_rss_mb)) |",
			"| load average at start | \($load) |"' "${fs[0]}"
		echo
		;;
	"") ;;
	*) echo "references.sh: unknown group $g" >&2; exit 2 ;;
	esac
done
