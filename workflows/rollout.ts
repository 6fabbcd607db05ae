// The rollout workflow: its signal and query handlers, the zone loop and continue-as-new. The
// zones' steps are in zone-runner.ts / zone-steps.ts, the parts of a run in rollout-run.ts.
import {
  CancellationScope,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  defineUpdate,
  isCancellation,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  QUERY_PROGRESS,
  SIGNAL_PAUSE,
  SIGNAL_QUEUE_SAMPLE,
  type LastQueueSample,
  SIGNAL_RESUME,
  SIGNAL_SUPERSEDE,
  type SupersedeSignal,
  type Progress,
  type PromoteResult,
  type RolloutResult,
  UPDATE_PROMOTE,
} from '../api/rollout-contract';
import { FailureType, stepFailure } from './failures';
import { applyDeferredRoutes, prepare } from './prepare';
import { adoptRecordedZones } from './recorded-zones';
import { endStale, finish, finishSuperseded } from './rollout-end';
import { startRun, type RolloutRun } from './rollout-run';
import { safePoint } from './safe-point';
import { zoneState, zonesOutOfRotation, type CarriedState, type RolloutWorkflowInput } from './state';
import { progressOf } from './status';
import { cleanupZone } from './zone-cleanup';
import { runZone } from './zone-runner';

export const pauseSignal = defineSignal(SIGNAL_PAUSE);
export const resumeSignal = defineSignal(SIGNAL_RESUME);
export const supersedeSignal = defineSignal<[SupersedeSignal]>(SIGNAL_SUPERSEDE);
export const queueSampleSignal = defineSignal<[LastQueueSample]>(SIGNAL_QUEUE_SAMPLE);
export const progressQuery = defineQuery<Progress>(QUERY_PROGRESS);
export const promoteUpdate = defineUpdate<PromoteResult>(UPDATE_PROMOTE);

/** Continue-as-new when the server suggests it or past this many events (checked between zones only). */
export const CONTINUE_AS_NEW_AFTER_EVENTS = 8000;

const finished = (phase: string) => phase === 'Done' || phase === 'Skipped';

export async function rolloutWorkflow(input: RolloutWorkflowInput): Promise<RolloutResult> {
  const info = workflowInfo();
  const run = startRun(input, { id: info.workflowId, runId: info.runId });
  const { state, signals, ctx } = run;

  setHandler(pauseSignal, () => signals.requestPause());
  setHandler(resumeSignal, () => signals.requestResume());
  setHandler(supersedeSignal, (s) => signals.supersede(s?.generation ?? input.object.generation + 1));
  // The queue wait's latest sample, while the zone waits for it (a late one never replaces a newer).
  setHandler(queueSampleSignal, (s) => {
    if (state.currentStep === 'WaitingForQueue' && s.zone === state.currentZone) state.lastQueueSample = s;
  });
  setHandler(progressQuery, () => progressOf(state, signals));
  // The wait between zones, while it runs: promote ends it. Only then: a promote sent at any other
  // moment is refused by the validator (not stored for a later wait, which it was not meant for).
  let wait: { after: string; until: number; promoted: boolean } | undefined;
  setHandler(
    promoteUpdate,
    () => {
      const w = wait!;
      w.promoted = true;
      return { after: w.after, skippedMs: Math.max(0, w.until - Date.now()) };
    },
    {
      validator: () => {
        if (!wait || wait.promoted)
          throw new Error(
            `no pauseBetweenZones wait in progress: the rollout is ${progressOf(state, signals).phase}${state.currentZone ? ` at zone ${state.currentZone}` : ''}${state.currentStep ? `, step ${state.currentStep}` : ''}`,
          );
      },
    },
  );

  try {
    const v = await ctx.acts.status.verifyInput({ object: input.object, spec: input.spec, previousWorkflowIds: input.previousWorkflowIds });
    if (v.verdict === 'refused') throw stepFailure(FailureType.InputRefused, v.message);
    if (v.verdict === 'stale') {
      if (!input.carried) return endStale(state, v.message);
      // Carried over: at a zone boundary, nothing out of reads; end as a supersede signal would.
      signals.supersede(v.generation);
    }
    if (!input.carried) {
      const t = await ctx.acts.takeOver.takeOverObject({
        object: input.object,
        ownWorkflowId: info.workflowId,
        previousWorkflowIds: input.previousWorkflowIds,
      });
      if (t.stale) return endStale(state, 'a newer generation of the object exists; nothing done');
    }
    if ((await adoptRecordedZones(run)) === 'superseded') return await finishSuperseded(run);
    if (!input.carried) {
      await safePoint(run);
      if (signals.superseded()) return await finishSuperseded(run);
      if ((await prepare(run)) === 'superseded') return await finishSuperseded(run);
    }

    for (let i = 0; i < state.order.length; i++) {
      const name = state.order[i]!;
      if (signals.superseded()) return await finishSuperseded(run);
      if (!finished(zoneState(state, name).phase)) {
        state.currentZone = name;
        state.currentStep = undefined;
        await safePoint(run);
        if (signals.superseded()) return await finishSuperseded(run);
      }
      const outcome = await runZone(run, name);
      if (outcome === 'superseded') return await finishSuperseded(run);
      const more = state.order.slice(i + 1).some((n) => !finished(zoneState(state, n).phase));
      if (outcome === 'done' && more && ctx.st.pauseBetweenZonesMs > 0) {
        state.currentStep = 'PauseBetweenZones';
        // One timer, as the sleep it replaces (replays of histories with that sleep stay valid).
        const w = (wait = { after: name, until: Date.now() + ctx.st.pauseBetweenZonesMs, promoted: false });
        await condition(() => w.promoted, ctx.st.pauseBetweenZonesMs);
        wait = undefined;
      }
      if (more && !signals.superseded()) await continueAsNewIfLong(run, input);
    }
    if (state.routesDeferred && (await applyDeferredRoutes(run)) === 'superseded') return await finishSuperseded(run);
    const upgraded = state.zones.filter((z) => z.phase === 'Done').length;
    return await finish(run, { kind: 'succeeded', clusterVersion: input.spec.clusterVersion, upgraded, upToDate: state.zones.length - upgraded });
  } catch (err) {
    if (!isCancellation(err)) throw err;
    run.report.endingRun();
    await CancellationScope.nonCancellable(async () => {
      for (const z of state.zones.filter((x) => x.outOfRotation)) await cleanupZone(run, z, 'cancelled');
      state.paused = false;
      state.run = { kind: 'cancelled', out: zonesOutOfRotation(state) };
      await run.report.write();
    });
    throw err;
  }
}

/** At a zone boundary (nothing out of rotation, nothing in flight), start afresh if history is long. */
async function continueAsNewIfLong({ state, signals }: RolloutRun, input: RolloutWorkflowInput): Promise<void> {
  const inf = workflowInfo();
  if (!inf.continueAsNewSuggested && inf.historyLength <= (input.continueAsNewAfterEvents ?? CONTINUE_AS_NEW_AFTER_EVENTS)) return;
  const carried: CarriedState = {
    zones: state.zones.map(({ name, phase, vmclusterGeneration, startedAt, finishedAt, note }) => ({
      name,
      phase,
      vmclusterGeneration,
      startedAt,
      finishedAt,
      note,
    })),
    conditions: state.conditions,
    pauseRequested: signals.pauseRequested,
    ...(signals.supersededBy !== undefined ? { supersededBy: signals.supersededBy } : {}),
    ...(state.routesDeferred ? { routesDeferred: true } : {}),
  };
  await continueAsNew<typeof rolloutWorkflow>({ ...input, carried });
}
