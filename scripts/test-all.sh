#!/usr/bin/env bash
# `make test`: installs what is missing, then typecheck, lint and every jest project.
# Keeps going after a failing step so every result is counted; each step's exit code goes to
# $RESULTS/<step>.rc and each jest project's JSON results to $RESULTS/jest-<project>.json
# (scripts/test-summary.mjs turns them into the `N passed, N failed` line).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RESULTS="${VMROLLOUT_RESULTS:-.tmp/test-results}"
rm -rf "$RESULTS"
mkdir -p "$RESULTS"

step() { # name cmd...
  local name="$1" t0 rc
  shift
  t0=$(date +%s)
  echo "==> $name: $*"
  "$@"
  rc=$?
  echo "$rc" >"$RESULTS/$name.rc"
  echo "<== $name: exit $rc ($(($(date +%s) - t0))s)"
  return "$rc"
}

overall=0
step deps make --no-print-directory deps || { echo "npm dependencies could not be installed: nothing else can run"; exit 1; }
step tools scripts/install-tools.sh || overall=1
step typecheck npx --no-install tsc --noEmit || overall=1
step lint npx --no-install eslint . || overall=1
for p in unit workflow integration e2e; do
  step "jest-$p" scripts/jest-project.sh "$p" --json --outputFile="$RESULTS/jest-$p.json" || overall=1
done
exit "$overall"
