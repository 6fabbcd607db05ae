#!/usr/bin/env bash
# Runs one jest project: scripts/jest-project.sh <unit|workflow|integration|e2e|chaos> [jest args / test path patterns...]
# integration tests start real servers and spend their time starting them: in band (2-core machines).
# An e2e file's stack mostly waits (zone outages, queue drains, vmauth reloads: about a third of the
# machine each), so two files run side by side. The short chaos campaign measures recovery times: alone.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
project="$1"
shift
extra=()
case "$project" in
  integration|chaos) extra=(--runInBand) ;;
  e2e) extra=(--maxWorkers=2) ;;
esac
# Path patterns go first: --selectProjects takes every following bare word as a project name.
exec npx --no-install jest "$@" --ci --passWithNoTests --selectProjects "$project" "${extra[@]}"
