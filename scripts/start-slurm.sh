#!/usr/bin/env bash
# Start a real, single-machine Slurm cluster for the `slurm` tests.
#
#   cluster  valorch-test, partition "valorch" (default)
#   nodes    valorch-rocm0  Features=rocm,gfx942  Gres=gpu:mi300x:2  CPUs=2
#            valorch-cuda0  Features=cuda,sm_90   Gres=gpu:h100:1    CPUs=1
#
# Both nodes are slurmd instances on this machine (`slurmd -N <name>`, one port
# each). The GPUs are character devices cloned from /dev/null (major 1, minor 3):
# slurmd only assigns GPU indices (SLURM_JOB_GPUS, CUDA/ROCR_VISIBLE_DEVICES)
# for GRES whose File= is a device node; plain files are refused.
#
# Idempotent: a second run with the same configuration only checks that the
# nodes are idle. Run as root. Installs Debian's slurm-wlm and munge if missing.
# The daemons it starts are recorded in $STATE/pids; scripts/stop-slurm.sh stops
# exactly those.
#
# Environment:
#   VALORCH_SLURM_DIR        config dir (default /etc/slurm, which Debian's
#                            clients read; otherwise export SLURM_CONF=$DIR/slurm.conf)
#   VALORCH_SLURM_STATE      state dir (default /var/lib/valorch-slurm)
#   VALORCH_SLURM_LOGS       log dir (default /var/log/slurm)
#   VALORCH_SLURM_PORT_BASE  slurmctld port; the slurmd ports follow (default 17817)
#   VALORCH_SLURM_WAIT       seconds to wait for idle nodes (default 60)
set -euo pipefail

CONF_DIR=${VALORCH_SLURM_DIR:-/etc/slurm}
STATE=${VALORCH_SLURM_STATE:-/var/lib/valorch-slurm}
LOGS=${VALORCH_SLURM_LOGS:-/var/log/slurm}
PORT=${VALORCH_SLURM_PORT_BASE:-17817}
WAIT=${VALORCH_SLURM_WAIT:-60}
MARKER="# managed by valorch scripts/start-slurm.sh"
NODES=(valorch-rocm0 valorch-cuda0)
export SLURM_CONF="$CONF_DIR/slurm.conf"

die() { echo "start-slurm: error: $*" >&2; exit 1; }
say() { echo "start-slurm: $*" >&2; }

[ "$(id -u)" = 0 ] || die "run as root (installs packages, starts slurmctld/slurmd/munged)"

