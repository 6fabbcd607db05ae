// The rollout workflow: its signal and query handlers, the zone loop and continue-as-new. The
// zones' steps are in zone-runner.ts / zone-steps.ts, the shared operations in rollout-run.ts.
import {
  CancellationScope,
  continueAsNew,
  defineQuery,
  defineSignal,
  isCancellation,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import { QUERY_PROGRESS, SIGNAL_PAUSE, SIGNAL_RESUME, SIGNAL_SUPERSEDE, type SupersedeSignal } from '../api/rollout-contract';
import { FailureType, stepFailure } from './failures';
import { applyDeferredRoutes, prepare } from './prepare';
import { adoptRecordedZones } from './recorded-zones';
import { RolloutRun } from './rollout-run';
import { progressOf, type CarriedState, type Progress, type RolloutResult, type RolloutWorkflowInput } from './state';
import { cleanupZone } from './zone-cleanup';
import { runZone } from './zone-runner';

export const pauseSignal = defineSignal(SIGNAL_PAUSE);
export const resumeSignal = defineSignal(SIGNAL_RESUME);
export const supersedeSignal = defineSignal<[SupersedeSignal]>(SIGNAL_SUPERSEDE);
export const progressQuery = defineQuery<Progress>(QUERY_PROGRESS);

/** Continue-as-new when the server suggests it or past this many events (checked between zones only). */
export const CONTINUE_AS_NEW_AFTER_EVENTS = 8000;

const finished = (phase: string) => phase === 'Done' || phase === 'Skipped';

export async function rolloutWorkflow(input: RolloutWorkflowInput): Promise<RolloutResult> {
  const info = workflowInfo();
  const run = new RolloutRun(input, { id: info.workflowId, runId: info.runId });
  const { state } = run;

  setHandler(pauseSignal, () => {
    run.pauseRequested = true;
  });
  setHandler(resumeSignal, () => {
    run.pauseRequested = false;
    run.resumeRequested = true;
  });
  setHandler(supersedeSignal, (s) => {
    const g = s?.generation ?? input.object.generation + 1;
    if (state.supersededBy === undefined || g > state.supersededBy) state.supersededBy = g;
  });
  setHandler(progressQuery, () => progressOf(state, run.pauseRequested));

  try {
    const v = await run.acts.status.verifyInput({ object: input.object, spec: input.spec, previousWorkflowIds: input.previousWorkflowIds });
    if (v.verdict === 'refused') throw stepFailure(FailureType.InputRefused, v.message);
    if (v.verdict === 'stale') {
      if (!input.carried) return run.endStale(v.message);
      // Carried over: at a zone boundary, nothing out of reads; end as a supersede signal would.
      if (state.supersededBy === undefined || v.generation > state.supersededBy) state.supersededBy = v.generation;
    }
    if (!input.carried) {
      const t = await run.acts.takeOver.takeOverObject({ object: input.object, ownWorkflowId: info.workflowId, previousWorkflowIds: input.previousWorkflowIds });
      if (t.stale) return run.endStale('a newer generation of the object exists; nothing done');
    }
    if ((await adoptRecordedZones(run)) === 'superseded') return await run.finishSuperseded();
    if (!input.carried) {
      await run.safePoint();
      if (run.superseded()) return await run.finishSuperseded();
      if ((await prepare(run)) === 'superseded') return await run.finishSuperseded();
    }

    for (let i = 0; i < state.order.length; i++) {
      const name = state.order[i]!;
      if (run.superseded()) return await run.finishSuperseded();
      if (!finished(run.zone(name).phase)) {
        state.currentZone = name;
        state.currentStep = undefined;
        await run.safePoint();
        if (run.superseded()) return await run.finishSuperseded();
      }
      const outcome = await runZone(run, name);
      if (outcome === 'superseded') return await run.finishSuperseded();
      const more = state.order.slice(i + 1).some((n) => !finished(run.zone(n).phase));
      if (outcome === 'done' && more && run.st.pauseBetweenZonesMs > 0) {
        state.currentStep = 'PauseBetweenZones';
        await sleep(run.st.pauseBetweenZonesMs);
      }
      if (more && !run.superseded()) await continueAsNewIfLong(run);
    }
    if (run.routesDeferred && (await applyDeferredRoutes(run)) === 'superseded') return await run.finishSuperseded();
    const n = state.zones.filter((z) => z.phase === 'Done').length;
    return await run.finish('Succeeded', `all zones at ${input.spec.clusterVersion} (${n} upgraded, ${state.zones.length - n} already up to date)`);
  } catch (err) {
    if (!isCancellation(err)) throw err;
    await CancellationScope.nonCancellable(async () => {
      for (const z of state.zones.filter((x) => x.outOfRotation)) await cleanupZone(run, z, 'cancelled');
      state.paused = false;
      state.phase = 'Cancelled';
      const out = state.zones.filter((z) => z.outOfRotation).map((z) => z.name);
      state.message = out.length ? `cancelled; out of read rotation: ${out.join(', ')}` : 'cancelled';
      await run.writeStatus();
    });
    throw err;
  }
}

/** At a zone boundary (nothing out of rotation, nothing in flight), start afresh if history is long. */
async function continueAsNewIfLong(run: RolloutRun): Promise<void> {
  const inf = workflowInfo();
  if (!inf.continueAsNewSuggested && inf.historyLength <= (run.input.continueAsNewAfterEvents ?? CONTINUE_AS_NEW_AFTER_EVENTS)) return;
  const { state } = run;
  const carried: CarriedState = {
    zones: state.zones.map(({ name, phase, vmclusterGeneration, startedAt, finishedAt, message }) => ({
      name, phase, vmclusterGeneration, startedAt, finishedAt, message,
    })),
    conditions: state.conditions,
    pauseRequested: run.pauseRequested,
    ...(state.supersededBy !== undefined ? { supersededBy: state.supersededBy } : {}),
    ...(run.routesDeferred ? { routesDeferred: true } : {}),
  };
  await continueAsNew<typeof rolloutWorkflow>({ ...run.input, carried });
}
