#!/usr/bin/env bash
# Make sure a Docker engine answers on the default socket.
# Installs Debian's docker.io when dockerd is missing (root only) and starts
# dockerd in the background when nothing answers. Idempotent.
set -euo pipefail

if docker info >/dev/null 2>&1; then
  exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    echo "ensure-engine: no Docker engine answers and dockerd is not installed; install docker.io (as root) and start it" >&2
    exit 3
  fi
  echo "ensure-engine: installing Debian's docker.io" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
fi

if ! command -v docker >/dev/null 2>&1; then
  echo "ensure-engine: no docker client on PATH" >&2
  exit 3
fi

log=${VALORCH_DOCKERD_LOG:-/tmp/valorch-dockerd.log}
echo "ensure-engine: starting dockerd (log: $log)" >&2
nohup dockerd >"$log" 2>&1 &
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then
    exit 0
  fi
  sleep 0.5
done
echo "ensure-engine: dockerd did not answer within 30 s; see $log" >&2
tail -n 20 "$log" >&2 || true
exit 3
