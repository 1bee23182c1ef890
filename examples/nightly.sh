#!/usr/bin/env bash
# The nightly validation as a plain script, for schedulers that are not a CI system: the
# systemd timer (examples/systemd/) and cron (examples/cron/) both run it. The same steps,
# in the same order, as examples/github-actions/nightly.yml:
#   catalog digests against the registry (a moved tag is a warning), pull the pinned images,
#   preflight (which looks for each image by the pinned digest the run uses), the run,
#   push to the shared store, the Markdown matrix, and the site, published to a directory
#   that any static web server serves.
# tests/acceptance/test_recipes_run_their_steps_in_order.py runs it on a real engine.
#
# Settings (environment; the unit or crontab sets them):
#   VALORCH_CHECKOUT  the checkout holding images/, jobs/ and .venv/ [default: this script's ../]
#   VALORCH_DB        the runner's own results store (SQLite file or URL)
#   VALORCH_PUSH_TO   the shared store to push to [default: none, no push]
#   VALORCH_SITE_DIR  where the site is published [default: /var/www/valorch]
#   VALORCH_IMAGES    the images to pull [default: the nightly job's, rocm6.3_*_pytorch_2.4]
set -uo pipefail

cd "${VALORCH_CHECKOUT:-$(dirname "$0")/..}" || exit 2
valorch=.venv/bin/valorch
images=${VALORCH_IMAGES:-rocm6.3_*_pytorch_2.4}
site=${VALORCH_SITE_DIR:-/var/www/valorch}

"$valorch" images check "$images" --json > digests.json
case $? in
  0) ;;
  1) echo "warning: a catalogued tag moved or vanished (digests.json); the pinned digests still run" >&2 ;;
  2) echo "warning: images check refused its input (see above); the pinned digests still run" >&2 ;;
  *) echo "warning: the registry could not be checked (not reached, or it failed: digests.json says which image); the pinned digests still run" >&2 ;;
esac
"$valorch" images pull "$images" || exit $?
"$valorch" hosts check --job jobs/nightly.yaml || exit $?
"$valorch" run --job jobs/nightly.yaml --junit out.xml --no-matrix --pull never
status=$?

if [ -n "${VALORCH_PUSH_TO:-}" ]; then
  # a failed push loses nothing: the runs stay in VALORCH_DB and the next night sends them
  "$valorch" results push || echo "warning: push failed; the next run sends these runs too" >&2
  "$valorch" results prune --keep-days 30 --pushed-to "$VALORCH_PUSH_TO" || true
fi
"$valorch" matrix render --format md > matrix.md || true
# the site directory is replaced as a whole; point the web server's root at it
"$valorch" site build --out "$site" || status=3
exit "$status"
