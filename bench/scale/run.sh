#!/usr/bin/env bash
# Issue 19's scale benchmark: cclab's CPU time, events per CPU-second and
# peak memory on N = 100, 1000 and 10,000 long-lived NewReno flows through
# one bottleneck (bench/scale/newreno-*flows.yaml), and one flow at 10 Mbit/s
# against one at 10 Gbit/s (newreno-1flow-*.yaml), beside ns-3's when its
# dumbbell is built (bench/ns3/build.sh) and htsim's when its is
# (bench/htsim/build.sh, from an htsim checkout of your own).
#
# usage: [CCLAB=binary] [CCLAB_SIM=binary] bench/scale/run.sh [--runs N] [--only NAME[,NAME]] [--sim] [--ns3] [--htsim] [--pairs K] [--split K]
#   CCLAB     time this cclab binary instead of building the checkout (to
#             compare two versions in one invocation)
#   CCLAB_SIM with --sim, time this cclab-sim binary instead of building it
#   --runs N  runs per scenario (default 3); the row is the run with the
#             median CPU time, min-max CPU in brackets; 0 for no table
#             (with --pairs)
#   --only    scenario names (file names without .yaml)
#   --sim     also time cmd/cclab-sim, the simulator-only binary (the same
#             runs and results in a binary without cclab's other commands,
#             whose start-up alone peaks at 16-17 MiB, and which spends
#             about 2% more CPU time giving back pages around the run)
#   --ns3     also run ns-3's dumbbell on the multi-flow scenarios (slow:
#             tens of CPU seconds per run at N = 100)
#   --htsim   also run htsim's dumbbell (bench/htsim/build/dumbbell) on the
#             multi-flow scenarios: the same workload with htsim's TCP
#             (no SACK, an ACK per packet), timed in the same invocation
#   --pairs K then time N = 100 and N = 1000 in turn, K pairs per binary
#             (cclab, and cclab-sim and htsim when asked for), the order
#             alternating, and print the median of the pairs' cost-per-event
#             ratios with their quartiles and range: a host whose speed
#             drifts between the table's rows (5-40% within hours on the
#             machines of docs/performance.md) moves the ratio of the
#             table's medians, where the median of pairs taken in turn
#             does not follow it
#   --split K then split each binary's ratio into its two shares, K rounds:
#             N = 100, the scaled N = 100 run (100 Mbit/s, a 100-packet
#             queue, 100 s: N = 1000's per-flow dynamics with N = 100's
#             state) and N = 1000 timed in turn, the order rotating; prints
#             the median ns per event of each and the medians of the
#             rounds' dynamics share (scaled over N = 100) and memory share
#             (N = 1000 over scaled), with their ranges
#
# The last lines give issue 19's two ratios that no host changes: cost per
# event at N = 1000 over N = 100, and one flow's events per CPU-second at
# 10 Mbit/s over 10 Gbit/s, from the median runs.
#
# CPU = user + system seconds of the whole process, to the millisecond
# (GNU time's own share taken off), and max RSS, from GNU time; events
# from cclab's JSON (ns-3: Simulator::GetEventCount). On a shared machine,
# CPU seconds inflate with contention: compare the rows of one
# invocation, and prefer events/op and ns/event from
# go test -bench Scale -benchtime 3x ./experiment/network.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
runs=3
only=""
ns3=0
htsim=0
sim=0
pairs=0
split=0
while [ $# -gt 0 ]; do
	case "$1" in
	--runs) runs="$2"; shift ;;
	--only) only="$2"; shift ;;
	--ns3) ns3=1 ;;
	--htsim) htsim=1 ;;
	--sim) sim=1 ;;
	--pairs) pairs="$2"; shift ;;
	--split) split="$2"; shift ;;
	-h | --help) sed -n '2,51p' "$0"; exit 0 ;;
	*) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
