#!/usr/bin/env bash
# Setup for the emulator's tests (emu/...): iproute2's ip command and the
# TUN device. Idempotent and quiet; fails loudly. Without root the emulator
# tests skip with a visible reason, so this only matters where CI runs as
# root.
set -euo pipefail
if ! command -v ip >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup-emu: ip (iproute2) missing and not root: emulator tests will skip" >&2
    exit 0
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq iproute2 >/dev/null
fi
ip -V >/dev/null
if [ ! -e /dev/net/tun ] && [ "$(id -u)" -eq 0 ]; then
  mkdir -p /dev/net
  mknod /dev/net/tun c 10 200
  chmod 0666 /dev/net/tun
fi
