// The zone boundaries a person acts on: a gate (strategy.gates), where the rollout waits for
// `promote` or `abort`, the pauseBetweenZones wait, which `promote` ends early, and the wait after a
// canary's Inconclusive analysis (the one wait with a zone out: the canary). The Updates act
// on the wait in progress only: their validators refuse at any other moment, saying why, so a
// promote or abort sent a moment late cannot skip or stop anything else. Every zone is in reads at
// a gate: an abort there ends the rollout with nothing out.
import { condition } from '@temporalio/workflow';
import { ABORT_REASON_MAX_LENGTH, type AbortRequest, type AbortResult, type PromoteResult } from '../api/rollout-contract';
import type { Awaiting, Gate } from '../api/types';
import { now } from './run-context';
import type { RolloutSignals } from './signals';
import type { RolloutState, RunNote } from './state';
import { rolloutPhase } from './status';

type Decision = { kind: 'promoted' } | { kind: 'aborted'; note: Extract<RunNote, { kind: 'aborted' }> };
type Wait = ({ kind: 'gate'; gates: Gate[]; nextZone: string } | { kind: 'pause'; after: string; nextZone: string; until: number }) & { decision?: Decision };

/** How a boundary ended: what a person decided, a gate superseded, or the pause's time up. */
export type BoundaryEnd = Decision | { kind: 'superseded' } | { kind: 'elapsed' };

export class Boundary {
  private wait: Wait | undefined;

  constructor(
    private readonly state: RolloutState,
    private readonly signals: RolloutSignals,
  ) {}

  /**
   * Wait at a gate before `nextZone` until promoted, aborted or superseded (cancellation ends it
   * too); status.awaiting says so meanwhile (`tell` writes it).
   */
  gate(gates: Gate[], nextZone: string, tell: () => Promise<unknown>): Promise<BoundaryEnd> {
    return this.hold({ kind: 'gate', gates, nextZone }, { gates, nextZone, since: now() }, tell);
  }

  /**
   * Wait for a person after the canary's analysis was Inconclusive (the canary out of reads, every
   * other zone in): promote puts it back and goes on, abort fails it; as a gate otherwise.
   */
  canary(zone: string, tell: () => Promise<unknown>): Promise<BoundaryEnd> {
    return this.hold({ kind: 'gate', gates: [], nextZone: zone }, { gates: [], nextZone: zone, canary: zone, since: now() }, tell);
  }

  /**
   * Wait for a person after the capacity guard breached while `zone` is out (`why`), before its next
   * step: promote goes on, abort fails the zone (it stays out); as a gate otherwise.
   */
  capacity(zone: string, why: string, tell: () => Promise<unknown>): Promise<BoundaryEnd> {
    return this.hold({ kind: 'gate', gates: [], nextZone: zone }, { gates: [], nextZone: zone, capacity: why, since: now() }, tell);
  }

  private async hold(w: Wait, awaiting: Awaiting, tell: () => Promise<unknown>): Promise<BoundaryEnd> {
    const { state, signals } = this;
    this.wait = w;
    const step = state.currentStep;
    state.awaiting = awaiting;
    state.currentStep = 'AwaitingApproval';
    try {
      await tell();
      await condition(() => w.decision !== undefined || signals.superseded());
    } finally {
      this.wait = undefined;
      state.awaiting = undefined;
      state.currentStep = step;
    }
    return w.decision ?? { kind: 'superseded' };
  }

  /** The pauseBetweenZones wait after zone `after`: ended by its timer, promote or abort. */
  async pause(after: string, nextZone: string, ms: number): Promise<BoundaryEnd> {
    const w: Wait = (this.wait = { kind: 'pause', after, nextZone, until: Date.now() + ms });
    try {
      // One timer, as the sleep it replaces (replays of histories with that sleep stay valid).
      await condition(() => w.decision !== undefined, ms);
    } finally {
      this.wait = undefined;
    }
    return w.decision ?? { kind: 'elapsed' };
  }

  /** Why a promote or abort does not apply now, or undefined when it does. */
  refusal(verb: 'promote' | 'abort', request?: AbortRequest): string | undefined {
    const reason = request?.reason;
    if (reason !== undefined && (typeof reason !== 'string' || reason.length > ABORT_REASON_MAX_LENGTH))
      return `the reason must be a string of at most ${ABORT_REASON_MAX_LENGTH} characters`;
    if (this.wait && !this.wait.decision) return undefined;
    const { state } = this;
    const where = `${state.currentZone ? ` at zone ${state.currentZone}` : ''}${state.currentStep ? `, step ${state.currentStep}` : ''}`;
    const then =
      verb === 'promote'
        ? 'nothing to promote'
        : 'nothing to abort here (a zone in flight is stopped by `kubectl vmdc pause`, or cancelled: the cancel puts it back into reads)';
    return `no gate, pauseBetweenZones or canary wait in progress: the rollout is ${rolloutPhase(state)}${where}; ${then}`;
  }

  promote(): PromoteResult {
    const w = this.wait!;
    w.decision = { kind: 'promoted' };
    return w.kind === 'gate' ? { gates: w.gates, nextZone: w.nextZone } : { after: w.after, skippedMs: Math.max(0, w.until - Date.now()) };
  }

  abort(request?: AbortRequest): AbortResult {
    const w = this.wait!;
    const gates = w.kind === 'gate' ? { gates: w.gates } : {};
    const upgraded = upgradedZones(this.state);
    w.decision = { kind: 'aborted', note: { kind: 'aborted', zone: w.nextZone, ...gates, ...(request?.reason ? { reason: request.reason } : {}), upgraded } };
    return { ...gates, nextZone: w.nextZone, upgraded };
  }
}

/** Zones this rollout upgraded so far. */
export function upgradedZones(state: Pick<RolloutState, 'zones'>): number {
  return state.zones.filter((z) => z.phase === 'Done').length;
}

/**
 * Zones this rollout upgraded afresh so far: where the gates hold and which zone is the unnamed
 * canary count these, as the dry run and `kubectl vmdc plan` do. A zone taken over from the records
 * finishes an earlier rollout's work: it is never this rollout's first zone.
 */
export function freshUpgrades(state: Pick<RolloutState, 'zones'>): number {
  return state.zones.filter((z) => z.phase === 'Done' && !z.adopted).length;
}
