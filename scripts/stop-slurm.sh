#!/usr/bin/env bash
# Stop the daemons that scripts/start-slurm.sh started, and only those: the
# pids recorded in $VALORCH_SLURM_STATE/pids (default /var/lib/valorch-slurm),
# each checked to still run the recorded program before it is signalled.
# Configuration, state and logs are left in place.
set -euo pipefail

STATE=${VALORCH_SLURM_STATE:-/var/lib/valorch-slurm}
PIDS="$STATE/pids"

if [ ! -s "$PIDS" ]; then
  echo "stop-slurm: nothing recorded in $PIDS" >&2
  exit 0
fi

alive() { [ "$(cat "/proc/$2/comm" 2>/dev/null)" = "$1" ]; }

# slurmd before slurmctld, munged last: the others need it to say goodbye.
order=$( { grep '^slurmd:' "$PIDS" || true; grep '^slurmctld ' "$PIDS" || true; grep '^munged ' "$PIDS" || true; } )
rc=0
while read -r key comm pid; do
  [ -n "$key" ] || continue
  if ! alive "$comm" "$pid"; then
    echo "stop-slurm: $key (pid $pid) is not running" >&2
    continue
  fi
  kill "$pid"
  for _ in $(seq 1 100); do alive "$comm" "$pid" || break; sleep 0.1; done
  if alive "$comm" "$pid"; then
    echo "stop-slurm: $key (pid $pid) did not stop within 10 s; sending SIGKILL" >&2
    kill -9 "$pid" || rc=1
  else
    echo "stop-slurm: stopped $key (pid $pid)" >&2
  fi
done <<<"$order"
: >"$PIDS"
exit $rc
