#!/usr/bin/env bash
# Setup for cmd/cclab-sim's TestSameOutputOnArm64: qemu-user's arm64
# emulator (Debian's qemu-user-static), which runs the simulator built for
# linux/arm64 on this amd64 host. The test calls qemu-aarch64-static by
# name, so no binfmt_misc registration is needed. Idempotent and quiet;
# without root the test skips and says why.
set -euo pipefail
command -v qemu-aarch64-static >/dev/null 2>&1 && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "setup-qemu: qemu-aarch64-static missing and not root: the arm64 comparison will skip" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends qemu-user-static >/dev/null
qemu-aarch64-static --version >/dev/null
