#!/usr/bin/env bash
# Side-by-side speed comparison of cclab's learning core with PyTorch CPU on
# this machine, at the same network sizes and with the same computations
# (bench/rl/torch_bench.py mirrors cclab's SAC, PPO and MLP updates).
#
#   bash bench/rl/run.sh [seconds-per-measurement]
#
# It installs what it needs (Debian's python3-torch and libopenblas-dev,
# root and apt required), builds cclab twice (pure Go; -tags openblas) and
# runs each measurement with 1 and 2 threads, alternating cclab and PyTorch
# so both see the same background load. PyTorch runs under Debian's own
# /usr/bin/python3 (python3-torch does not import under other Pythons).
# OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are left as the machine sets them:
# they affect OpenBLAS and PyTorch alike.
set -euo pipefail
secs=${1:-10}
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

rate() { sed -E 's/.*: ([0-9.]+) (updates\/s|us\/op).*/\1/'; }

printf "%-6s %-5s %-16s %-6s %-3s %12s %12s %12s\n" kind obs hidden batch thr "cclab-go" "cclab-oblas" "pytorch"
while read -r kind obs hidden batch; do
  for thr in 1 2; do
    g=$(GOMAXPROCS=$thr "$tmp/cclab-go" rl speed --algo "$kind" --obs "$obs" --hidden "$hidden" --batch "$batch" --seconds "$secs" | rate)
    o=$(OPENBLAS_NUM_THREADS=$thr GOMAXPROCS=$thr "$tmp/cclab-openblas" rl speed --algo "$kind" --obs "$obs" --hidden "$hidden" --batch "$batch" --seconds "$secs" | rate)
    t=$($py "$here/torch_bench.py" "$kind" --obs "$obs" --hidden "$hidden" --batch "$batch" --threads "$thr" --seconds "$secs" | rate)
    printf "%-6s %-5s %-16s %-6s %-3s %12s %12s %12s\n" "$kind" "$obs" "$hidden" "$batch" "$thr" "$g" "$o" "$t"
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
echo "(mlp/sac/ppo: updates per second, higher is better; infer: microseconds per action, lower is better)"
