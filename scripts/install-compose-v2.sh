#!/usr/bin/env bash
# Compose v2 (`docker compose`) as a Docker CLI plugin, for hosts whose Debian release
# ships only docker-compose 1.x (bookworm). Debian's next release packages Compose v2 as
# `docker-compose` (a static Go binary that needs only libc); this script downloads that
# one package from the mirror this machine is already configured with (its deb822
# sources, the suite swapped), unpacks the plugin, and installs it where the Docker CLI
# looks for plugins. It changes no apt source and installs no other package.
#   usage: scripts/install-compose-v2.sh [SUITE]      (default: trixie)
set -euo pipefail
suite="${1:-trixie}"
dest=/usr/local/lib/docker/cli-plugins
if docker compose version >/dev/null 2>&1; then
  docker compose version
  exit 0
fi
sources=/etc/apt/sources.list.d/debian.sources
if [ ! -r "$sources" ]; then
  echo "install-compose-v2: no $sources (deb822) to take the mirror from; install Compose v2 by hand" >&2
  exit 3
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/parts" "$work/lists/partial" "$work/cache/archives/partial"
# the first stanza (the main archive), its suites replaced by the one wanted
awk -v suite="$suite" 'BEGIN { RS = ""; ORS = "\n\n" } NR == 1 {
  n = split($0, lines, "\n"); out = ""
  for (i = 1; i <= n; i++) { if (lines[i] ~ /^Suites:/) lines[i] = "Suites: " suite; out = out lines[i] "\n" }
  print out }' "$sources" > "$work/parts/next.sources"
apt_opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$work/parts"
          -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o APT::Sandbox::User=root)
apt-get "${apt_opts[@]}" update -qq
(cd "$work" && apt-get "${apt_opts[@]}" download -qq docker-compose)
deb="$(ls "$work"/docker-compose_2*.deb 2>/dev/null | head -n1)"
if [ -z "$deb" ]; then
  echo "install-compose-v2: $suite has no docker-compose 2.x package" >&2
  exit 3
fi
dpkg-deb -x "$deb" "$work/root"
install -D -m 0755 "$work/root/usr/libexec/docker/cli-plugins/docker-compose" "$dest/docker-compose"
docker compose version
