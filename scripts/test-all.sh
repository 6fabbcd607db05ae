#!/usr/bin/env bash
# `make test`: installs what is missing, builds the image, then typecheck, lint and every jest project.
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
# Prints the output of what ran in the background (LOG), whole, and counts the failures of its steps.
report_lane() { # LOG STEP...
  cat "$RESULTS/$1.log"
  shift
  local name
  for name in "$@"; do
    [[ "$(cat "$RESULTS/$name.rc" 2>/dev/null)" == 0 ]] || overall=1
  done
}
step deps make --no-print-directory deps || { echo "npm dependencies could not be installed: nothing else can run"; exit 1; }
step tools scripts/install-tools.sh || overall=1
jest_step() { step "jest-$1" scripts/jest-project.sh "$1" --json --outputFile="$RESULTS/jest-$1.json"; }
# Typecheck, lint and the unit tests start no server: side by side, each one's output kept apart and
# printed whole once all are done; beside them the image the e2e suite runs the worker and the
# trigger in (test/e2e/image.test.ts), rebuilt only when what it is built from changed.
step typecheck npx --no-install tsc --noEmit >"$RESULTS/typecheck.log" 2>&1 &
step lint make --no-print-directory lint >"$RESULTS/lint.log" 2>&1 &
jest_step unit >"$RESULTS/jest-unit.log" 2>&1 &
step image scripts/image.sh >"$RESULTS/image.log" 2>&1 &
wait
for name in typecheck lint jest-unit image; do report_lane "$name" "$name"; done
# The release's artefacts for this checkout's version (the image archive above, its digest and SBOM,
# the packaged chart, the plugin file): the chart-install test installs the packaged chart, checks
# the image reference against the archive and runs the plugin from the release file.
step release env RELEASE_DIR=.tmp/release scripts/release.sh "$(node -p "require('./package.json').version")" || overall=1
# Three lanes from here to the end. The real-operator suite runs in its own network namespace
# (nothing it binds can meet another suite's ports) and mostly waits for the operator's rollouts;
# it ends well before the e2e suite, so the e2e files of E2E_BESIDE_OPERATOR follow it there, one at
# a time. The workflow tests (time-skipping server, no real stack) and then the short chaos
# campaign (it judges behaviour, not times: docs/reliability.md) beside the integration tests.
# The integration tests and then the other e2e files (two at a time, scripts/jest-project.sh)
# make the longest lane.
E2E_BESIDE_OPERATOR='test/e2e/(demo|fleet|image)\.test\.ts'
{
  jest_step operator
  step jest-e2e-beside-operator scripts/jest-project.sh e2e "$E2E_BESIDE_OPERATOR" --runInBand --json --outputFile="$RESULTS/jest-e2e-beside-operator.json"
} >"$RESULTS/operator-lane.log" 2>&1 &
operator=$!
{
  jest_step workflow
  jest_step chaos
} >"$RESULTS/workflow-lane.log" 2>&1 &
workflow=$!
jest_step integration || overall=1
step jest-e2e scripts/jest-project.sh e2e --testPathIgnorePatterns "$E2E_BESIDE_OPERATOR" --json --outputFile="$RESULTS/jest-e2e.json" || overall=1
wait "$workflow" "$operator"
report_lane workflow-lane jest-workflow jest-chaos
report_lane operator-lane jest-operator jest-e2e-beside-operator
exit "$overall"
