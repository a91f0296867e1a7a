#!/usr/bin/env bash
# Side-by-side speed comparison of cclab's learning core with PyTorch CPU on
# this machine, at the same network sizes and with the same computations
# (bench/rl/torch_bench.py mirrors cclab's SAC, PPO and MLP updates).
#
#   bash bench/rl/run.sh [seconds-per-measurement] [repeats]
#
# It installs what it needs (Debian's python3-torch and libopenblas-dev,
# root and apt required), builds cclab twice (the default pure-Go build,
# whose matrix kernels are Go assembly on AVX2 CPUs; -tags openblas) and
# runs every measurement with 1 and 2 threads, the three back to back
# (default, OpenBLAS, PyTorch) so that they see the same background load.
# One-thread runs are pinned to one core (taskset -c 1, GOMAXPROCS=1,
# OPENBLAS_NUM_THREADS=1, torch.set_num_threads(1)).
#
# Two rates are printed per program: updates per CPU-second of the process
# (robust when other jobs share the cores: time spent waiting for a core
# is not counted) and updates per wall-clock second. The ratio columns use
# the CPU-second rates. PyTorch runs under Debian's own /usr/bin/python3
# (python3-torch does not import under other Pythons). OPENBLAS_CORETYPE
# and OPENBLAS_L2_SIZE are left as the machine sets them: they affect
# OpenBLAS and PyTorch alike.
set -euo pipefail
secs=${1:-10}
reps=${2:-1}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py=/usr/bin/python3

if ! $py -c 'import torch' 2>/dev/null || ! [ -e /usr/include/x86_64-linux-gnu/openblas-pthread/cblas.h -o -e /usr/include/cblas.h ]; then
  echo "installing python3-torch and libopenblas-dev..." >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-torch libopenblas-dev >/dev/null
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/cclab-go" ./cmd/cclab && go build -tags openblas -o "$tmp/cclab-openblas" ./cmd/cclab)
echo "# $("$tmp/cclab-go" rl speed --algo mlp --obs 4 --hidden 8 --batch 8 --seconds 0.01 | sed -E 's/.*backend ([^:]*):.*/default backend: \1/'); $($py -c 'import torch; print("torch", torch.__version__)'); $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

# rates LINE KIND: prints "per-CPU-second per-wall-second" from a line
# "...: R updates/s (N in W s; C s CPU)" (infer: microseconds per action,
# CPU and wall).
rates() {
  sed -E 's/.*\(([0-9]+) in ([0-9.]+) s; ([0-9.]+) s CPU\).*/\1 \2 \3/' <<<"$1" |
    awk -v k="$2" '{ if (k == "infer") printf "%.1f %.1f", $3/$1*1e6, $2/$1*1e6; else printf "%.2f %.2f", ($3 > 0 ? $1/$3 : 0), $1/$2 }'
}
run() { # thr cmd...
  local thr=$1; shift
  if [ "$thr" = 1 ]; then
    GOMAXPROCS=1 OPENBLAS_NUM_THREADS=1 taskset -c 1 "$@"
  else
    GOMAXPROCS=$thr OPENBLAS_NUM_THREADS=$thr "$@"
  fi
}

printf "%-5s %-4s %-8s %-5s %-3s | %9s %9s %9s | %6s %6s | %9s %9s %9s\n" \
  kind obs hidden batch thr "go/cpu-s" "oblas" "torch" "go/tor" "go/obl" "go/wall-s" "oblas" "torch"
while read -r kind obs hidden batch; do
  for thr in 1 2; do
    for ((r = 0; r < reps; r++)); do
      args=(--obs "$obs" --hidden "$hidden" --batch "$batch" --seconds "$secs")
      read -r gc gw <<<"$(rates "$(run "$thr" "$tmp/cclab-go" rl speed --algo "$kind" "${args[@]}")" "$kind")"
      read -r oc ow <<<"$(rates "$(run "$thr" "$tmp/cclab-openblas" rl speed --algo "$kind" "${args[@]}")" "$kind")"
      read -r tc tw <<<"$(rates "$(run "$thr" $py "$here/torch_bench.py" "$kind" "${args[@]}" --threads "$thr")" "$kind")"
      printf "%-5s %-4s %-8s %-5s %-3s | %9s %9s %9s | %6s %6s | %9s %9s %9s\n" "$kind" "$obs" "$hidden" "$batch" "$thr" \
        "$gc" "$oc" "$tc" "$(awk -v a="$gc" -v b="$tc" -v k="$kind" 'BEGIN{ if (k == "infer") printf "%.2f", b/a; else printf "%.2f", a/b }')" \
        "$(awk -v a="$gc" -v b="$oc" -v k="$kind" 'BEGIN{ if (k == "infer") printf "%.2f", b/a; else printf "%.2f", a/b }')" "$gw" "$ow" "$tw"
    done
  done
done <<'CASES'
mlp 980 256,256 256
sac 980 400,300 512
sac 980 400,300 256
sac 3 256,256 256
ppo 980 64,64 64
ppo 980 256,256 256
infer 980 400,300 1
CASES
echo "(mlp/sac/ppo: updates per CPU-second and per wall-clock second, higher is better;"
echo " infer: microseconds per action, CPU and wall, lower is better; go/tor, go/obl: the default"
echo " build's speed relative to PyTorch and OpenBLAS per CPU-second, > 1 means the default is faster)"
