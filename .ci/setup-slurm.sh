#!/usr/bin/env bash
# Installs Debian's slurm-wlm and munge for deploy/slurm's cluster test
# (the test starts and stops its own one-node cluster).
set -euo pipefail
exec "$(dirname "$0")/../deploy/slurm/testcluster.sh" install
