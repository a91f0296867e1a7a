#!/usr/bin/env bash
# Run each reference scenario on ns-3 (bench/ns3/dumbbell) and on cclab
# (cclab run bench/scenarios/NAME.yaml --json) and print one side-by-side table.
#
# usage: bench/ns3/compare.sh [--quick] [--only NAME[,NAME...]] [--seeds N]
#                             [--out FILE] [--list]
#   --quick    skip the 1000-flow run
#   --only     run only these scenarios (names as in bench/scenarios/*.yaml)
#   --seeds N  runs of each scenario with random loss, seeds 1..N on both sides,
#              averaged (default 1; scenarios without random loss run once)
#   --out FILE also write the table and every raw JSON (one per line) to FILE
#   --list     print the scenarios and their ns-3 arguments, and exit
#
# Wall time, CPU time (user + system) and peak memory are measured the same
# way for both programs, over the whole process: wall by clock reads around
# it, CPU and max RSS by GNU time. The
# speed-up is ns-3 wall / cclab wall; on a shared machine compare CPU times too.
# Goodput is the sum of the flows' goodput_mbps; RTT mean and qdelay p95 are
# averaged over the flows that have them; retransmissions are summed; FCT is
# the mean over finished flows; RTI is the top-level rti. Difference % =
# (cclab - ns3) / ns3.
# When cclab cannot be built or a run fails, its columns print "n/a" and the
# error goes to stderr; the script still completes (exit 0).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
scen_dir="$repo/bench/scenarios"
build="$here/build"

quick=0
only=""
seeds=1
out=""
list=0
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) quick=1 ;;
	--only) only="$2"; shift ;;
	--only=*) only="${1#--only=}" ;;
	--seeds) seeds="$2"; shift ;;
	--seeds=*) seeds="${1#--seeds=}" ;;
	--out) out="$2"; shift ;;
	--out=*) out="${1#--out=}" ;;
	--list) list=1 ;;
	-h | --help) sed -n '2,21p' "$0"; exit 0 ;;
	*) echo "compare.sh: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done

# name | stochastic (1: has random loss) | dumbbell arguments (must mirror the YAML)
SCENARIOS=(
	"cubic-1flow|0|--cc=TcpCubic --rate=10Mbps --delay=25ms --queue=100 --duration=30s --flowName=bulk"
	"newreno-1flow|0|--cc=TcpLinuxReno --rate=10Mbps --delay=25ms --queue=100 --duration=30s --flowName=bulk"
	"bbr-1flow|0|--cc=TcpBbr --rate=10Mbps --delay=25ms --queue=100 --duration=30s --flowName=bulk"
	"vegas-1flow|0|--cc=TcpVegas --rate=10Mbps --delay=25ms --queue=100 --duration=30s --flowName=bulk"
	"newreno-loss0.5pct|1|--cc=TcpLinuxReno --rate=10Mbps --delay=25ms --queue=100 --duration=30s --loss=0.005 --flowName=bulk"
	"newreno-loss1pct|1|--cc=TcpLinuxReno --rate=10Mbps --delay=25ms --queue=100 --duration=30s --loss=0.01 --flowName=bulk"
	"newreno-loss2pct|1|--cc=TcpLinuxReno --rate=10Mbps --delay=25ms --queue=100 --duration=30s --loss=0.02 --flowName=bulk"
	"newreno-loss5pct|1|--cc=TcpLinuxReno --rate=10Mbps --delay=25ms --queue=100 --duration=30s --loss=0.05 --flowName=bulk"
	"satcom-cubic-600KB|0|--cc=TcpCubic --rate=1Mbps --delay=500ms --queue=100 --duration=120s --bytes=600KB --switchAt=10s --switchRate=256kbps --switchDelay=125ms --switchLoss=0 --flowName=transfer"
	"satcom-cubic-600KB-uhfloss3pct|1|--cc=TcpCubic --rate=1Mbps --delay=500ms --queue=100 --duration=120s --bytes=600KB --switchAt=10s --switchRate=256kbps --switchDelay=125ms --switchLoss=0.03 --flowName=transfer"
	"cubic-100flows|0|--cc=TcpCubic --flows=100 --rate=1Gbps --delay=10ms --queue=1000 --duration=10s --flowName=bulk"
	"cubic-1000flows|0|--cc=TcpCubic --flows=1000 --rate=1Gbps --delay=10ms --queue=1000 --duration=10s --flowName=bulk"
)

if [ "$list" = 1 ]; then
	for s in "${SCENARIOS[@]}"; do
		IFS='|' read -r name stoch args <<<"$s"
		printf '%-32s %s\n' "$name" "$args"
	done
	exit 0
