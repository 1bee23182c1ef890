#!/usr/bin/env bash
# Compose v2 (`docker compose`) as a Docker CLI plugin where the distribution has only
# docker-compose 1.x (Debian 12): Debian's next release packages v2 as `docker-compose`.
set -euo pipefail
if docker compose version >/dev/null 2>&1; then
  docker compose version
  exit 0
fi
"$(dirname "$0")/next-debian-binary.sh" docker-compose usr/libexec/docker/cli-plugins/docker-compose \
  /usr/local/lib/docker/cli-plugins/docker-compose
docker compose version