# --- packages ---------------------------------------------------------------
missing=()
command -v slurmctld >/dev/null 2>&1 || missing+=(slurmctld)
command -v slurmd >/dev/null 2>&1 || missing+=(slurmd)
command -v sbatch >/dev/null 2>&1 || missing+=(slurm-client)
command -v munged >/dev/null 2>&1 || missing+=(munge)
if [ ${#missing[@]} -gt 0 ]; then
  say "installing slurm-wlm munge (missing: ${missing[*]})"
  apt-get update -qq || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    slurm-wlm munge >/tmp/valorch-slurm-apt.log 2>&1 \
    || { tail -n 20 /tmp/valorch-slurm-apt.log >&2; die "apt-get install slurm-wlm munge failed (log: /tmp/valorch-slurm-apt.log)"; }
fi

# --- munge ------------------------------------------------------------------
if [ ! -s /etc/munge/munge.key ]; then
  say "creating /etc/munge/munge.key"
  install -d -o munge -g munge -m 0700 /etc/munge
  if command -v mungekey >/dev/null 2>&1; then
    mungekey --create --keyfile=/etc/munge/munge.key --force
  else
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
  fi
  chown munge:munge /etc/munge/munge.key
  chmod 0400 /etc/munge/munge.key
fi

mkdir -p "$STATE" "$LOGS"
PIDS="$STATE/pids"
touch "$PIDS"

# A recorded pid counts only while it still runs the same program (pids are reused).
alive() { # name pid
  [ -n "${2:-}" ] && [ "$(cat "/proc/$2/comm" 2>/dev/null)" = "$1" ]
}
recorded() { # key -> pid
  awk -v k="$1" '$1 == k { print $3 }' "$PIDS" | tail -n 1
}
record() { # key comm pid
  { grep -v "^$1 " "$PIDS" || true; echo "$1 $2 $3"; } >"$PIDS.tmp"
  mv "$PIDS.tmp" "$PIDS"
}

if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  say "starting munged"
  install -d -o munge -g munge -m 0755 /run/munge
  runuser -u munge -- /usr/sbin/munged || die "munged did not start; see /var/log/munge/munged.log"
  for _ in $(seq 1 50); do
    munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break
    sleep 0.1
  done
  munge -n | unmunge >/dev/null || die "munged started but credentials do not round-trip"
  record munged munged "$(cat /run/munge/munged.pid)"
fi

# --- configuration ------------------------------------------------------------
if [ -e "$CONF_DIR/slurm.conf" ] && ! grep -qF "$MARKER" "$CONF_DIR/slurm.conf"; then
  die "$CONF_DIR/slurm.conf exists and was not written by this script; set VALORCH_SLURM_DIR to another directory"
fi
mkdir -p "$CONF_DIR" "$STATE/ctld" "$STATE/gpu"
for n in "${NODES[@]}"; do mkdir -p "$STATE/spool/$n"; done
for i in 0 1 2; do
  dev="$STATE/gpu/gpu$i"
  if [ ! -c "$dev" ]; then
    rm -f "$dev"
    mknod -m 0666 "$dev" c 1 3 || die "cannot create the fake GPU device $dev (mknod; is the filesystem mounted nodev?)"
  fi
done

host=$(hostname -s)
new_conf=$(cat <<EOF
$MARKER
# A test cluster: two slurmd instances on one machine, fake GPUs.
ClusterName=valorch-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/spool/%n
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd-%n.pid
SlurmctldLogFile=$LOGS/valorch-slurmctld.log
SlurmdLogFile=$LOGS/valorch-slurmd-%n.log
MailProg=/bin/true
MpiDefault=none
SwitchType=switch/none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# The nodes declare fewer/more CPUs than the machine has: trust the config.
SlurmdParameters=config_overrides
ReturnToService=2
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
GresTypes=gpu
MinJobAge=600
NodeName=valorch-rocm0 NodeHostname=$host NodeAddr=127.0.0.1 Port=$((PORT + 1)) CPUs=2 Features=rocm,gfx942 Gres=gpu:mi300x:2 State=UNKNOWN
NodeName=valorch-cuda0 NodeHostname=$host NodeAddr=127.0.0.1 Port=$((PORT + 2)) CPUs=1 Features=cuda,sm_90 Gres=gpu:h100:1 State=UNKNOWN
PartitionName=valorch Nodes=valorch-rocm0,valorch-cuda0 Default=YES MaxTime=INFINITE State=UP
EOF
)
new_gres=$(cat <<EOF
$MARKER
AutoDetect=off
NodeName=valorch-rocm0 Name=gpu Type=mi300x File=$STATE/gpu/gpu[0-1]
NodeName=valorch-cuda0 Name=gpu Type=h100 File=$STATE/gpu/gpu2
EOF
)
changed=0
if [ "$(cat "$CONF_DIR/slurm.conf" 2>/dev/null || true)" != "$new_conf" ]; then
  printf '%s\n' "$new_conf" >"$CONF_DIR/slurm.conf"; changed=1
fi
if [ "$(cat "$CONF_DIR/gres.conf" 2>/dev/null || true)" != "$new_gres" ]; then
  printf '%s\n' "$new_gres" >"$CONF_DIR/gres.conf"; changed=1
fi

# --- daemons ------------------------------------------------------------------
stop_key() { # key
  local pid comm
  pid=$(recorded "$1"); comm=$(awk -v k="$1" '$1 == k { print $2 }' "$PIDS" | tail -n 1)
  if alive "$comm" "$pid"; then
    kill "$pid"
    for _ in $(seq 1 50); do alive "$comm" "$pid" || break; sleep 0.1; done
  fi
}
if [ "$changed" = 1 ]; then
  for n in "${NODES[@]}"; do stop_key "slurmd:$n"; done
  stop_key slurmctld
fi

# Foreground mode (-D) in a new session: $! is the daemon's own pid, and the
# daemon survives the shell (and the pytest process) that started it.
start_daemon() { # key comm log argv...
  local key=$1 comm=$2 log=$3; shift 3
  if alive "$comm" "$(recorded "$key")"; then return 0; fi
  setsid "$@" >"$log" 2>&1 </dev/null &
  record "$key" "$comm" "$!"
  sleep 0.5
  alive "$comm" "$!" || { tail -n 20 "$log" >&2; die "$key exited at start (log: $log)"; }
}

if ! alive slurmctld "$(recorded slurmctld)" && pgrep -x slurmctld >/dev/null; then
  die "a slurmctld not started by this script is running (pid $(pgrep -x slurmctld | tr '\n' ' ')); stop it first"
fi
start_daemon slurmctld slurmctld "$LOGS/valorch-slurmctld.out" slurmctld -D -f "$SLURM_CONF"
for _ in $(seq 1 40); do scontrol ping >/dev/null 2>&1 && break; sleep 0.25; done
scontrol ping >/dev/null 2>&1 || { tail -n 20 "$LOGS/valorch-slurmctld.log" >&2 || true; die "slurmctld does not answer (log: $LOGS/valorch-slurmctld.log)"; }
for n in "${NODES[@]}"; do
  start_daemon "slurmd:$n" slurmd "$LOGS/valorch-slurmd-$n.out" slurmd -D -N "$n" -f "$SLURM_CONF"
done

# --- wait for idle ------------------------------------------------------------
deadline=$((SECONDS + WAIT))
resumed=0
while :; do
  states=$(sinfo -h -N -p valorch -o '%N %T' 2>/dev/null | sort -u || true)
  not_idle=$(awk '$2 != "idle" && $2 != "mixed" && $2 != "allocated"' <<<"$states")
  [ -n "$states" ] && [ -z "$not_idle" ] && break
  if [ "$resumed" = 0 ] && grep -qE 'down|drain' <<<"$not_idle"; then
    for n in $(awk '/down|drain/ { print $1 }' <<<"$not_idle"); do
      say "node $n is $(awk -v n="$n" '$1 == n { print $2 }' <<<"$not_idle"); resuming"
      scontrol update nodename="$n" state=resume || true
    done
    resumed=1
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "$states" >&2
    sinfo -R >&2 || true
    for n in "${NODES[@]}"; do tail -n 10 "$LOGS/valorch-slurmd-$n.log" >&2 2>/dev/null || true; done
    die "nodes not idle after ${WAIT}s (logs in $LOGS)"
  fi
  sleep 0.5
done

sinfo -N -o '%N %P %T %c %f %G'
[ "$CONF_DIR" = /etc/slurm ] || say "clients need: export SLURM_CONF=$SLURM_CONF"
