// The rollout workflow: its signal and query handlers, the zone loop and continue-as-new. The
// zones' steps are in zone-runner.ts / zone-steps.ts, the parts of a run in rollout-run.ts.
import { CancellationScope, continueAsNew, defineQuery, defineSignal, defineUpdate, isCancellation, setHandler, workflowInfo } from '@temporalio/workflow';
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
  type AbortRequest,
  type AbortResult,
  UPDATE_ABORT,
} from '../api/rollout-contract';
import { FailureType, stepFailure } from './failures';
import { applyDeferredRoutes, prepare } from './prepare';
import { adoptRecordedZones } from './recorded-zones';
import { upgradedZones } from './boundary';
import { endStale, finish, finishSuperseded } from './rollout-end';
import { startRun, type RolloutRun } from './rollout-run';
import { safePoint } from './safe-point';
import { zoneState, zonesOutOfRotation, type CarriedState, type RolloutWorkflowInput, type RunNote } from './state';
import { progressOf } from './status';
import { cleanupZone } from './zone-cleanup';
import { planOnly } from './dry-run';
import { runZone } from './zone-runner';

export const pauseSignal = defineSignal(SIGNAL_PAUSE);
export const resumeSignal = defineSignal(SIGNAL_RESUME);
export const supersedeSignal = defineSignal<[SupersedeSignal]>(SIGNAL_SUPERSEDE);
export const queueSampleSignal = defineSignal<[LastQueueSample]>(SIGNAL_QUEUE_SAMPLE);
export const progressQuery = defineQuery<Progress>(QUERY_PROGRESS);
export const promoteUpdate = defineUpdate<PromoteResult>(UPDATE_PROMOTE);
export const abortUpdate = defineUpdate<AbortResult, [AbortRequest?]>(UPDATE_ABORT);

function refuseUnless(refusal: string | undefined): void {
  if (refusal) throw new Error(refusal);
}

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
  // Only at a zone boundary (a gate, the pause between zones): the validators refuse at any other moment.
  setHandler(promoteUpdate, () => run.boundary.promote(), { validator: () => refuseUnless(run.boundary.refusal('promote')) });
  setHandler(abortUpdate, (r?: AbortRequest) => run.boundary.abort(r), { validator: (r?: AbortRequest) => refuseUnless(run.boundary.refusal('abort', r)) });

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
    if (ctx.st.dryRun) return await planOnly(run);
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
      if (typeof outcome === 'object') return await finishAborted(run, outcome.aborted);
      const next = state.order.slice(i + 1).find((n) => !finished(zoneState(state, n).phase));
      if (outcome === 'done' && next !== undefined && ctx.st.pauseBetweenZonesMs > 0) {
        state.currentStep = 'PauseBetweenZones';
        const end = await run.boundary.pause(name, next, ctx.st.pauseBetweenZonesMs);
        if (end.kind === 'aborted') return await finishAborted(run, end.note);
      }
      if (next !== undefined && !signals.superseded()) await continueAsNewIfLong(run, input);
    }
    if (state.routesDeferred && (await applyDeferredRoutes(run)) === 'superseded') return await finishSuperseded(run);
    const upgraded = upgradedZones(state);
    const held = state.zones.flatMap((z) => (z.held ? [{ zone: z.name, mode: z.held }] : []));
    const maintenance = held.filter((h) => h.mode === 'maintenance').length;
    const end = { kind: 'succeeded' as const, clusterVersion: input.spec.clusterVersion, upgraded, upToDate: state.zones.length - upgraded - maintenance };
    return await finish(run, held.length ? { ...end, held } : end);
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

/**
 * A person aborted at a zone boundary (every zone in reads). Route objects deferred while zones were
 * out of reads are applied first: nothing is out now, and the next rollout must find them as desired.
 */
async function finishAborted(run: RolloutRun, end: Extract<RunNote, { kind: 'aborted' }>): Promise<RolloutResult> {
  if (run.state.routesDeferred && (await applyDeferredRoutes(run)) === 'superseded') return finishSuperseded(run);
  return finish(run, end);
}

/** At a zone boundary (nothing out of rotation, nothing in flight), start afresh if history is long. */
async function continueAsNewIfLong({ state, signals }: RolloutRun, input: RolloutWorkflowInput): Promise<void> {
  const inf = workflowInfo();
  if (!inf.continueAsNewSuggested && inf.historyLength <= (input.continueAsNewAfterEvents ?? CONTINUE_AS_NEW_AFTER_EVENTS)) return;
  const carried: CarriedState = {
    zones: state.zones.map(({ name, phase, vmclusterGeneration, startedAt, finishedAt, note, adopted }) => ({
      name,
      phase,
      vmclusterGeneration,
      startedAt,
      finishedAt,
      note,
      ...(adopted ? { adopted } : {}),
    })),
    conditions: state.conditions,
    pauseRequested: signals.pauseRequested,
    ...(signals.supersededBy !== undefined ? { supersededBy: signals.supersededBy } : {}),
    ...(state.routesDeferred ? { routesDeferred: true } : {}),
  };
  await continueAsNew<typeof rolloutWorkflow>({ ...input, carried });
}