[[ $runs =~ ^[0-9]+$ ]] || { echo "run.sh: --runs wants a whole number (0: no table, with --pairs), got '$runs'" >&2; exit 2; }
[[ $pairs =~ ^[0-9]+$ ]] || { echo "run.sh: --pairs wants a whole number (0: none), got '$pairs'" >&2; exit 2; }
[[ $split =~ ^[0-9]+$ ]] || { echo "run.sh: --split wants a whole number (0: none), got '$split'" >&2; exit 2; }
[ "$runs" -gt 0 ] || [ "$pairs" -gt 0 ] || [ "$split" -gt 0 ] || { echo "run.sh: --runs 0 times nothing without --pairs or --split" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "run.sh: needs GNU time (/usr/bin/time; apt-get install time)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "${CCLAB:-}" ]; then
	cp "$CCLAB" "$tmp/cclab"
else
	(cd "$repo" && go build -o "$tmp/cclab" ./cmd/cclab)
fi
if [ "$sim" = 1 ]; then
	if [ -n "${CCLAB_SIM:-}" ]; then
		cp "$CCLAB_SIM" "$tmp/cclab-sim"
	else
		(cd "$repo" && go build -o "$tmp/cclab-sim" ./cmd/cclab-sim)
	fi
fi
ns3bin="$repo/bench/ns3/build/dumbbell"
htsimbin="$repo/bench/htsim/build/dumbbell"

# timed CMD...: runs CMD under GNU time (its peak memory into $tmp/time,
# its output into $tmp/out.json and $tmp/err) and prints the user + system
# seconds of GNU time and CMD together. GNU time's own %U and %S truncate
# to 10 ms, a tenth of an N = 100 run, so the CPU time is the subshell's
# children's from bash's times (getrusage, printed to the millisecond).
timed() {
	(
		/usr/bin/time -f '%M' -o "$tmp/time" "$@" > "$tmp/out.json" 2> "$tmp/err" || exit 1
		times > "$tmp/times"
	) || return 1
	# times' second line: the children's user and system time, "0m0.112s 0m0.004s".
	sed -n 2p "$tmp/times" | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, p, /[ms]/); t += 60 * p[1] + p[2] } printf "%.3f", t }'
}

# GNU time's own CPU time (a few milliseconds), subtracted from every run:
# the median of five runs of true.
overhead=$(for _ in 1 2 3 4 5; do timed true; echo; done | sort -n | sed -n 3p)

# events: the event count of the last timed run, from cclab's JSON or
# htsim's driver, which reports on stderr (its stdout is htsim's own); 0
# if neither has one.
events() {
	local ev
	ev=$(grep -m1 '"events"' "$tmp/out.json" | tr -dc '0-9')
	[ -n "$ev" ] || ev=$(grep -m1 '^events=' "$tmp/err" | tr -dc '0-9')
	echo "${ev:-0}"
}

# command_for KIND NAME: sets cmd to the command line that runs KIND
# (cclab, cclab-sim or htsim) on the scenario NAME (bench/scale/NAME.yaml;
# htsim's driver takes the flow count, rate and queue that the name and
# issue 19's workload give: 10 Gbit/s and 10,000 packets for 10,000 flows).
command_for() {
	local n
	case "$1" in
	cclab) cmd=("$tmp/cclab" run "$here/$2.yaml" --json) ;;
	cclab-sim) cmd=("$tmp/cclab-sim" "$here/$2.yaml" --json) ;;
	htsim-scaled) cmd=("$htsimbin" -n 100 -rate_mbps 100 -buffer_pkts 100 -time_s 100) ;;
	htsim)
		n=${2#newreno-}; n=${n%flows}
		if [ "$n" = 10000 ]; then
			cmd=("$htsimbin" -n "$n" -rate_mbps 10000 -buffer_pkts 10000)
		else
			cmd=("$htsimbin" -n "$n" -rate_mbps 1000 -buffer_pkts 1000)
		fi
		;;
	esac
}

# measure NAME CMD...: runs CMD $runs times, prints "cpu_s events rss_kb"
# of the median-CPU run and the CPU range.
measure() {
	local name=$1; shift
	: > "$tmp/$name.runs"
	for _ in $(seq "$runs"); do
		local ev cpu
		cpu=$(timed "$@") || { echo "run.sh: $name failed: $(tail -3 "$tmp/err")" >&2; return 1; }
		ev=$(events)
		echo "$(awk -v c="$cpu" -v o="$overhead" 'BEGIN { printf "%.3f", c - o }') $ev $(tail -1 "$tmp/time")" >> "$tmp/$name.runs"
	done
	sort -n "$tmp/$name.runs" > "$tmp/$name.sorted"
	local mid=$(( (runs + 1) / 2 ))
	read -r cpu ev rss < <(sed -n "${mid}p" "$tmp/$name.sorted")
	local lo hi
	lo=$(head -1 "$tmp/$name.sorted" | cut -d' ' -f1)
	hi=$(tail -1 "$tmp/$name.sorted" | cut -d' ' -f1)
	echo "$name $cpu $ev" >> "$tmp/summary"
	awk -v n="$name" -v c="$cpu" -v e="$ev" -v r="$rss" -v lo="$lo" -v hi="$hi" 'BEGIN {
		eps = (c > 0) ? e / c / 1e6 : 0
		printf "%-34s %7.3f [%5.3f-%5.3f] %10d %9.2f M %8.1f MiB\n", n, c, lo, hi, e, eps, r / 1024 }'
}

