#!/usr/bin/env bash
# A single-machine Slurm for tests: Debian's slurmctld + slurmd in a private directory, with their own ports,
# no munge (auth/none), no cgroups (proctrack/linuxproc, task/none). Needs root and the packages slurmctld
# and slurmd (slurm-client comes with them).
#
#   slurm-local.sh start DIR [--cpus N]   write DIR/slurm.conf, start both daemons, wait until the node is idle
#   slurm-local.sh stop DIR               cancel every job, stop the daemons (also after a failed start)
#   slurm-local.sh env DIR                print `export SLURM_CONF=...`: the line that points srun/sbatch at it
#
# The node is called "bn0" and has N CPUs (default 8: more than this machine's cores, so that `srun -n 4`
# fits on a 2-core machine; slurmd is told to trust the file, not the hardware). Several may run at once
# in different directories: each picks free ports. The first job ID is random, so that jobs of two
# instances do not derive the same default store port (20000 + job ID % 10000).
set -euo pipefail

die() {
  echo "slurm-local: error: $*" >&2
  exit 1
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

write_conf() { # dir, cpus
  local dir=$1 cpus=$2 controller
  controller=$(hostname -s)  # slurmctld checks that it runs on SlurmctldHost
  mkdir -p "$dir/state" "$dir/spool"
  cat > "$dir/slurm.conf.tmp" << EOF
# Written by scripts/slurm-local.sh: a one-node Slurm for tests.
ClusterName=balancenet
SlurmctldHost=$controller(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
# Batch jobs start at once (not after the default 3 s), and sbatch --wait polls every 2 s instead of sleeping
# 2, 8, 32 s: it grows its sleep only while the sleep is under MinJobAge / 3.
SchedulerParameters=batch_sched_delay=0
MinJobAge=5
FirstJobId=$((RANDOM % 9000 + 1000))
MailProg=/bin/true
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
NodeName=bn0 NodeAddr=127.0.0.1 NodeHostname=$controller CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=bn0 Default=YES MaxTime=INFINITE State=UP
EOF
  mv "$dir/slurm.conf.tmp" "$dir/slurm.conf"
}

start() { # dir, cpus
  local dir=$1 cpus=$2
  [ "$(id -u)" -eq 0 ] || die "needs root (slurmd starts jobs as their user)"
  local p
  for p in slurmctld slurmd sinfo; do
    command -v "$p" > /dev/null || die "no '$p' command (Debian packages slurmctld and slurmd)"
  done
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  write_conf "$dir" "$cpus"
  # A failed start leaves nothing running.
  trap 'stop "$dir"' ERR
  slurmctld -f "$dir/slurm.conf" -c -i
  slurmd -f "$dir/slurm.conf" -N bn0
  local i state=""
  for ((i = 0; i < 100; i++)); do
    state=$(SLURM_CONF=$dir/slurm.conf sinfo -h -N -o %t 2> /dev/null || true)
    [ "$state" = idle ] && { trap - ERR; return 0; }
    sleep 0.1
  done
  echo "slurm-local: node state '$state' after 10 s; the logs:" >&2
  tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
  stop "$dir"
  exit 1
}

# Whether pid $1 still runs (a zombie does not: where PID 1 does not reap, a daemon stays one after it ended).
running() {
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2> /dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

# Ends the daemon whose pid file is $1: SIGTERM, then SIGKILL after 5 s.
end_daemon() {
  local pid i
  pid=$(cat "$1" 2> /dev/null) || return 0
  [[ $pid =~ ^[0-9]+$ ]] || return 0
  kill -TERM "$pid" 2> /dev/null || return 0
  for ((i = 0; i < 50; i++)); do
    running "$pid" || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2> /dev/null || true
}

stop() { # dir
  local dir=$1 i pids
  [ -f "$dir/slurm.conf" ] || return 0
  export SLURM_CONF=$dir/slurm.conf
  # Jobs first, while slurmd can still end their steps; then what is left of them, by pid.
  if scancel --full --quiet --user=root 2> /dev/null; then
    for ((i = 0; i < 50; i++)); do
      [ -z "$(squeue -h -o %i 2> /dev/null)" ] && break
      sleep 0.1
    done
  fi
  pids=$(scontrol listpids 2> /dev/null | awk 'NR > 1 {print $1}' || true)
  for i in $pids; do kill -KILL "$i" 2> /dev/null || true; done
  end_daemon "$dir/slurmd.pid"
  end_daemon "$dir/slurmctld.pid"
}

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: slurm-local.sh start|stop|env DIR [--cpus N]"
cpus=8
if [ "${3:-}" = --cpus ]; then
  cpus=${4:?--cpus needs a value}
  [[ $cpus =~ ^[1-9][0-9]*$ ]] || die "--cpus must be a positive integer, not '$cpus'"
fi
case "$cmd" in
  start) start "$dir" "$cpus" ;;
  stop) stop "$dir" ;;
  env) echo "export SLURM_CONF=$(cd "$dir" && pwd)/slurm.conf" ;;
  *) die "unknown command '$cmd' (start, stop or env)" ;;
esac
