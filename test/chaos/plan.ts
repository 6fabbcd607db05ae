// What the chaos campaign does to one rollout, drawn from a seed: the same seed, the same faults in
// the same order (the moments they hit depend on the rollout, which the plan names by condition:
// "right after the worker's next route edit", "during a zone's queue wait"). Pure.
import { mulberry32 } from '../../workflows/plan';

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
  /**
   * How long the moment is awaited at most; past that the kill hits wherever the rollout is (a
   * `timer` kill). Unset for the first kill of each moment: that one waits as long as the rollout runs.
   */
  awaitMomentMs?: number;
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
 * After one of each, the moments are drawn with these weights, each awaited at most
 * DRAWN_MOMENT_WAIT_MS: a rollout of three zones makes only six route edits and three queue waits,
 * so kills that waited for the next one would outlast it; timers fit anywhere.
 */
const DRAWN: ReadonlyArray<[KillMoment, number]> = [
  ['after-route-edit', 0.1],
  ['queue-wait', 0.3],
  ['timer', 0.6],
];

export const DRAWN_MOMENT_WAIT_MS = 5_000;

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
    const first = i < MOMENTS.length;
    const moment = first ? MOMENTS[i]! : drawMoment(rnd());
    kills.push({
      moment,
      ...(first || moment === 'timer' ? {} : { awaitMomentMs: DRAWN_MOMENT_WAIT_MS }),
      delayMs: moment === 'after-route-edit' ? 0 : between(0, 3000),
      restartAfterMs: between(lo, hi),
    });
  }
  const infra = opts.infra.map((fault) => ({ fault, afterKill: between(0, Math.max(0, opts.kills - 1)) }));
  return { kills, infra, cancelDuringRollout: opts.cancel, zoneTimeoutBefore: opts.zoneTimeout };
}

/** The seed of each part of a campaign, derived from the campaign's seed (printed, replayable). */
export function partSeeds(seed: number, rollout: number): { plan: number; kubeWorker: number; kubeTrigger: number; metrics: number } {
  const base = (seed * 7919 + rollout * 104_729) >>> 0;
  return { plan: base, kubeWorker: (base + 1) >>> 0, kubeTrigger: (base + 2) >>> 0, metrics: (base + 3) >>> 0 };
}