echo "# $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $runs runs each, $pairs pairs, $split split rounds"
# The simulator prefetches per-flow state from L2/2.4 KB flows (at least
# 300; experiment/network's prefetchFrom), so which runs prefetch depends on
# this host's L2.
for d in /sys/devices/system/cpu/cpu0/cache/index*; do
	if [ "$(cat "$d/level" 2>/dev/null)" = 2 ] && [ "$(cat "$d/type" 2>/dev/null)" != Instruction ]; then
		echo "# L2 per core $(cat "$d/size"): runs of at least $(awk -v s="$(cat "$d/size")" 'BEGIN { n = s + 0; if (s ~ /K$/) n *= 1024; if (s ~ /M$/) n *= 1048576; k = int(n / 2400); print (k > 300 ? k : 300) }') flows prefetch"
		break
	fi
done
[ "$runs" -gt 0 ] && printf "%-34s %7s %13s %10s %11s %12s\n" scenario "CPU s" "  [min-max]" events "events/CPUs" "max RSS"
for f in newreno-100flows newreno-1000flows newreno-10000flows newreno-1flow-10Mbps newreno-1flow-10Gbps; do
	[ "$runs" -gt 0 ] || break
	if [ -n "$only" ] && [[ ",$only," != *",$f,"* ]]; then
		continue
	fi
	command_for cclab "$f"
	measure "cclab $f" "${cmd[@]}" || true
	if [ "$sim" = 1 ]; then
		command_for cclab-sim "$f"
		measure "cclab-sim $f" "${cmd[@]}" || true
	fi
	if [ "$ns3" = 1 ] && [[ $f == *flows ]]; then
		if [ ! -x "$ns3bin" ]; then
			echo "run.sh: ns-3 dumbbell not built (bench/ns3/install.sh && bench/ns3/build.sh)" >&2
			continue
		fi
		n=${f#newreno-}; n=${n%flows}
		rate=1Gbps; q=1000
		if [ "$n" = 10000 ]; then rate=10Gbps; q=10000; fi
		# ns-3 staggers the starts evenly over the first second where
		# cclab draws them uniformly at random.
		measure "ns-3 $f" "$ns3bin" --cc=TcpLinuxReno --flows="$n" --rate=$rate --delay=10ms \
			--queue=$q --duration=10s --stagger="$((1000000 / n))us" --flowName=bulk --rttTrace=false || true
	fi
	if [ "$htsim" = 1 ] && [[ $f == *flows ]]; then
		if [ ! -x "$htsimbin" ]; then
			echo "run.sh: htsim dumbbell not built (HTSIM_DIR=... bench/htsim/build.sh)" >&2
			continue
		fi
		command_for htsim "$f"
		measure "htsim $f" "${cmd[@]}" || true
	fi
done

# Issue 19's two host-independent ratios, from the rows above (median runs).
if [ -f "$tmp/summary" ]; then
	awk '
	{ cpu[$1 " " $2] = $3; ev[$1 " " $2] = $4 }
	END {
		split("cclab cclab-sim htsim", names, " ")
		for (i = 1; i <= 3; i++) {
			n = names[i]
			a = n " newreno-100flows"; c = n " newreno-1000flows"
			if (cpu[a] > 0 && cpu[c] > 0 && ev[a] > 0 && ev[c] > 0)
				printf "# %s: cost per event at N = 1000 over N = 100: %.0f / %.0f ns = %.2fx (goal: at most 1.3x)\n", n, 1e9 * cpu[c] / ev[c], 1e9 * cpu[a] / ev[a], (cpu[c] / ev[c]) / (cpu[a] / ev[a])
			s = n " newreno-1flow-10Mbps"; g = n " newreno-1flow-10Gbps"
			if (cpu[s] > 0 && cpu[g] > 0 && ev[s] > 0 && ev[g] > 0)
				printf "# %s: events per CPU-second at 10 Mbit/s over 10 Gbit/s, one flow: %.2fx (goal: within 1.5x)\n", n, (ev[s] / cpu[s]) / (ev[g] / cpu[g])
		}
	}' "$tmp/summary"
fi

# one KIND N: one timed run of KIND (cclab, cclab-sim or htsim) on issue
# 19's N-flow workload, or with N = scaled on the scaled N = 100 run
# (--split); prints its CPU seconds and events.
one() {
	local kind=$1 n=$2 cpu
	if [ "$n" = scaled ] && [ "$kind" = htsim ]; then
		command_for htsim-scaled ""
	elif [ "$n" = scaled ]; then
		command_for "$kind" newreno-100flows
		cmd+=(--set bottleneck.rate=100Mbps --set bottleneck.queue.limit=100 --set duration=100s)
	else
		command_for "$kind" "newreno-${n}flows"
	fi
	cpu=$(timed "${cmd[@]}") || { echo "run.sh: $kind with $n flows failed: $(tail -3 "$tmp/err")" >&2; return 1; }
	awk -v c="$cpu" -v o="$overhead" -v e="$(events)" 'BEGIN { printf "%.3f %d\n", c - o, e }'
}

# awk functions for the pairs' and the split's statistics over x[1..n].
awk_order_stats='
# Insertion sort of x[1..n]: n is tens at most.
function sort(x,   i, j, v) { for (i = 2; i <= n; i++) { v = x[i]; for (j = i - 1; j >= 1 && x[j] > v; j--) x[j + 1] = x[j]; x[j + 1] = v } }
# q(x, p): the p-quantile of the sorted x[1..n], linear between order statistics.
function q(x, p,   h, lo) { h = 1 + (n - 1) * p; lo = int(h); return (lo >= n) ? x[n] : x[lo] + (h - lo) * (x[lo + 1] - x[lo]) }
'

# The binaries --pairs and --split time.
kinds=cclab
[ "$sim" = 1 ] && kinds="$kinds cclab-sim"
if [ "$htsim" = 1 ] && { [ "$pairs" -gt 0 ] || [ "$split" -gt 0 ]; }; then
	if [ -x "$htsimbin" ]; then
		kinds="$kinds htsim"
	else
		echo "run.sh: htsim dumbbell not built (HTSIM_DIR=... bench/htsim/build.sh): no htsim pairs or split" >&2
	fi
fi

if [ "$pairs" -gt 0 ]; then
	for kind in $kinds; do
		: > "$tmp/pairs"
		for i in $(seq "$pairs"); do
			# Alternate which runs first, so that a host speeding up or
			# slowing down through the pairs favours neither size.
			order="100 1000"
			[ $((i % 2)) = 0 ] && order="1000 100"
			for n in $order; do
				one "$kind" "$n" > "$tmp/one.$n" || exit 1
			done
			echo "$(cat "$tmp/one.100") $(cat "$tmp/one.1000")" >> "$tmp/pairs"
		done
		awk -v kind="$kind" -v k="$pairs" '
		$1 > 0 && $2 > 0 && $3 > 0 && $4 > 0 { n++; r[n] = ($3 / $4) / ($1 / $2); a[n] = 1e9 * $1 / $2; b[n] = 1e9 * $3 / $4 }
		END {
			if (n < k) { printf "run.sh: %s: %d of %d pairs with CPU time and events\n", kind, n, k > "/dev/stderr"; exit 1 }
			sort(a); sort(b); sort(r)
			printf "# %s: cost per event at N = 1000 over N = 100, %d pairs in turn: median %.2fx [quartiles %.2f-%.2f, range %.2f-%.2f] (goal: at most 1.3x); median ns per event %.0f and %.0f\n", kind, n, q(r, 0.5), q(r, 0.25), q(r, 0.75), r[1], r[n], q(a, 0.5), q(b, 0.5)
		}
		'"$awk_order_stats" "$tmp/pairs" || exit 1
	done
fi

if [ "$split" -gt 0 ]; then
	for kind in $kinds; do
		: > "$tmp/split"
		for i in $(seq "$split"); do
			# Rotate the order, so that a host drifting through the
			# rounds favours no workload.
			case $((i % 3)) in
			1) order="100 scaled 1000" ;;
			2) order="scaled 1000 100" ;;
			0) order="1000 100 scaled" ;;
			esac
			for w in $order; do
				one "$kind" "$w" > "$tmp/split.$w" || exit 1
			done
			echo "$(cat "$tmp/split.100") $(cat "$tmp/split.scaled") $(cat "$tmp/split.1000")" >> "$tmp/split"
		done
		awk -v kind="$kind" -v k="$split" '
		$1 > 0 && $2 > 0 && $3 > 0 && $4 > 0 && $5 > 0 && $6 > 0 {
			n++; a[n] = 1e9 * $1 / $2; s[n] = 1e9 * $3 / $4; b[n] = 1e9 * $5 / $6
			d[n] = s[n] / a[n]; m[n] = b[n] / s[n]; r[n] = b[n] / a[n]
		}
		END {
			if (n < k) { printf "run.sh: %s: %d of %d split rounds with CPU time and events\n", kind, n, k > "/dev/stderr"; exit 1 }
			sort(a); sort(s); sort(b); sort(d); sort(m); sort(r)
			printf "# %s: ns per event, %d rounds in turn (medians): N = 100 %.1f, scaled N = 100 %.1f, N = 1000 %.1f; dynamics share %.2fx [%.2f-%.2f], memory share %.2fx [%.2f-%.2f], ratio %.2fx [%.2f-%.2f]\n", kind, n, q(a, 0.5), q(s, 0.5), q(b, 0.5), q(d, 0.5), d[1], d[n], q(m, 0.5), m[1], m[n], q(r, 0.5), r[1], r[n]
		}
		'"$awk_order_stats" "$tmp/split" || exit 1
	done
fi