fi

selected() {
	local name=$1
	if [ -n "$only" ]; then
		case ",$only," in *",$name,"*) return 0 ;; *) return 1 ;; esac
	fi
	if [ "$quick" = 1 ] && [ "$name" = cubic-1000flows ]; then
		return 1
	fi
	return 0
}

if [ -n "$only" ]; then
	for n in ${only//,/ }; do
		found=0
		for s in "${SCENARIOS[@]}"; do [ "${s%%|*}" = "$n" ] && found=1; done
		if [ "$found" = 0 ]; then
			echo "compare.sh: unknown scenario $n (see --list)" >&2
			exit 2
		fi
	done
fi

"$here/install.sh" >&2 || { echo "compare.sh: install.sh failed" >&2; exit 1; }
"$here/build.sh" >&2 || { echo "compare.sh: build.sh failed" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cclab_ok=1
echo "compare.sh: building cclab" >&2
# CCLAB_PKG overrides the package built (for testing the n/a path).
if ! (cd "$repo" && go build -o "$build/cclab" "${CCLAB_PKG:-./cmd/cclab}") 2>"$tmp/gobuild.err"; then
	cclab_ok=0
	echo "compare.sh: cclab does not build; its columns will be n/a:" >&2
	sed 's/^/  /' "$tmp/gobuild.err" >&2
fi

# run_timed OUTJSON TIMEFILE ERRFILE CMD... : runs CMD under GNU time and
# writes "wall_s maxrss_kB user_s sys_s" to TIMEFILE. The wall time is taken
# with nanosecond clock reads around the process (GNU time's %e has 10 ms
# resolution, too coarse for cclab's short runs).
run_timed() {
	local outf=$1 timef=$2 errf=$3
	shift 3
	local t0 t1 rc
	t0=$(date +%s%N)
	timeout 3600 /usr/bin/time -f '%M %U %S' -o "$timef.gnu" "$@" >"$outf" 2>"$errf"
	rc=$?
	t1=$(date +%s%N)
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }') $(tail -1 "$timef.gnu")" >"$timef"
	return $rc
}

# Summary of one run's JSON: goodput rtt_mean qdelay_p95 retransmissions fct rti.
summarise() {
	jq -r '
		def avg(f): ([.flows[] | f | select(. != null)] as $v
			| if ($v | length) > 0 then ($v | add / length) else null end);
		[ ([.flows[].goodput_mbps | select(. != null)] | if length > 0 then add else null end),
		  avg(.rtt_mean_ms), avg(.qdelay_p95_ms),
		  ([.flows[].retransmissions | select(. != null)] | if length > 0 then add else null end),
		  avg(.fct_s), .rti ] | map(if . == null then "n/a" else tostring end) | join(" ")' "$1" 2>/dev/null
}

# mean of numbers on stdin ("n/a" if any value is n/a or there is none)
mean() {
	awk '{ if ($1 == "n/a") bad = 1; else { s += $1; n++ } }
	     END { if (bad || n == 0) print "n/a"; else printf "%.6g\n", s / n }'
}

fmt() { # fmt VALUE DECIMALS
	if [ "$1" = n/a ] || [ -z "$1" ]; then printf 'n/a'; else printf "%.${2}f" "$1"; fi
}

ratio() { # ratio A B -> A/B
	if [ "$1" = n/a ] || [ "$2" = n/a ] || [ -z "$1" ] || [ -z "$2" ]; then printf 'n/a'; return; fi
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else printf "n/a" }'
}

diffpct() { # diffpct NS3 CCLAB
	if [ "$1" = n/a ] || [ "$2" = n/a ]; then printf 'n/a'; return; fi
	awk -v a="$1" -v b="$2" 'BEGIN { if (a != 0) printf "%+.1f%%", (b - a) / a * 100; else printf "n/a" }'
}

header=$(printf '%-30s %8s %8s %8s %13s %7s %7s %9s %9s %7s %13s %13s %13s %13s %11s %4s\n' \
	scenario ns3_s cclab_s speedup cpu_s:ns3/cc ns3_MB cc_MB ns3_Mbps cc_Mbps diff \
	rtt_ms:ns3/cc qd95_ms:ns3/cc retx:ns3/cc fct_s:ns3/cc rti:ns3/cc runs)
rows=()
raw=()

