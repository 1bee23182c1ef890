#!/usr/bin/env bash
# One static binary from a package of Debian's next release, for tools that Debian 12
# (bookworm) does not package (cosign) or packages too old (Compose 1.x only). The
# package is downloaded from the mirror this machine is already configured with (its
# deb822 sources, the suite swapped), unpacked, and the one file installed; no apt
# source is changed and no other package is installed. The tools this is used for are
# Go binaries that need only libc.
#   usage: scripts/next-debian-binary.sh PACKAGE FILE-IN-PACKAGE DEST [SUITE]
#   e.g.   scripts/next-debian-binary.sh cosign usr/bin/cosign /usr/local/bin/cosign
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 PACKAGE FILE-IN-PACKAGE DEST [SUITE]" >&2
  exit 2
fi
package="$1" file="$2" dest="$3" suite="${4:-trixie}"
sources=/etc/apt/sources.list.d/debian.sources
if [ ! -r "$sources" ]; then
  echo "next-debian-binary: no $sources (deb822) to take the mirror from; install $package by hand" >&2
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
(cd "$work" && apt-get "${apt_opts[@]}" download -qq "$package")
deb="$(ls "$work"/"${package}"_*.deb 2>/dev/null | head -n1)"
if [ -z "$deb" ]; then
  echo "next-debian-binary: $suite has no package $package" >&2
  exit 3
fi
dpkg-deb -x "$deb" "$work/root"
if [ ! -f "$work/root/$file" ]; then
  echo "next-debian-binary: $(basename "$deb") has no $file" >&2
  exit 3
fi
install -D -m 0755 "$work/root/$file" "$dest"
echo "$dest (from $(basename "$deb"))"
