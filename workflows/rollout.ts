// The rollout workflow: a thin, deterministic shell over the pure modules of workflows/.
// Only workflow APIs here (the sandbox's Date is the deterministic workflow clock).
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  TimeoutFailure,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { ActivityOptions } from '@temporalio/workflow';
import { OPERATIONAL } from '../api/constants';
import {
  QUERY_PROGRESS,
  SIGNAL_PAUSE,
  SIGNAL_RESUME,
  SIGNAL_SUPERSEDE,
  type RolloutInput,
  type SupersedeSignal,
} from '../api/rollout-contract';
import type { JsonObject, Phase, ZoneSpec } from '../api/types';
import type { ObjectState, QueueTarget, RolloutActivities, RouteRef } from './activity-types';
import { createsObject, desiredClusterPatch, isUpToDate, managedObjectPatch } from './merge';
import { ZONE_STEPS, planZoneOrder, resumeStep, shuffleSeed, stepIndex, type ZoneStep } from './plan';
import { EmptyRouteError, RouteShapeError, computeRemovals } from './routes';
import { progressOf, type Progress, type RolloutState, type ZoneState } from './state';
import { buildStatus } from './status';

export const pauseSignal = defineSignal(SIGNAL_PAUSE);
export const resumeSignal = defineSignal(SIGNAL_RESUME);
export const supersedeSignal = defineSignal<[SupersedeSignal]>(SIGNAL_SUPERSEDE);
export const progressQuery = defineQuery<Progress>(QUERY_PROGRESS);

/** Activity failure types that must not be retried. */
export const NON_RETRYABLE_TYPES = ['ObjectFailed', 'EmptyRoute', 'RouteShape'];

/** State carried over a continue-as-new (only ever at a zone boundary, with no zone out of rotation). */
export interface CarriedState {
  zones: Array<Pick<ZoneState, 'name' | 'phase' | 'vmclusterGeneration' | 'startedAt' | 'finishedAt' | 'message'>>;
  conditions: RolloutState['conditions'];
  pauseRequested: boolean;
  supersededBy?: number;
}

export type RolloutWorkflowInput = RolloutInput & {
  carried?: CarriedState;
  /** Test knob: continue-as-new past this many history events (default CONTINUE_AS_NEW_AFTER_EVENTS). */
  continueAsNewAfterEvents?: number;
};

export interface RolloutResult {
  phase: Phase;
  message: string;
  zones: Array<{ name: string; phase: string; vmclusterGeneration?: number }>;
  zonesOutOfRotation: string[];
}

/** Continue-as-new when the server suggests it or past this many events (checked between zones only). */
export const CONTINUE_AS_NEW_AFTER_EVENTS = 8000;

/** A step failed for a reason the workflow itself detected (not an activity failure). */
class StepFailure extends Error {
  constructor(message: string, readonly type: string) {
    super(message);
  }
}

function failureMessage(err: unknown): string {
  if (err instanceof StepFailure) return err.message;
  if (err instanceof ActivityFailure) {
    const c = err.cause;
    if (c instanceof TimeoutFailure) return `${err.activityType} timed out (${c.timeoutType === 'SCHEDULE_TO_CLOSE' ? 'zoneTimeout exhausted' : String(c.timeoutType ?? 'unknown').toLowerCase()}): ${c.message}`;
    if (c instanceof ApplicationFailure) return `${err.activityType} failed${c.type ? ` (${c.type})` : ''}: ${c.message}`;
    return `${err.activityType} failed: ${c?.message ?? err.message}`;
  }
  return err instanceof Error ? err.message : String(err);
}

function isOperationalAt(o: ObjectState, generation: number | undefined): boolean {
  return (
    o.exists &&
    o.updateStatus === OPERATIONAL &&
    (o.observedGeneration ?? -1) >= (generation ?? o.generation ?? Number.MAX_SAFE_INTEGER)
  );
}

const ms = (n: number) => Math.max(1, Math.round(n));

