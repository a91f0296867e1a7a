#!/usr/bin/env bash
# Installs what cclab's Python package and its tests need, on a fresh
# Debian 12 machine, into python/.venv (idempotent, quiet, fails loudly).
#
# PyTorch comes from Debian (python3-torch, CPU-only, 1.13.1): on this
# machine it installs in about 2-3 minutes, where PyPI's Linux torch wheel
# pulls 5.3 GB of CUDA libraries and took 10 minutes (docs/python.md).
# The venv sees Debian's torch through --system-site-packages.
# stable-baselines3 is installed without its dependency check because
# Debian's torch reports its version as 1.13.0a0, which pip orders before
# SB3's "torch>=1.13" although it is the 1.13 release.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
need=()
for p in python3-torch python3-venv; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq -o DPkg::Lock::Timeout=600 "${need[@]}" >/dev/null
fi
venv=python/.venv
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv --system-site-packages "$venv"
fi
# Skip pip (minutes of resolution even when nothing changes) if the pins
# are those of the last successful run.
stamp="$venv/.cclab-setup"
want=$(cat python/requirements-ci.txt python/pyproject.toml "$0" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
  "${pip[@]}" install -r python/requirements-ci.txt
  "${pip[@]}" install --no-deps stable-baselines3==2.4.1
  "${pip[@]}" install --no-deps -e ./python
  echo "$want" > "$stamp"
fi
"$venv/bin/python" -c 'import torch, stable_baselines3, ray, gymnasium, cclab; print("python setup: torch", torch.__version__, "sb3", stable_baselines3.__version__, "ray", ray.__version__, "gymnasium", gymnasium.__version__)'
