// Runs one zone through its steps: skips a zone already at the desired spec, stops at safe points
// (pause, supersede), holds a failed zone until resume, supersede or cancel. A zone its trafficMode
// holds (write-only, maintenance) leaves reads and never rejoins: write-only is upgraded out of
// reads, maintenance is left alone; one already out (recorded) does not leave again.
import { ZONE_STEPS, type ZoneSpec, type ZoneStep } from '../api/types';
import { FailureType, isStepFailure, stepFailure } from './failures';
import type { Outcome } from './failure-hold';
import { isUpToDate, resumeStep, stepIndex, zoneSteps } from './plan';
import type { RolloutRun } from './rollout-run';
import { now, zoneSpec, type RunContext } from './run-context';
import { safePoint } from './safe-point';
import { heldStaysOut, zoneState, type RunNote, type ZoneState } from './state';
import { freshUpgrades } from './boundary';
import { gatesBefore, isCanaryZone } from './gates';
import { cleanupZone } from './zone-cleanup';
import { clusterApply, guardCapacity, ZONE_STEP_HANDLERS, type ZoneContext } from './zone-steps';
import { describeStorage, storageObject, storageRef } from '../api/storage';

/** How a zone ended: its Outcome, skipped (up to date), or the rollout aborted at its gate. */
export type ZoneEnd = Outcome | 'skipped' | { aborted: Extract<RunNote, { kind: 'aborted' }> };

export async function runZone(run: RolloutRun, name: string): Promise<ZoneEnd> {
  const { state, ctx, report } = run;
  const z = zoneState(state, name);
  const zs = zoneSpec(ctx, name);
  state.currentZone = name;
  if (z.phase === 'Done' || z.phase === 'Skipped') return 'skipped';
  // A zone found out of reads (adopted from the records) has its first step set: it never skips.
  // Maintenance: its VMCluster is left alone, not even read.
  const check = z.step !== undefined ? RUN : z.held === 'maintenance' ? UP_TO_DATE : await checkUpToDate(run, z, zs);
  if (check.kind === 'up-to-date') {
    if (!z.held || z.outOfRotation) return markSkipped(run, z);
    z.leaveOnly = true;
  }
  // A held zone already out: its switch confirmed again, then upgraded (write-only, not up to date).
  const heldOut = z.step === undefined && z.held !== undefined && z.outOfRotation;
  // A zone found out of reads must get back: no gate holds it.
  const gates = z.step === undefined && !heldOut ? gatesBefore(ctx.st.gates, freshUpgrades(state)) : [];
  if (gates.length) {
    const end = await run.boundary.gate(gates, name, () => report.write());
    if (end.kind === 'superseded') return 'superseded';
    if (end.kind === 'aborted') return { aborted: end.note };
  }
  z.startedAt = now();
  if (z.step === undefined && !z.held && isCanaryZone(ctx.st.canary, name, freshUpgrades(state))) z.canary = true;
  z.step ??= heldOut ? 'WaitingForSwitch' : 'LeavingReads';
  const c: ZoneContext = { ctx, state, z, zs, edited: {}, report, reads: run.reads, signals: run.signals, boundary: run.boundary };
  // Changed in reads: the zone fails there, before its first step; a resume takes the full path. (A
  // held zone already out was not in reads: it goes on.)
  let changedInReads = check.kind === 'changed-in-reads' && !heldOut ? check.message : undefined;
  const steps = async (): Promise<Outcome> => {
    const changed = changedInReads;
    changedInReads = undefined;
    if (changed) throw stepFailure(FailureType.ChangedInReads, changed);
    return runSteps(run, c);
  };
  const outcome = await run.hold.run(steps, {
    zone: z,
    onFailure: (msg) => {
      z.failedStep = z.step;
      z.phase = 'Failed';
      z.note = { kind: 'failed', step: z.step!, reason: msg };
    },
    onResume: () => {
      z.step = resumeStep(z.failedStep ?? 'LeavingReads');
      // The switch is confirmed against the route objects as they are now.
      if (z.step === 'WaitingForSwitch') c.edited.vmauthGeneration = undefined;
      z.failedStep = undefined;
    },
    cleanup: (why) => cleanupZone(run, z, why),
  });
  if (outcome === 'done') {
    // A held zone not upgraded is Skipped: out of reads, at the spec it had.
    z.phase = z.leaveOnly ? 'Skipped' : 'Done';
    z.step = undefined;
    z.stepStartedAt = undefined;
    z.finishedAt = now();
    z.note = z.held ? { kind: 'held', mode: z.held, upgraded: !z.leaveOnly } : undefined;
    state.currentStep = undefined;
    state.run = { kind: 'zone-done', zone: name };
    await report.write();
  }
  return outcome;
}

type SkipCheck = { kind: 'up-to-date' } | { kind: 'run' } | { kind: 'changed-in-reads'; message: string };
const RUN: SkipCheck = { kind: 'run' };
const UP_TO_DATE: SkipCheck = { kind: 'up-to-date' };

