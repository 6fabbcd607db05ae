// Runs one zone through its steps: skips a zone already at the desired spec, stops at safe points
// (pause, supersede), holds a failed zone until resume, supersede or cancel.
import { ZONE_STEPS, type ZoneSpec, type ZoneStep } from '../api/types';
import { isOperationalAt, resumeStep, stepIndex } from './plan';
import type { Outcome, RolloutRun } from './rollout-run';
import type { ZoneState } from './state';
import { cleanupZone } from './zone-cleanup';
import { clusterApply, ZONE_STEP_HANDLERS, type ZoneContext } from './zone-steps';
import { isStepFailure } from './failures';

export async function runZone(run: RolloutRun, name: string): Promise<Outcome | 'skipped'> {
  const { state } = run;
  const z = run.zone(name);
  const zs = run.zoneSpec(name);
  state.currentZone = name;
  if (z.phase === 'Done' || z.phase === 'Skipped') return 'skipped';
  // A zone found out of reads (adopted from the records) has its first step set: it never skips.
  if (z.step === undefined && (await skipIfUpToDate(run, z))) return 'skipped';
  z.startedAt = run.now();
  z.step ??= 'LeavingReads';
  const c: ZoneContext = { run, z, zs, edited: {} };
  const outcome = await run.withFailureHold(() => runSteps(c), {
    zone: z,
    onFailure: (msg) => {
      z.failedStep = z.step;
      z.phase = 'Failed';
      z.message = z.outOfRotation ? `failed at ${z.step}, kept out of read rotation: ${msg}` : `failed at ${z.step}: ${msg}`;
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
    z.phase = 'Done';
    z.step = undefined;
    z.stepStartedAt = undefined;
    z.finishedAt = run.now();
    z.message = undefined;
    state.currentStep = undefined;
    state.message = `zone ${name} done`;
    await run.writeStatus();
  }
  return outcome;
}

/** A zone whose VMCluster already matches the desired spec and is operational never leaves reads. */
async function skipIfUpToDate(run: RolloutRun, z: ZoneState): Promise<boolean> {
  const zs = run.zoneSpec(z.name);
  const cur = await run.acts.short.readObject({ kind: 'VMCluster', namespace: run.ns, name: zs.vmcluster.name });
  if (!(cur.exists && (await upToDate(run, zs)) && isOperationalAt(cur, cur.generation))) {
    z.baseGeneration = cur.exists ? cur.generation : 0;
    return false;
  }
  z.phase = 'Skipped';
  z.vmclusterGeneration = cur.generation;
  z.message = 'already up to date and operational';
  run.state.message = `zone ${z.name} already up to date`;
  await run.writeStatus();
  return true;
}

/**
 * Whether the VMCluster's spec is the desired one: the API server says (a dry run that leaves the
 * generation alone: also a key removed from an overlay counts), and an apply that changes only
 * metadata (the applied record, ownership) is made right away: it restarts nothing. A dry run that
 * fails is not up to date: the zone's own preflight reports it.
 */
async function upToDate(run: RolloutRun, zs: ZoneSpec): Promise<boolean> {
  const it = clusterApply(run, zs);
  try {
    if ((await run.acts.short.applyObject({ ...it, dryRun: true })).changed) return false;
    await run.acts.short.applyObject(it);
    return true;
  } catch (err) {
    if (isStepFailure(err)) return false;
    throw err;
  }
}

/** The steps from the zone's current one to the end, each after a safe point. */
async function runSteps(c: ZoneContext): Promise<Outcome> {
  const { run, z } = c;
  const { state } = run;
  for (let i = stepIndex(z.step!); i < ZONE_STEPS.length; i++) {
    const s = ZONE_STEPS[i]!;
    z.step = s;
    state.currentStep = s;
    await run.safePoint();
    if (run.superseded() && !z.patchAttempted) return stopUnpatched(run, z);
    enterStep(run, z, s);
    z.message = z.outOfRotation ? outOfRotationMessage(z) : undefined;
    state.phase = 'Progressing';
    state.message = `zone ${z.name}: ${s}`;
    await run.writeStatus();
    await ZONE_STEP_HANDLERS[s](c);
  }
  return 'done';
}

/** The zone's phase becomes step `s`, dated from now. */
function enterStep(run: RolloutRun, z: ZoneState, s: ZoneStep): void {
  z.phase = s;
  z.stepStartedAt = run.now();
}

/** Superseded before the VMCluster changed: rejoin at once (if out) and stop here. */
async function stopUnpatched(run: RolloutRun, z: ZoneState): Promise<Outcome> {
  if (z.outOfRotation) {
    run.state.currentStep = 'RejoiningReads';
    enterStep(run, z, 'RejoiningReads');
    await run.writeStatus();
    await run.rejoin(z, run.acts.step);
  }
  z.phase = 'Pending';
  z.step = undefined;
  z.stepStartedAt = undefined;
  z.message = `not upgraded: superseded by generation ${run.state.supersededBy}`;
  await run.writeStatus();
  return 'superseded';
}


/** Why a zone is out of reads, and how its leaving was confirmed in the pods. */
function outOfRotationMessage(z: ZoneState): string {
  const why = 'out of read rotation for the upgrade';
  return z.switchConfirmed ? `${why} (${z.switchConfirmed})` : why;
}