export async function rolloutWorkflow(input: RolloutWorkflowInput): Promise<RolloutResult> {
  const { object, spec } = input;
  const st = spec.strategy;
  const ns = object.namespace;
  const info = workflowInfo();
  const wfRef = { id: info.workflowId, runId: info.runId };
  const now = () => new Date().toISOString();

  // ---- activities ---------------------------------------------------------------------------
  const retry: ActivityOptions['retry'] = {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '30s',
    nonRetryableErrorTypes: NON_RETRYABLE_TYPES,
  };
  // On cancel, wait for an in-flight activity to finish or acknowledge: the cleanup must see every
  // edit or patch that may still land, never race with it.
  const cancellationType = ActivityCancellationType.WAIT_CANCELLATION_COMPLETED;
  const heartbeatTimeout = ms(Math.max(30_000, 3 * st.pollIntervalMs));
  // Every step of a zone: retried with backoff until zoneTimeout is exhausted.
  const step = proxyActivities<RolloutActivities>({ scheduleToCloseTimeout: ms(st.zoneTimeoutMs), startToCloseTimeout: '2m', retry, cancellationType });
  const wait = proxyActivities<RolloutActivities>({ scheduleToCloseTimeout: ms(st.zoneTimeoutMs), heartbeatTimeout, retry, cancellationType });
  // Status writes retry forever: the workflow does not move on without telling the status.
  const statusActs = proxyActivities<RolloutActivities>({ startToCloseTimeout: '30s', retry: { ...retry, maximumInterval: '1m' } });
  // Taking over waits for older workflows to stop at a safe point: long, heartbeating.
  const takeOver = proxyActivities<RolloutActivities>({ startToCloseTimeout: '7d', heartbeatTimeout: '1m', retry });

  // ---- state ----------------------------------------------------------------------------------
  const zoneSpecs = new Map<string, ZoneSpec>(spec.zones.map((z) => [z.name, z]));
  const carried = input.carried;
  const state: RolloutState = {
    phase: 'Pending',
    message: 'starting',
    order: planZoneOrder(spec.zones.map((z) => z.name), st.order, shuffleSeed(object)),
    zones: spec.zones.map((z) => {
      const c = carried?.zones.find((x) => x.name === z.name);
      return {
        name: z.name,
        vmcluster: z.vmcluster.name,
        phase: 'Pending',
        outOfRotation: false,
        patchAttempted: false,
        drainedConfirmed: false,
        ...(c ?? {}),
      };
    }),
    paused: false,
    conditions: carried?.conditions ?? [],
  };
  let pauseRequested = carried?.pauseRequested ?? spec.paused;
  let resumeRequested = false;
  if (carried?.supersededBy !== undefined) state.supersededBy = carried.supersededBy;

  setHandler(pauseSignal, () => {
    pauseRequested = true;
  });
  setHandler(resumeSignal, () => {
    pauseRequested = false;
    resumeRequested = true;
  });
  setHandler(supersedeSignal, (s) => {
    const g = s?.generation ?? object.generation + 1;
    if (state.supersededBy === undefined || g > state.supersededBy) state.supersededBy = g;
  });
  setHandler(progressQuery, () => progressOf(state, pauseRequested));

  const zone = (name: string) => state.zones.find((z) => z.name === name)!;
  const writeStatus = () => statusActs.writeStatus({ object, status: buildStatus(state, object, wfRef, now()) });
  const superseded = () => state.supersededBy !== undefined;
  const result = (): RolloutResult => ({
    phase: state.phase,
    message: state.message,
    zones: state.order.map((n) => {
      const z = zone(n);
      return { name: n, phase: z.phase, ...(z.vmclusterGeneration !== undefined ? { vmclusterGeneration: z.vmclusterGeneration } : {}) };
    }),
    zonesOutOfRotation: state.zones.filter((z) => z.outOfRotation).map((z) => z.name),
  });

  // Routes the spec manages: the VMAuth and every VMUser named in the spec.
  const routes: RouteRef[] = [
    { kind: 'VMAuth' as const, name: spec.vmauth.name },
    ...spec.zones.filter((z) => z.vmuser).map((z) => ({ kind: 'VMUser' as const, name: z.vmuser!.name })),
  ].filter((r, i, all) => all.findIndex((x) => x.kind === r.kind && x.name === r.name) === i);

  const queueTarget = (zs: ZoneSpec): QueueTarget => ({
    namespace: ns,
    vmagentName: spec.vmagent.name,
    vmclusterName: zs.vmcluster.name,
    ...(zs.remoteWriteURL ? { remoteWriteURL: zs.remoteWriteURL } : {}),
    queueEmptyBytes: st.queueEmptyBytes,
    zone: zs.name,
    objectName: object.name,
  });

  /** A safe point: honour pause (unless superseded: a newer generation is waiting for us). */
  async function safePoint(): Promise<void> {
    if (!pauseRequested || superseded()) return;
    const before = { phase: state.phase, message: state.message };
    state.paused = true;
    state.phase = 'Paused';
    state.message = state.currentZone
      ? `paused before ${state.currentStep ?? 'next step'} of zone ${state.currentZone}`
      : 'paused';
    await writeStatus();
    await condition(() => !pauseRequested || superseded());
    state.paused = false;
    state.phase = before.phase === 'Paused' ? 'Progressing' : before.phase;
    state.message = before.message;
    await writeStatus();
  }

  /**
   * Wait until every edited route serves its new config: the VMAuth, and (from this workflow version
   * on) each VMUser the zone's removals changed. A generation unknown after a resume is read fresh.
   */
  async function waitSwitch(z: ZoneState, edited: { vmauthGeneration?: number; vmuserGenerations?: Record<string, number> }): Promise<void> {
    const generationOf = async (kind: 'VMAuth' | 'VMUser', name: string, known: number | undefined) =>
      known ?? (await step.readObject({ kind, namespace: ns, name })).generation ?? 0;
    const vmauthGeneration = await generationOf('VMAuth', spec.vmauth.name, edited.vmauthGeneration);
    await wait.waitOperational({ kind: 'VMAuth', namespace: ns, name: spec.vmauth.name, generation: vmauthGeneration, pollIntervalMs: st.pollIntervalMs });
    if (!patched('wait-vmuser-switch')) return;
    const users = new Set((z.removals ?? []).filter((r) => r.route.kind === 'VMUser' && r.removed.length > 0).map((r) => r.route.name));
    for (const name of users) {
      const generation = await generationOf('VMUser', name, edited.vmuserGenerations?.[name]);
      await wait.waitOperational({ kind: 'VMUser', namespace: ns, name, generation, pollIntervalMs: st.pollIntervalMs });
    }
  }

  /** Put a zone back into read rotation exactly as it was and wait for the switch. */
  async function rejoin(z: ZoneState, acts: RolloutActivities): Promise<void> {
    if (z.removals && z.removals.some((r) => r.removed.length > 0)) {
      const r = await acts.editRoutes({ namespace: ns, vmauthName: spec.vmauth.name, removals: z.removals, direction: 'restore' });
      z.outOfRotation = false;
      await waitSwitch(z, r);
    }
    z.outOfRotation = false;
  }

  /** One step of one zone. */
  async function runStep(z: ZoneState, zs: ZoneSpec, s: ZoneStep, ctx: { vmauthGeneration?: number; vmuserGenerations?: Record<string, number> }): Promise<void> {
    const patch = desiredClusterPatch(spec, zs);
    switch (s) {
      case 'LeavingReads': {
        if (!z.removals) {
          const snaps = await step.readRoutes({ namespace: ns, routes });
          try {
            z.removals = computeRemovals(snaps, { name: zs.vmcluster.name, namespace: ns });
          } catch (e) {
            if (e instanceof EmptyRouteError) throw new StepFailure(e.message, EmptyRouteError.type);
            if (e instanceof RouteShapeError) throw new StepFailure(e.message, RouteShapeError.type);
            throw e;
          }
        }
        // Announce before editing: the status never hides a zone that is out of rotation.
        z.outOfRotation = true;
        z.message = 'out of read rotation for the upgrade';
        await writeStatus();
        if (z.removals.some((r) => r.removed.length > 0)) {
          try {
            const r = await step.editRoutes({ namespace: ns, vmauthName: spec.vmauth.name, removals: z.removals, direction: 'remove' });
            Object.assign(ctx, r);
          } catch (e) {
            // EmptyRoute is refused before any edit: the zone is still in rotation; re-read on resume.
            if (e instanceof ActivityFailure && e.cause instanceof ApplicationFailure && e.cause.type === 'EmptyRoute') {
              z.outOfRotation = false;
              z.removals = undefined;
            }
            throw e;
          }
        }
        return;
      }
      case 'WaitingForSwitch': {
        if (z.removals?.some((r) => r.removed.length > 0)) {
          await waitSwitch(z, ctx);
          if (st.readDrainDelayMs > 0) await sleep(st.readDrainDelayMs);
        }
        return;
      }
      case 'Upgrading': {
        z.patchAttempted = true;
        z.drainedConfirmed = false;
        const r = await step.applyObject({ kind: 'VMCluster', namespace: ns, name: zs.vmcluster.name, patch, create: createsObject(zs.vmcluster) });
        z.vmclusterGeneration = r.generation;
        return;
      }
      case 'WaitingOperational': {
        await wait.waitOperational({ kind: 'VMCluster', namespace: ns, name: zs.vmcluster.name, generation: z.vmclusterGeneration ?? 0, pollIntervalMs: st.pollIntervalMs });
        return;
      }
      case 'WaitingForQueue': {
        const sample = await wait.waitQueueDrained({ ...queueTarget(zs), queueDrainedForMs: st.queueDrainedForMs, pollIntervalMs: st.pollIntervalMs });
        state.lastQueueSample = { ...sample, zone: z.name };
        z.drainedConfirmed = true;
        return;
      }
      case 'RejoiningReads': {
        await rejoin(z, step);
        return;
      }
    }
  }

  /**
   * Cleanup of a zone in flight when the workflow stops early (cancel, or supersede after a
   * failure): an unpatched zone rejoins at once; a patched one only when operational at the
   * patched generation and drained (a sample, then queueDrainedFor confirmed); else it stays out.
   */
  async function cleanupZone(z: ZoneState, why: string): Promise<void> {
    if (!z.outOfRotation) return;
    const zs = zoneSpecs.get(z.name)!;
    const cleanupTimeout = ms(Math.min(st.zoneTimeoutMs, 5 * 60_000));
    const acts = proxyActivities<RolloutActivities>({ scheduleToCloseTimeout: cleanupTimeout, startToCloseTimeout: '1m', retry });
    const stayOut = async (reason: string) => {
      z.message = `stays out of read rotation (${why}): ${reason}`;
      await writeStatus();
    };
    try {
      if (!z.patchAttempted || z.drainedConfirmed) {
        await rejoin(z, acts);
        z.message = z.drainedConfirmed ? `rejoined reads (${why}) after upgrade` : `rejoined reads (${why}) before upgrade`;
        await writeStatus();
        return;
      }
      const cur = await acts.readObject({ kind: 'VMCluster', namespace: ns, name: zs.vmcluster.name });
      if (!cur.exists || !isUpToDate(cur.spec, desiredClusterPatch(spec, zs))) {
        // The patch never landed: the zone is as it was before, safe to rejoin.
        await rejoin(z, acts);
        z.message = `rejoined reads (${why}): VMCluster was not changed`;
        z.patchAttempted = false;
        await writeStatus();
        return;
      }
      const gen = z.vmclusterGeneration ?? cur.generation;
      if (!isOperationalAt(cur, gen)) {
        return await stayOut(`VMCluster not operational at generation ${gen} (${cur.updateStatus ?? 'unknown'}, observed ${cur.observedGeneration ?? '-'})`);
      }
      const sample = await acts.sampleQueue(queueTarget(zs));
      state.lastQueueSample = { ...sample, zone: z.name };
      if (!sample.drained) return await stayOut(`vmagent queue not drained: ${sample.message}`);
      const confirm = proxyActivities<RolloutActivities>({
        scheduleToCloseTimeout: ms(st.queueDrainedForMs + 3 * st.pollIntervalMs + 30_000),
        heartbeatTimeout,
        retry,
      });
      const s2 = await confirm.waitQueueDrained({ ...queueTarget(zs), queueDrainedForMs: st.queueDrainedForMs, pollIntervalMs: st.pollIntervalMs });
      state.lastQueueSample = { ...s2, zone: z.name };
      z.drainedConfirmed = true;
      await rejoin(z, acts);
      z.message = `rejoined reads (${why}): operational at generation ${gen} and drained`;
      await writeStatus();
    } catch (e) {
      if (isCancellation(e)) throw e;
      await stayOut(failureMessage(e));
    }
  }

  type Outcome = 'done' | 'superseded';

  /**
   * Run `body`; if it fails (non-retryably or by exhausting zoneTimeout), report Failed and wait for
   * `resume` (run `body` again from where `from()` says), a supersede, or cancellation.
   */
  async function withFailureHold(
    z: ZoneState | undefined,
    body: () => Promise<Outcome>,
    onFailure: (msg: string) => void,
    onResume: () => void,
  ): Promise<Outcome> {
    for (;;) {
      try {
        return await body();
      } catch (err) {
        if (isCancellation(err)) throw err;
        if (!(err instanceof ActivityFailure) && !(err instanceof StepFailure)) throw err; // a bug: fail the task, not the zone
        resumeRequested = false;
        const msg = failureMessage(err);
        onFailure(msg);
        state.phase = 'Failed';
        state.message = z ? `zone ${z.name} failed at ${z.failedStep}: ${msg}` : `failed: ${msg}`;
        await writeStatus();
        await condition(() => resumeRequested || superseded());
        if (!resumeRequested) {
          if (z) await CancellationScope.nonCancellable(() => cleanupZone(z, 'superseded after failure'));
          return 'superseded';
        }
        resumeRequested = false;
        pauseRequested = false;
        onResume();
        state.phase = 'Progressing';
        state.message = z ? `retrying zone ${z.name} from ${z.step}` : 'retrying';
        await writeStatus();
      }
    }
  }

  async function runZone(name: string): Promise<Outcome | 'skipped'> {
    const z = zone(name);
    const zs = zoneSpecs.get(name)!;
    state.currentZone = name;
    if (z.phase === 'Done' || z.phase === 'Skipped') return 'skipped';
    const patch = desiredClusterPatch(spec, zs);
    const cur = await step.readObject({ kind: 'VMCluster', namespace: ns, name: zs.vmcluster.name });
    if (cur.exists && isUpToDate(cur.spec, patch) && isOperationalAt(cur, cur.generation)) {
      z.phase = 'Skipped';
      z.vmclusterGeneration = cur.generation;
      z.message = 'already up to date and operational';
      state.message = `zone ${name} already up to date`;
      await writeStatus();
      return 'skipped';
    }
    z.startedAt = now();
    z.step = 'LeavingReads';
    const ctx: { vmauthGeneration?: number; vmuserGenerations?: Record<string, number> } = {};
    const outcome = await withFailureHold(
      z,
      async () => {
        for (let i = stepIndex(z.step!); i < ZONE_STEPS.length; i++) {
          const s = ZONE_STEPS[i]!;
          z.step = s;
          state.currentStep = s;
          await safePoint();
          if (superseded() && !z.patchAttempted) {
            // Not changed yet: rejoin at once (if out) and stop here.
            if (z.outOfRotation) {
              state.currentStep = 'RejoiningReads';
              z.phase = 'RejoiningReads';
              await writeStatus();
              await rejoin(z, step);
            }
            z.phase = 'Pending';
            z.step = undefined;
            z.message = `not upgraded: superseded by generation ${state.supersededBy}`;
            await writeStatus();
            return 'superseded';
          }
          z.phase = s;
          z.message = z.outOfRotation ? 'out of read rotation for the upgrade' : undefined;
          state.phase = 'Progressing';
          state.message = `zone ${name}: ${s}`;
          await writeStatus();
          await runStep(z, zs, s, ctx);
        }
        return 'done';
      },
      (msg) => {
        z.failedStep = z.step;
        z.phase = 'Failed';
        z.message = z.outOfRotation ? `failed at ${z.step}, kept out of read rotation: ${msg}` : `failed at ${z.step}: ${msg}`;
      },
      () => {
        z.step = resumeStep(z.failedStep ?? 'LeavingReads');
        if (z.step === 'WaitingForSwitch') ctx.vmauthGeneration = undefined;
        z.failedStep = undefined;
      },
    );
    if (outcome === 'done') {
      z.phase = 'Done';
      z.step = undefined;
      z.finishedAt = now();
      z.message = undefined;
      state.currentStep = undefined;
      state.message = `zone ${name} done`;
      await writeStatus();
    }
    return outcome;
  }

  async function prepare(): Promise<Outcome> {
    state.currentStep = 'Preparing';
    return withFailureHold(
      undefined,
      async () => {
        state.phase = 'Progressing';
        state.message = 'applying VMAgent and VMUsers';
        await writeStatus();
        const items: Array<{ kind: 'VMAgent' | 'VMUser'; name: string; patch: JsonObject; create: boolean }> = [];
        const ap = managedObjectPatch(spec.vmagent);
        if (ap) items.push({ kind: 'VMAgent', name: spec.vmagent.name, patch: ap, create: createsObject(spec.vmagent) });
        for (const zs of spec.zones) {
          const up = managedObjectPatch(zs.vmuser);
          if (zs.vmuser && up) items.push({ kind: 'VMUser', name: zs.vmuser.name, patch: up, create: createsObject(zs.vmuser) });
        }
        for (const it of items) {
          const r = await step.applyObject({ kind: it.kind, namespace: ns, name: it.name, patch: it.patch, create: it.create });
          await wait.waitOperational({ kind: it.kind, namespace: ns, name: it.name, generation: r.generation, pollIntervalMs: st.pollIntervalMs });
        }
        return 'done';
      },
      () => {},
      () => {},
    );
  }

  const finish = async (phase: Phase, message: string): Promise<RolloutResult> => {
    state.phase = phase;
    state.message = message;
    state.currentStep = undefined;
    if (phase === 'Succeeded') state.currentZone = undefined;
    await writeStatus();
    return result();
  };

  // ---- main -----------------------------------------------------------------------------------
  try {
    if (!carried) {
      const t = await takeOver.takeOverObject({ object, ownWorkflowId: info.workflowId, previousWorkflowIds: input.previousWorkflowIds });
      if (t.stale) {
        // A newer generation exists: act on nothing, not even the status.
        state.phase = 'Superseded';
        state.message = 'a newer generation of the object exists; nothing done';
        return result();
      }
      await safePoint();
      if (superseded()) return await finish('Superseded', `superseded by generation ${state.supersededBy}`);
      if ((await prepare()) === 'superseded') return await finish('Superseded', `superseded by generation ${state.supersededBy}`);
    }

    for (let i = 0; i < state.order.length; i++) {
      const name = state.order[i]!;
      if (superseded()) return await finish('Superseded', `superseded by generation ${state.supersededBy}`);
      const z = zone(name);
      if (z.phase !== 'Done' && z.phase !== 'Skipped') {
        state.currentZone = name;
        state.currentStep = undefined;
        await safePoint();
        if (superseded()) return await finish('Superseded', `superseded by generation ${state.supersededBy}`);
      }
      const outcome = await runZone(name);
      if (outcome === 'superseded') return await finish('Superseded', `superseded by generation ${state.supersededBy}`);
      const more = state.order.slice(i + 1).some((n) => !['Done', 'Skipped'].includes(zone(n).phase));
      if (outcome === 'done' && more && st.pauseBetweenZonesMs > 0) {
        state.currentStep = 'PauseBetweenZones';
        await sleep(st.pauseBetweenZonesMs);
      }
      if (more && !superseded()) {
        const inf = workflowInfo();
        if (inf.continueAsNewSuggested || inf.historyLength > (input.continueAsNewAfterEvents ?? CONTINUE_AS_NEW_AFTER_EVENTS)) {
          // Zone boundary: nothing out of rotation, nothing in flight.
          await continueAsNew<typeof rolloutWorkflow>({
            ...input,
            carried: {
              zones: state.zones.map(({ name: n, phase, vmclusterGeneration, startedAt, finishedAt, message }) => ({
                name: n, phase, vmclusterGeneration, startedAt, finishedAt, message,
              })),
              conditions: state.conditions,
              pauseRequested,
              ...(state.supersededBy !== undefined ? { supersededBy: state.supersededBy } : {}),
            },
          });
        }
      }
    }
    const n = state.zones.filter((z) => z.phase === 'Done').length;
    return await finish('Succeeded', `all zones at ${spec.clusterVersion} (${n} upgraded, ${state.zones.length - n} already up to date)`);
  } catch (err) {
    if (!isCancellation(err)) throw err;
    await CancellationScope.nonCancellable(async () => {
      const inFlight = state.zones.filter((z) => z.outOfRotation);
      for (const z of inFlight) await cleanupZone(z, 'cancelled');
      state.paused = false;
      state.phase = 'Cancelled';
      const out = state.zones.filter((z) => z.outOfRotation).map((z) => z.name);
      state.message = out.length ? `cancelled; out of read rotation: ${out.join(', ')}` : 'cancelled';
      await writeStatus();
    });
    throw err;
  }
}
