// What to do next: zone order, where a failed zone resumes, whether an object is operational.
// Pure: unit-tested directly, used by the workflow.
import { OPERATIONAL } from '../api/constants';
import type { HeldMode } from '../api/traffic-mode';
import { ZONE_STEPS, type ObjectGeneration, type ZoneOrder, type ZoneStep } from '../api/types';
import type { ObjectState } from './activity-types';

/** 32-bit FNV-1a of a string. */
export function fnv1a32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** mulberry32: a small deterministic PRNG returning floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The shuffle seed of one generation of one object: `<uid>/<generation>`. It does not depend on the
 * workflow run (run id, start time, sandbox Math.random), so a replay, a reset, or a restart of the
 * same generation always yields the same order, and a new generation (or a recreated object) a new one.
 */
export function shuffleSeed(obj: Pick<ObjectGeneration, 'uid' | 'generation'>): string {
  return `${obj.uid}/${obj.generation}`;
}

/** Zone names in rollout order: as declared, or a Fisher–Yates shuffle seeded by `seed`; a named canary (strategy.canary.zone) first. */
export function planZoneOrder(zoneNames: readonly string[], order: ZoneOrder, seed: string, canary?: string): string[] {
  const out = [...zoneNames];
  if (order === 'Shuffle') {
    const rnd = mulberry32(fnv1a32(seed));
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      const t = out[i]!;
      out[i] = out[j]!;
      out[j] = t;
    }
  }
  return canary !== undefined && out.includes(canary) ? [canary, ...out.filter((z) => z !== canary)] : out;
}

/**
 * The steps a zone takes: the analysis is the canary's; a zone its trafficMode holds never rejoins
 * (nor waits for its queue: it serves no reads), and one it only takes out (`leaveOnly`) is not upgraded.
 */
export function zoneSteps(z: { canary?: boolean; held?: HeldMode; leaveOnly?: boolean }): ZoneStep[] {
  return ZONE_STEPS.filter((s) => {
    if (s === 'Analyzing') return !!z.canary;
    if (!z.held) return true;
    if (s === 'WaitingForQueue' || s === 'RejoiningReads') return false;
    return !((z.leaveOnly || z.held === 'maintenance') && (s === 'Upgrading' || s === 'WaitingOperational'));
  });
}

export function stepIndex(step: ZoneStep): number {
  return ZONE_STEPS.indexOf(step);
}

/**
 * Where `resume` restarts a Failed zone. Every step is idempotent, so the failed step is retried as
 * is, except `WaitingOperational`, which restarts at `Upgrading`: re-applying the (unchanged) merge
 * patch is harmless and returns the generation to wait for, which may have moved since.
 * `LeavingReads` re-reads the routes only if nothing was recorded as removed yet.
 */
export function resumeStep(failed: ZoneStep): ZoneStep {
  return failed === 'WaitingOperational' ? 'Upgrading' : failed;
}

/**
 * The skip rule of a zone: its VMCluster exists, applying the desired spec would not change it, and
 * it is operational at its generation: it never leaves reads (the rollout and its dry run judge alike).
 */
export function isUpToDate(cur: ObjectState, applyChanges: boolean): boolean {
  return cur.exists && !applyChanges && isOperationalAt(cur, cur.generation);
}

/** Operational at `generation` (default: the object's own generation), as the operator reports it. */
export function isOperationalAt(o: ObjectState, generation: number | undefined): boolean {
  return o.exists && o.updateStatus === OPERATIONAL && (o.observedGeneration ?? -1) >= (generation ?? o.generation ?? Number.MAX_SAFE_INTEGER);
}

/**
 * Whether this run's patch of a zone's VMCluster may have landed, decided by generations only (the
 * real operator's CRDs prune unknown fields, so comparing specs can say "not landed" for a patch
 * that did land): the patch returned, or the generation moved since the run read it, or the run
 * never knew it (a zone an earlier generation left out of reads).
 */
export function patchMayHaveLanded(z: { vmclusterGeneration?: number; baseGeneration?: number }, cur: ObjectState): boolean {
  if (!cur.exists) return false;
  return z.vmclusterGeneration !== undefined || z.baseGeneration === undefined || cur.generation !== z.baseGeneration;
}
