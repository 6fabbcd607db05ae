#!/usr/bin/env bash
# Runs one jest project: scripts/jest-project.sh <unit|workflow|integration|e2e|chaos|operator> [jest args / test path patterns...]
# integration files start real servers and then mostly wait (retries, timeouts, heartbeats): two
# side by side. An e2e file's stack mostly waits (zone outages, queue drains, vmauth reloads: about
# a third of the machine each): two side by side. The short chaos campaign: one file. The
# real-operator files run inside the bed's network namespace (test/infra/harness/operator-bed/
# in-netns.sh), one at a time, under their own jest config (test/operator/jest.config.js).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
project="$1"
shift
case "$project" in
  operator)
    exec test/infra/harness/operator-bed/in-netns.sh npx --no-install jest "$@" --ci --passWithNoTests --config test/operator/jest.config.js --runInBand ;;
  chaos) extra=(--runInBand) ;;
  integration|e2e) extra=(--maxWorkers=2) ;;
  *) extra=() ;;
esac
# The caller's own --runInBand or --maxWorkers replaces the default (jest refuses both).
for arg in "$@"; do
  case "$arg" in -i | --runInBand | -w | --maxWorkers | --maxWorkers=*) extra=() ;; esac
done
# The measurements an e2e or chaos file writes (.tmp/bench/image.json, .tmp/chaos/short-<seed>.json)
# name the command that made them (bench/support/provenance.ts); not the unit project, whose
# benchmark smoke test checks the command each benchmark names itself.
case "$project" in
  e2e|chaos) export BENCH_COMMAND="${BENCH_COMMAND:-scripts/jest-project.sh $project $*}" ;;
esac
# Path patterns go first: --selectProjects takes every following bare word as a project name.
exec npx --no-install jest "$@" --ci --passWithNoTests --selectProjects "$project" "${extra[@]}"
