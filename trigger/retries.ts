// Retry timers of failed reconciliations, one per object: the n-th consecutive failure of an
// object is retried after retryDelayMs(n) (backoff.ts: exponential, fully jittered, so objects that
// failed together retry apart). A success forgets the object's attempts unless a retry is pending.
import { retryDelayMs, type Backoff, type Random } from './backoff';

export class RetrySchedule {
  private readonly entries = new Map<string, { attempt: number; timer?: NodeJS.Timeout }>();
  private stopped = false;

  constructor(
    private readonly backoff: Backoff,
    private readonly random: Random,
  ) {}

  /**
   * `key` failed: `retry` runs after the jittered delay of its attempt (an earlier pending retry of
   * the key is replaced). Returns that attempt (1 = first retry) and its delay.
   */
  failed(key: string, retry: () => void): { attempt: number; delayMs: number } {
    const e = this.entries.get(key) ?? { attempt: 0 };
    this.entries.set(key, e);
    const delayMs = retryDelayMs(e.attempt, this.backoff, this.random);
    e.attempt++;
    if (e.timer) clearTimeout(e.timer);
    if (!this.stopped) {
      e.timer = setTimeout(() => {
        e.timer = undefined;
        if (!this.stopped) retry();
      }, delayMs);
    }
    return { attempt: e.attempt, delayMs };
  }

  /** `key` succeeded: its next failure starts from the first delay again (unless a retry is pending). */
  succeeded(key: string): void {
    const e = this.entries.get(key);
    if (e && !e.timer) this.entries.delete(key);
  }

  /** No retry runs after this. */
  stop(): void {
    this.stopped = true;
    for (const e of this.entries.values()) if (e.timer) clearTimeout(e.timer);
  }
}
