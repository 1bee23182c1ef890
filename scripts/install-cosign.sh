#!/usr/bin/env bash
# cosign, to check that what `valorch attest --push` attaches is what
# `cosign verify-attestation` accepts (Debian 12 does not package it; the next release does).
set -euo pipefail
if command -v cosign >/dev/null 2>&1; then
  exit 0
fi
"$(dirname "$0")/next-debian-binary.sh" cosign usr/bin/cosign /usr/local/bin/cosign