for s in "${SCENARIOS[@]}"; do
	IFS='|' read -r name stoch args <<<"$s"
	selected "$name" || continue
	yaml="$scen_dir/$name.yaml"
	n=1
	[ "$stoch" = 1 ] && n=$seeds
	echo "compare.sh: $name ($n run(s))" >&2
	: >"$tmp/ns3.sum"; : >"$tmp/cc.sum"
	for seed in $(seq 1 "$n"); do
		# ns-3
		# shellcheck disable=SC2086
		if run_timed "$tmp/ns3.json" "$tmp/ns3.time" "$tmp/ns3.err" \
			"$build/dumbbell" --name="$name" --seed="$seed" $args; then
			read -r wall kb us ss <"$tmp/ns3.time"
			echo "$wall $((kb / 1024)) $(summarise "$tmp/ns3.json") $(awk -v u="$us" -v s="$ss" 'BEGIN { print u + s }')" >>"$tmp/ns3.sum"
			raw+=("ns3 $(jq -c . "$tmp/ns3.json")")
		else
			echo "compare.sh: ns-3 run of $name (seed $seed) failed:" >&2
			tail -5 "$tmp/ns3.err" >&2
			echo "n/a n/a n/a n/a n/a n/a n/a n/a n/a" >>"$tmp/ns3.sum"
		fi
		# cclab
		if [ "$cclab_ok" = 1 ] && [ -f "$yaml" ] &&
			run_timed "$tmp/cc.json" "$tmp/cc.time" "$tmp/cc.err" \
				"$build/cclab" run "$yaml" --seed "$seed" --json &&
			jq -e '.flows' "$tmp/cc.json" >/dev/null 2>&1; then
			read -r wall kb us ss <"$tmp/cc.time"
			echo "$wall $((kb / 1024)) $(summarise "$tmp/cc.json") $(awk -v u="$us" -v s="$ss" 'BEGIN { print u + s }')" >>"$tmp/cc.sum"
			raw+=("cclab $(jq -c . "$tmp/cc.json")")
		else
			if [ "$cclab_ok" = 1 ]; then
				if [ ! -f "$yaml" ]; then
					echo "compare.sh: $yaml missing" >&2
				else
					echo "compare.sh: cclab run of $name (seed $seed) failed:" >&2
					tail -5 "$tmp/cc.err" >&2
				fi
			fi
			echo "n/a n/a n/a n/a n/a n/a n/a n/a n/a" >>"$tmp/cc.sum"
		fi
	done
	col() { awk -v c="$2" '{ print $c }' "$1" | mean; }
	nw=$(col "$tmp/ns3.sum" 1); cw=$(col "$tmp/cc.sum" 1)
	nm=$(col "$tmp/ns3.sum" 2); cm=$(col "$tmp/cc.sum" 2)
	ng=$(col "$tmp/ns3.sum" 3); cg=$(col "$tmp/cc.sum" 3)
	nr=$(col "$tmp/ns3.sum" 4); cr=$(col "$tmp/cc.sum" 4)
	nq=$(col "$tmp/ns3.sum" 5); cq=$(col "$tmp/cc.sum" 5)
	nx=$(col "$tmp/ns3.sum" 6); cx=$(col "$tmp/cc.sum" 6)
	nf=$(col "$tmp/ns3.sum" 7); cf=$(col "$tmp/cc.sum" 7)
	ni=$(col "$tmp/ns3.sum" 8); ci=$(col "$tmp/cc.sum" 8)
	nc=$(col "$tmp/ns3.sum" 9); cc=$(col "$tmp/cc.sum" 9)
	rows+=("$(printf '%-30s %8s %8s %8s %13s %7s %7s %9s %9s %7s %13s %13s %13s %13s %11s %4s' \
		"$name" "$(fmt "$nw" 2)" "$(fmt "$cw" 3)" "$(ratio "$nw" "$cw")" "$(fmt "$nc" 2)/$(fmt "$cc" 2)" \
		"$(fmt "$nm" 0)" "$(fmt "$cm" 0)" "$(fmt "$ng" 3)" "$(fmt "$cg" 3)" "$(diffpct "$ng" "$cg")" \
		"$(fmt "$nr" 1)/$(fmt "$cr" 1)" "$(fmt "$nq" 1)/$(fmt "$cq" 1)" \
		"$(fmt "$nx" 0)/$(fmt "$cx" 0)" "$(fmt "$nf" 2)/$(fmt "$cf" 2)" "$(fmt "$ni" 2)/$(fmt "$ci" 2)" "$n")")
done

{
	echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uptime | sed 's/.*load/load/')"
	echo "$header"
	printf '%s\n' "${rows[@]}"
} | tee "$tmp/table.txt"

if [ -n "$out" ]; then
	{
		cat "$tmp/table.txt"
		echo "# raw JSON, one run per line"
		printf '%s\n' "${raw[@]}"
	} >"$out"
	echo "compare.sh: wrote $out" >&2
fi
exit 0
