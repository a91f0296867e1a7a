#!/usr/bin/env bash
# Issue 19's workload under valgrind's cachegrind: instructions and
# simulated cache misses per event at N = 100 and N = 1000, counted, not
# timed. The counts are the same on every run and every host (they depend
# only on the binary and the scenario), so a change to the simulator's
# instruction count or memory footprint shows at once, where CPU time
# needs tens of interleaved runs to resolve 1% on a shared machine.
#
# usage: [CCLAB_SIM=binary] bench/scale/cachesim.sh [--ll BYTES,WAYS] [--curve] [--annotate N] [--split] [--htsim]
#   CCLAB_SIM   count this cclab-sim binary instead of building the checkout
#   --ll        the simulated last-level cache (default 2097152,16: one core's
#               2 MiB L2 on the machine issue 19 is measured on; the
#               first-level data cache is 48 KiB, 12-way)
#   --curve     also count N = 1000's misses with a last-level cache of 1, 2,
#               3, 4 and 8 MiB: where the per-event working set fits
#   --annotate N  print the N source lines with the most last-level misses
#               at N = 1000 (where the footprint is)
#   --split     also count a scaled N = 100 run (100 Mbit/s, a 100-packet
#               queue, 100 s: N = 1000's per-flow dynamics with a tenth of
#               its state) and, with valgrind's branch model (a simple
#               predictor, not this processor's), mispredicted branches per
#               event: what of N = 1000's extra cost is its loss recovery
#               and what its memory
#   --htsim     also count htsim's dumbbell (bench/htsim/build/dumbbell,
#               bench/htsim/build.sh) on the same rows, with the same
#               caches: where the two simulators' counts part
#
# Needs valgrind (apt-get install valgrind); about a minute. Cachegrind
# models the caches as LRU and ignores prefetch instructions, so its misses
# are an upper bound on what the hardware, which prefetches, sees: use them
# to compare two builds, and confirm a gain with CPU time (run.sh, or
# perf stat interleaved). Instructions per event count exactly.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
ll="2097152,16"
curve=0
annotate=0
split=0
htsim=0
htsimbin="$repo/bench/htsim/build/dumbbell"
while [ $# -gt 0 ]; do
	case "$1" in
	--ll) ll="$2"; shift ;;
	--curve) curve=1 ;;
	--annotate) annotate="$2"; shift ;;
	--split) split=1 ;;
	--htsim) htsim=1 ;;
	-h | --help) sed -n '2,32p' "$0"; exit 0 ;;
	*) echo "cachesim.sh: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
