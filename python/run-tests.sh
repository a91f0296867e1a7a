#!/usr/bin/env bash
# Runs the Python tests (after .ci/setup-python.sh). The tests build the
# cclab binary from this checkout with `go build` unless CCLAB_BINARY names
# one. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")"
py=.venv/bin/python
if [ ! -x "$py" ]; then
  echo "python/run-tests.sh: no python/.venv; run .ci/setup-python.sh first" >&2
  exit 1
fi
exec "$py" -m pytest -q "$@" tests
