#!/usr/bin/env bash
# Registers congestion controls this kernel was built without (Hybla,
# Westwood+) as BPF struct_ops programs, so that cclab's emulator can run
# the kernel's own TCP with them and compare the simulator's controllers
# (docs/fidelity.md, "Hybla and Westwood+ in the kernel"). Root; needs
# clang, bpftool and libbpf-dev (Debian: apt-get install clang bpftool
# libbpf-dev) and a kernel with BTF (/sys/kernel/btf/vmlinux).
#
#   bench/kernelcc/load.sh [hybla] [westwood]   build and register (default: both)
#   bench/kernelcc/load.sh --unload [NAME]...   unregister what this script registered
#                                               (default: both)
#
# Registration outlives the script: unload when done. A name the kernel
# already offers (a module) is left alone.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
avail=/proc/sys/net/ipv4/tcp_available_congestion_control
all=(hybla westwood)

if [ "$(id -u)" != 0 ]; then
  echo "bench/kernelcc/load.sh: registering a congestion control needs root" >&2
  exit 2
fi
for tool in clang bpftool; do
  if ! command -v "$tool" > /dev/null; then
    echo "bench/kernelcc/load.sh: $tool not found (Debian: apt-get install clang bpftool libbpf-dev)" >&2
    exit 2
  fi
done

# run runs a command quietly, printing its output only if it fails.
run() {
  local out
  if ! out=$("$@" 2>&1); then
    echo "$out" >&2
    exit 1
  fi
}

registered() { bpftool struct_ops show 2>/dev/null | awk '{print $2}' | grep -qx "$1"; }

if [ "${1:-}" = "--unload" ]; then
  shift
  names=("$@")
  [ ${#names[@]} -gt 0 ] || names=("${all[@]}")
  for name in "${names[@]}"; do
    case " ${all[*]} " in
    *" $name "*) ;;
    *)
      echo "bench/kernelcc/load.sh: no program for $name (accepted: ${all[*]})" >&2
      exit 2
      ;;
    esac
    if registered "$name"; then
      run bpftool struct_ops unregister name "$name"
      echo "unregistered $name"
    fi
  done
  exit 0
fi

names=("$@")
[ ${#names[@]} -gt 0 ] || names=("${all[@]}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ ! -r /sys/kernel/btf/vmlinux ]; then
  echo "bench/kernelcc/load.sh: this kernel has no BTF (/sys/kernel/btf/vmlinux), which struct_ops programs need" >&2
  exit 2
fi
bpftool btf dump file /sys/kernel/btf/vmlinux format c > "$work/vmlinux.h"
case "$(uname -m)" in
x86_64) arch=x86 ;;
aarch64) arch=arm64 ;;
*) arch="$(uname -m)" ;;
esac
for name in "${names[@]}"; do
  case " ${all[*]} " in
  *" $name "*) ;;
  *)
    echo "bench/kernelcc/load.sh: no program for $name (accepted: ${all[*]}, --unload)" >&2
    exit 2
    ;;
  esac
  if registered "$name"; then
    echo "$name: already registered"
    continue
  fi
  if grep -qw "$name" "$avail"; then
    echo "$name: the kernel already offers it (a module); left alone"
    continue
  fi
  run clang -O2 -g -target bpf -D__TARGET_ARCH_"$arch" -I"$work" -I"$here" \
    -c "$here/$name.bpf.c" -o "$work/$name.bpf.o"
  run bpftool struct_ops register "$work/$name.bpf.o"
  echo "registered $name"
done
echo "the kernel offers: $(cat "$avail")"
