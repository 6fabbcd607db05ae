// Rollouts started before the step-started-at workflow version say when a zone started, not when
// it entered its current step. A watch sees the steps change, so it can date them: a step seen to
// begin is dated from that observation (exact, to the watch's latency); a step already running at
// the first look keeps the zone's start, an upper bound. A step the rollout dates itself is kept.
import type { RolloutView } from './view';

interface Seen {
  step?: string;
  since?: string;
  exact: boolean;
}

export class StepClock {
  private readonly seen = new Map<string, Seen>();

  /** `view` with the step times this clock knows better; remembers what it saw at `now`. */
  apply(view: RolloutView, now: Date): RolloutView {
    const run = view.workflow?.id ?? '';
    const zones = view.zones.map((z) => {
      const key = `${run}\u0000${z.name}`;
      const prev = this.seen.get(key);
      let next: Seen;
      if (!z.step) next = { exact: false };
      else if (z.stepSinceExact) next = { step: z.step, since: z.stepSince, exact: true };
      else if (prev && prev.step === z.step) next = prev;
      else if (prev) next = { step: z.step, since: now.toISOString(), exact: true };
      else next = { step: z.step, since: z.stepSince, exact: false };
      this.seen.set(key, next);
      return z.step ? { ...z, stepSince: next.since, stepSinceExact: next.exact } : z;
    });
    return { ...view, zones };
  }
}
