// Per-key serial execution with a global cap: tasks for one key run one at a time in submission
// order; tasks for different keys run concurrently, but at most `concurrency` of them at once.
// The cap exists because a trigger meeting thousands of objects at once (a start, a relist after an
// outage) would otherwise fire every object's Kubernetes and Temporal calls together: the API server
// times out, every failure retries, and memory grows with every request in flight
// (docs/benchmarks.md, "The trigger facing many objects it has never seen").

/** Default cap of tasks running at once (RECONCILE_CONCURRENCY). */
export const DEFAULT_CONCURRENCY = 32;

/**
 * A counting semaphore handing slots out in FIFO order. A released slot goes straight to the
 * oldest waiter (it is never free in between), so a burst of new tasks cannot overtake those
 * already waiting.
 */
class Slots {
  private free: number;
  private readonly waiters: Array<() => void> = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`concurrency must be a positive integer, got ${limit}`);
    this.free = limit;
  }

  acquire(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.free++;
  }

  /** Slots held. */
  get inUse(): number {
    return this.limit - this.free;
  }

  /** Acquirers waiting for a slot. */
  get waiting(): number {
    return this.waiters.length;
  }
}

export class KeyedSerialQueue {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly pending = new Set<Promise<void>>();
  private readonly slots: Slots;

  constructor(
    private readonly onError: (key: string, err: unknown) => void = () => {},
    concurrency: number = DEFAULT_CONCURRENCY,
  ) {
    this.slots = new Slots(concurrency);
  }

  /**
   * Queues `task` after every earlier task of `key`. The returned promise never rejects. A task may
   * push other tasks but must not await them: holding its slot, it could wait for a slot forever.
   */
  push(key: string, task: () => Promise<void> | void): Promise<void> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    // The slot is taken only once the key's previous task has finished: a task waiting for its own
    // key never holds a slot another key could use.
    const run = prev.then(async () => {
      await this.slots.acquire();
      try {
        await task();
      } catch (err) {
        this.onError(key, err);
      } finally {
        this.slots.release();
      }
    });
    this.tails.set(key, run);
    this.pending.add(run);
    void run.then(() => {
      this.pending.delete(run);
      if (this.tails.get(key) === run) this.tails.delete(key);
    });
    return run;
  }

  /** Keys with queued or running work. */
  get activeKeys(): number {
    return this.tails.size;
  }

  /** Tasks running now (at most the cap). */
  get running(): number {
    return this.slots.inUse;
  }

  /** Tasks whose key is free but that wait for a slot. */
  get waiting(): number {
    return this.slots.waiting;
  }

  /** Resolves once every task queued so far (and those they queue meanwhile) has finished. */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}