/**
 * Whether the zone's VMCluster already matches the desired spec and is operational (then it never
 * leaves reads, unless its trafficMode holds it). One whose VMCluster the apply after the dry run
 * changed after all (an edit landed in between) was changed in reads [I2]: never reported Skipped.
 */
async function checkUpToDate({ ctx }: RolloutRun, z: ZoneState, zs: ZoneSpec): Promise<SkipCheck> {
  const cur = await ctx.acts.short.readObject(storageObject(zs, ctx.ns));
  const applied = cur.exists ? await upToDate(ctx, zs) : 'changes';
  if (applied === 'changed') {
    z.baseGeneration = cur.exists ? cur.generation : 0;
    return {
      kind: 'changed-in-reads',
      message: `${describeStorage(storageRef(zs, ctx.ns))} changed while in read rotation: the dry run found it at the desired spec, and the apply after it changed it (an edit landed in between); check the zone, then resume: it leaves reads and is upgraded as any other`,
    };
  }
  if (!isUpToDate(cur, applied !== 'unchanged')) {
    z.baseGeneration = cur.exists ? cur.generation : 0;
    return RUN;
  }
  z.vmclusterGeneration = cur.generation;
  return UP_TO_DATE;
}

/** Nothing to do: up to date in reads, or held out of reads already (and up to date, or in maintenance). */
async function markSkipped({ state, report }: RolloutRun, z: ZoneState): Promise<'skipped'> {
  z.phase = 'Skipped';
  z.note = z.held ? { kind: 'held', mode: z.held, upgraded: false } : { kind: 'skipped' };
  state.run = { kind: 'zone-skipped', zone: z.name };
  await report.write();
  return 'skipped';
}

/**
 * Whether the VMCluster's spec is the desired one: the API server says (a dry run that leaves the
 * generation alone: also a key removed from an overlay counts), and an apply that changes only
 * metadata (the applied record, ownership) is made right away: it restarts nothing ('unchanged'),
 * unless it changed the spec after all ('changed': an edit landed after the dry run). A dry run that
 * fails is not up to date ('changes'): the zone's own preflight reports it.
 */
async function upToDate(ctx: RunContext, zs: ZoneSpec): Promise<'unchanged' | 'changes' | 'changed'> {
  const it = clusterApply(ctx, zs);
  try {
    if ((await ctx.acts.short.applyObject({ ...it, dryRun: true })).changed) return 'changes';
    return (await ctx.acts.short.applyObject(it)).changed ? 'changed' : 'unchanged';
  } catch (err) {
    if (isStepFailure(err)) return 'changes';
    throw err;
  }
}

/** The steps the capacity guard looks before: the zone is out (its switch confirmed and its reads drained) until it rejoins. */
const GUARDED_STEPS: ReadonlySet<ZoneStep> = new Set<ZoneStep>(['Upgrading', 'WaitingOperational', 'WaitingForQueue', 'Analyzing', 'RejoiningReads']);

/** The steps from the zone's current one to the end, each after a safe point. */
async function runSteps(run: RolloutRun, c: ZoneContext): Promise<Outcome> {
  const { state, signals } = run;
  const { z } = c;
  for (let i = stepIndex(z.step!); i < ZONE_STEPS.length; i++) {
    const s = ZONE_STEPS[i]!;
    if (!zoneSteps(z).includes(s)) continue;
    z.step = s;
    state.currentStep = s;
    await safePoint(run);
    if (signals.superseded() && !z.patchAttempted) return stopBeforePatch(run, z);
    if (GUARDED_STEPS.has(s)) await guardCapacity(c);
    enterStep(z, s);
    z.note = z.outOfRotation ? { kind: 'out-for-upgrade' } : undefined;
    state.run = { kind: 'zone-step', zone: z.name, step: s };
    await run.report.write();
    await ZONE_STEP_HANDLERS[s](c);
  }
  return 'done';
}

/** The zone's phase becomes step `s`, dated from now. */
function enterStep(z: ZoneState, s: ZoneStep): void {
  z.phase = s;
  z.stepStartedAt = now();
}

/** Superseded before the VMCluster changed: rejoin at once (if out, and no trafficMode holds it) and stop here. */
async function stopBeforePatch({ state, signals, report, ctx, reads }: RolloutRun, z: ZoneState): Promise<Outcome> {
  if (z.outOfRotation && z.held) {
    z.phase = 'Pending';
    z.step = undefined;
    z.stepStartedAt = undefined;
    z.note = heldStaysOut(z, `superseded by generation ${signals.supersededBy}`);
    await report.write();
    return 'superseded';
  }
  if (z.outOfRotation) {
    state.currentStep = 'RejoiningReads';
    enterStep(z, 'RejoiningReads');
    await report.write();
    await reads.rejoin(z, ctx.acts.step);
  }
  z.phase = 'Pending';
  z.step = undefined;
  z.stepStartedAt = undefined;
  z.note = { kind: 'superseded-unpatched', generation: signals.supersededBy! };
  await report.write();
  return 'superseded';
}