command -v valgrind > /dev/null || { echo "cachesim.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
if [ "$htsim" = 1 ] && [ ! -x "$htsimbin" ]; then
	echo "cachesim.sh: --htsim needs htsim's dumbbell at $htsimbin (HTSIM_DIR=... bench/htsim/build.sh)" >&2
	exit 1
fi
[[ $ll =~ ^[0-9]+,[0-9]+$ ]] || { echo "cachesim.sh: --ll wants BYTES,WAYS (e.g. 2097152,16), got $ll" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "${CCLAB_SIM:-}" ]; then
	cp "$CCLAB_SIM" "$tmp/cclab-sim"
else
	(cd "$repo" && go build -o "$tmp/cclab-sim" ./cmd/cclab-sim)
fi

# count N LL [OUT [ARGS...]]: prints "events instructions D1misses LLmisses
# mispredicts" for the N-flow scenario (with cclab-sim's ARGS) with
# last-level cache LL (BYTES,WAYS); mispredicts only with --split. With N
# as htsim:N, htsim's dumbbell runs N flows instead, ARGS being its own.
count() {
	local n=$1 ll=$2 out=${3:-/dev/null}
	shift 3 2> /dev/null || shift $#
	local ev branch=no cmd
	[ "$split" = 1 ] && branch=yes
	if [[ $n == htsim:* ]]; then
		cmd=("$htsimbin" -n "${n#htsim:}" "$@")
	else
		cmd=("$tmp/cclab-sim" "$here/newreno-${n}flows.yaml" "$@")
	fi
	valgrind --tool=cachegrind --cache-sim=yes --branch-sim=$branch --I1=32768,8,64 --D1=49152,12,64 \
		--LL="$ll,64" --cachegrind-out-file="$out" --log-file="$tmp/vg" "${cmd[@]}" > "$tmp/out.txt" 2> "$tmp/err.txt"
	# The counted run reports its events, so the simulation runs once:
	# cclab's table in its first line ("(N events, ...)"), htsim's driver
	# on stderr ("events=N").
	if [[ $n == htsim:* ]]; then
		ev=$(sed -n 's/^events=\([0-9]*\)$/\1/p' "$tmp/err.txt")
	else
		ev=$(head -1 "$tmp/out.txt" | sed -n 's/.*(\([0-9]*\) events.*/\1/p')
	fi
	[ -n "$ev" ] || { echo "cachesim.sh: no event count in the output of ${cmd[*]}: $(head -c 300 "$tmp/out.txt" "$tmp/err.txt")" >&2; exit 1; }
	awk -v ev="$ev" '
	function num(s) { gsub(",", "", s); return s + 0 }
	/ I +refs:/ { ir = num($4) }
	/ D1 +misses:/ { d1 = num($4) }
	/ LLd misses:/ { ll = num($4) }
	/ Mispredicts:/ { mp = num($3) }
	END { print ev, ir, d1, ll, mp + 0 }' "$tmp/vg"
}

printf "%-9s %10s %12s %14s %14s" N events "instr/event" "D1 miss/event" "LL miss/event"
[ "$split" = 1 ] && printf " %14s" "mispred/event"
echo
echo "# $(date -u +%FT%TZ), last level ${ll%,*} bytes ${ll#*,}-way, first-level data 48 KiB 12-way"
rows=(100 1000)
[ "$split" = 1 ] && rows=(100 scaled 1000)
sims=(cclab)
[ "$htsim" = 1 ] && sims=(cclab htsim)
for sim in "${sims[@]}"; do
	[ "$htsim" = 1 ] && echo "# $sim"
	: > "$tmp/rows"
	for row in "${rows[@]}"; do
		n=$row
		args=()
		out=/dev/null
		if [ "$row" = scaled ]; then
			n=100
			args=(--set bottleneck.rate=100Mbps --set bottleneck.queue.limit=100 --set duration=100s)
			[ "$sim" = htsim ] && args=(-rate_mbps 100 -buffer_pkts 100 -time_s 100)
		elif [ "$row" = 1000 ] && [ "$annotate" -gt 0 ] && [ "$sim" = cclab ]; then
			out="$tmp/cg1000.out"
		fi
		[ "$sim" = htsim ] && n="htsim:$n"
		read -r ev ir d1 llm mp < <(count "$n" "$ll" "$out" "${args[@]}")
		echo "$row $ev $ir $d1 $llm" >> "$tmp/rows"
		awk -v n="$row" -v e="$ev" -v i="$ir" -v d="$d1" -v l="$llm" -v m="$mp" -v s="$split" 'BEGIN {
			printf "%-9s %10d %12.1f %14.2f %14.2f", n, e, i / e, d / e, l / e
			if (s == 1) printf " %14.2f", m / e
			printf "\n" }'
	done
	awk '{ ipe[$1] = $3 / $2 } END {
		printf "# instructions per event, N = 1000 over N = 100: %.3fx\n", ipe[1000] / ipe[100]
		if ("scaled" in ipe) printf "#   scaled N = 100 over N = 100: %.3fx, N = 1000 over scaled: %.3fx\n", ipe["scaled"] / ipe[100], ipe[1000] / ipe["scaled"] }' "$tmp/rows"
done

if [ "$curve" = 1 ]; then
	echo "# N = 1000, last-level misses per event by the last level's size:"
	for size in 1048576,16 2097152,16 3145728,12 4194304,16 8388608,16; do
		read -r ev _ _ llm _ < <(count 1000 "$size" /dev/null)
		awk -v s="${size%,*}" -v e="$ev" -v l="$llm" 'BEGIN { printf "#   %5.1f MiB  %6.2f\n", s / 1048576, l / e }'
	done
fi

if [ "$annotate" -gt 0 ]; then
	echo "# N = 1000, the $annotate source lines with the most last-level data misses (reads + writes):"
	cg_annotate --show=DLmr,DLmw --sort=DLmr --auto=yes "$tmp/cg1000.out" 2> /dev/null | python3 -c '
import re, sys
top = int(sys.argv[1])
col = r"\s*(?:([\d,]+)(?: \(\s*[\d.]+%\))?|\.)"
row = re.compile("^" + col + col + r"\s(.*)$")
rows, name, line = [], None, 0
for text in sys.stdin:
    text = text.rstrip("\n")
    if text.startswith("-- Auto-annotated source: "):
        name = text.rsplit("/", 1)[-1]
        continue
    if text.endswith("events annotated"):
        break
    m = re.match(r"^-- line (\d+) ", text)
    if m:
        line = int(m.group(1))
        continue
    m = row.match(text) if name else None
    if m:
        misses = sum(int(g.replace(",", "")) for g in m.groups()[:2] if g)
        if misses:
            rows.append((misses, "%s:%d" % (name, line), m.group(3).strip()[:80]))
        line += 1
for misses, where, src in sorted(rows, reverse=True)[:top]:
    print("#   %9d  %-24s %s" % (misses, where, src))
' "$annotate"
fi
