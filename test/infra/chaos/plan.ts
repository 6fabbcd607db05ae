// What the chaos campaign does to one rollout, drawn from a seed: the same seed, the same faults in
// the same order (the moments they hit depend on the rollout, which the plan names by condition:
// "right after the worker's next route edit", "during a zone's queue wait"). Pure.
import { mulberry32 } from '../../../workflows/plan';

/** When a worker kill hits. */
export type KillMoment =
  /** Right after the worker's next successful route edit (between the edit and its status write). */
  | 'after-route-edit'
  /** While a zone's queue wait runs (a heartbeating activity held by the worker). */
  | 'queue-wait'
  /** A while after the previous restart, wherever the rollout is. */
  | 'timer';

export interface WorkerKill {
  moment: KillMoment;
  /** For `timer`: how long after the previous restart; for `queue-wait`: how far into the wait. */
  delayMs: number;
  /** How long the worker stays dead (1–5 s). */
  restartAfterMs: number;
}

export type InfraFault = 'restart-temporal' | 'restart-trigger' | 'restart-apiserver' | 'vmagent-not-ready';

export interface RolloutPlan {
  kills: WorkerKill[];
  /** Each once, after the kill of the same index (spread over the rollout). */
  infra: Array<{ fault: InfraFault; afterKill: number }>;
  /** Cancel the rollout once a zone is out of reads, kill the worker during the cleanup, then roll out again. */
  cancelDuringRollout: boolean;
  /** Before it: a generation whose first zone's VictoriaMetrics outlasts zoneTimeout (Failed, the zone kept out). */
  zoneTimeoutBefore: boolean;
}

export interface PlanOptions {
  kills: number;
  infra: readonly InfraFault[];
  cancel: boolean;
  zoneTimeout: boolean;
  /** Bounds of restartAfterMs. */
  restartAfterMs?: [number, number];
}

const MOMENTS: readonly KillMoment[] = ['after-route-edit', 'queue-wait', 'timer'];
/**
 * After one of each, the moments are drawn with these weights: a rollout of three zones makes only
 * six route edits and three queue waits; timers fit anywhere.
 */
const DRAWN: ReadonlyArray<[KillMoment, number]> = [
  ['after-route-edit', 0.1],
  ['queue-wait', 0.3],
  ['timer', 0.6],
];

function drawMoment(r: number): KillMoment {
  let acc = 0;
  for (const [m, w] of DRAWN) if (r < (acc += w)) return m;
  return 'timer';
}

export function planRollout(seed: number, opts: PlanOptions): RolloutPlan {
  const rnd = mulberry32(seed);
  const between = (lo: number, hi: number) => Math.round(lo + rnd() * (hi - lo));
  const [lo, hi] = opts.restartAfterMs ?? [1000, 5000];
  const kills: WorkerKill[] = [];
  for (let i = 0; i < opts.kills; i++) {
    // Every moment at least once when there are enough kills, then drawn.
    const moment = i < MOMENTS.length ? MOMENTS[i]! : drawMoment(rnd());
    kills.push({ moment, delayMs: moment === 'after-route-edit' ? 0 : between(0, 3000), restartAfterMs: between(lo, hi) });
  }
  const infra = opts.infra.map((fault) => ({ fault, afterKill: between(0, Math.max(0, opts.kills - 1)) }));
  return { kills, infra, cancelDuringRollout: opts.cancel, zoneTimeoutBefore: opts.zoneTimeout };
}

/** The seed of each part of a campaign, derived from the campaign's seed (printed, replayable). */
export function partSeeds(seed: number, rollout: number): { plan: number; kubeWorker: number; kubeTrigger: number; metrics: number } {
  const base = (seed * 7919 + rollout * 104_729) >>> 0;
  return { plan: base, kubeWorker: (base + 1) >>> 0, kubeTrigger: (base + 2) >>> 0, metrics: (base + 3) >>> 0 };
}

/** How long a kill awaits its moment at most before it hits wherever the rollout is (a `timer` kill). */
export const MOMENT_WAIT_MS = 5_000;

/**
 * Which moment the next kill aims at, and how long it waits for it (undefined: as long as the
 * rollout runs). A moment the plan asked for that did not come within its wait is owed: the next
 * kills aim at it first, and once no more kills are left than moments owed, they wait for it as
 * long as it takes — so every moment lands without a far-off one holding the kills before it. Pure.
 */
export function aimKill(planned: KillMoment, owed: readonly KillMoment[], killsLeft: number): { moment: KillMoment; waitMs?: number } {
  const moment = owed[0] ?? planned;
  if (moment === 'timer') return { moment };
  return killsLeft <= owed.length ? { moment } : { moment, waitMs: MOMENT_WAIT_MS };
}

/** The moments still owed after a kill aimed at `aimed` hit at `hit`. */
export function owedAfter(owed: readonly KillMoment[], aimed: KillMoment, hit: KillMoment, landed: ReadonlySet<KillMoment>): KillMoment[] {
  if (hit === aimed) return owed.filter((m) => m !== aimed);
  return owed.includes(aimed) || landed.has(aimed) ? [...owed] : [...owed, aimed];
}
