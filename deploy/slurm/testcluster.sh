#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, for testing deploy/slurm for
# real: munged, slurmctld and slurmd from Debian's slurm-wlm, configured in a
# folder of their own (nothing under /etc/slurm is written), started and
# stopped by this script.
#
#   testcluster.sh install      apt-get install slurm-wlm and munge if missing
#   testcluster.sh start DIR    configure and start a cluster whose state,
#                               logs and pids live in DIR; prints the line
#                               `export SLURM_CONF=DIR/slurm.conf` for the
#                               clients (sbatch, squeue, scancel, sacct)
#   testcluster.sh stop DIR     cancel every job, stop the daemons, and
#                               remove DIR's state
#
# It needs root (slurmd runs jobs as their submitter, and munged's key is
# root-readable only). The node is this machine under its own short host
# name, with every CPU it has and a quarter of its memory; the one partition
# is named "test".
set -euo pipefail

die() { echo "testcluster: $*" >&2; exit 1; }

install() {
  if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null; then
    return 0
  fi
  [ "$(id -u)" = 0 ] || die "installing slurm-wlm needs root"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq slurm-wlm munge >/dev/null
}

wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...
  local secs=$1 what=$2; shift 2
  for _ in $(seq 1 $((secs * 10))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  die "timed out after ${secs}s waiting for $what"
}

# free_port prints a TCP port nothing listens on, picked at random so two
# test clusters on one machine (CI beside a developer's run) do not collide.
free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$((20000 + RANDOM % 40000))
    if ! ss -Hltn "sport = :$p" | grep -q . && [ "$p" != "${1:-}" ]; then
      echo "$p"; return 0
    fi
  done
  die "no free TCP port found for the test cluster"
}

start() {
  local dir=$1
  [ "$(id -u)" = 0 ] || die "a test cluster needs root"
  command -v slurmctld >/dev/null || die "slurm-wlm is not installed (run: $0 install)"
  mkdir -p "$dir"/{state,spool,log,munge}
  dir=$(cd "$dir" && pwd)
  local host cpus mem
  host=$(hostname -s)
  cpus=$(nproc)
  mem=$(( $(awk '/MemTotal/ {print int($2/1024)}' /proc/meminfo) / 4 ))
  local ctld_port slurmd_port
  ctld_port=$(free_port)
  slurmd_port=$(free_port "$ctld_port")

  # munge: a key of our own and a socket of our own, so a munged the
  # machine may already run is left alone.
  if [ ! -s "$dir/munge/munge.key" ]; then
    dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
    chmod 400 "$dir/munge/munge.key"
  fi
  munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munge.seed"

  cat >"$dir/slurm.conf" <<EOF
# Written by deploy/slurm/testcluster.sh: a one-node cluster for tests.
ClusterName=cclabtest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerParameters=defer_batch
MinJobAge=300
InactiveLimit=0
KillWait=5
Waittime=0
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
  export SLURM_CONF="$dir/slurm.conf"
  slurmctld -f "$SLURM_CONF" -i
  wait_for 20 "slurmctld to answer" scontrol ping
  slurmd -f "$SLURM_CONF"
  wait_for 30 "node $host to be idle" sh -c "sinfo -h -n $host -o %t | grep -Eq '^(idle|mix)'"
  echo "export SLURM_CONF=$SLURM_CONF"
}

stop() {
  local dir=$1
  [ -f "$dir/slurm.conf" ] || return 0
  export SLURM_CONF="$dir/slurm.conf"
  scancel --full --quiet --user="$(id -un)" 2>/dev/null || true
  for d in slurmd slurmctld; do
    local pidf="$dir/$d.pid"
    if [ -s "$pidf" ]; then
      local pid; pid=$(cat "$pidf")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
  done
  if [ -s "$dir/munge/munged.pid" ]; then
    local pid; pid=$(cat "$dir/munge/munged.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  # Jobs' steps (slurmstepd) end with slurmd; any left would hold $dir.
  pkill -f "slurmstepd.*$dir" 2>/dev/null || true
  rm -rf "$dir/state" "$dir/spool" "$dir/munge"
}

case "${1:-}" in
  install) install ;;
  start) [ $# = 2 ] || die "usage: $0 start DIR"; start "$2" ;;
  stop) [ $# = 2 ] || die "usage: $0 stop DIR"; stop "$2" ;;
  *) die "usage: $0 install | start DIR | stop DIR" ;;
esac
