#!/usr/bin/env bash
# Runs one jest project: scripts/jest-project.sh <unit|workflow|integration|e2e> [jest args / test path patterns...]
# integration and e2e start real servers: they run in band (2-core machines).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
project="$1"
shift
extra=()
case "$project" in
  integration|e2e) extra=(--runInBand) ;;
esac
# Path patterns go first: --selectProjects takes every following bare word as a project name.
exec npx --no-install jest "$@" --ci --passWithNoTests --selectProjects "$project" "${extra[@]}"
