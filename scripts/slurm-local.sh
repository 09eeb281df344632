#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for running a campaign as a
# Slurm array job the way a cluster would (docs/scale.md). Not for CI.
#
#   scripts/slurm-local.sh start    installs slurm-wlm and munge if missing
#                                   (apt), starts munged, slurmctld, slurmd
#   scripts/slurm-local.sh stop     stops them
#   scripts/slurm-local.sh env      prints the export line for clients
#
# Its configuration and state live in /tmp/ringsim-slurm (SLURM_CONF points
# there); /etc/slurm is not touched. One node, this machine's host name,
# all its cores, one partition "ringsim".
set -euo pipefail
dir=/tmp/ringsim-slurm
conf="$dir/slurm.conf"

start() {
  if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    sudo_=""; [ "$(id -u)" -eq 0 ] || sudo_=sudo
    $sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends slurm-wlm munge >/dev/null
  fi
  mkdir -p "$dir/ctld" "$dir/d" "$dir/log"
  local host cpus
  host=$(hostname -s)
  cpus=$(nproc)
  cat >"$conf" <<CONF
ClusterName=ringsim
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/d
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=ringsim Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  if ! pgrep -x munged >/dev/null; then
    mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null || true
    if [ "$(id -u)" -eq 0 ]; then runuser -u munge -- /usr/sbin/munged; else /usr/sbin/munged; fi
  fi
  pgrep -x slurmctld >/dev/null || SLURM_CONF="$conf" slurmctld
  pgrep -x slurmd >/dev/null || SLURM_CONF="$conf" slurmd
  for _ in $(seq 1 30); do
    if SLURM_CONF="$conf" sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
      echo "slurm-local: up (export SLURM_CONF=$conf)"
      return 0
    fi
    sleep 1
  done
  echo "slurm-local: error: the node did not come up in 30 s: see $dir/log" >&2
  return 1
}

stop() {
  pkill -x slurmd 2>/dev/null || true
  pkill -x slurmctld 2>/dev/null || true
  pkill -x munged 2>/dev/null || true
  echo "slurm-local: stopped"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  env) echo "export SLURM_CONF=$conf" ;;
  *) echo "usage: scripts/slurm-local.sh start|stop|env" >&2; exit 64 ;;
esac
