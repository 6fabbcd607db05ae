// Per-key serial execution: tasks for one key run one at a time in submission order; tasks for
// different keys run concurrently.

export class KeyedSerialQueue {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly onError: (key: string, err: unknown) => void = () => {}) {}

  /** Queues `task` after every earlier task of `key`. The returned promise never rejects. */
  push(key: string, task: () => Promise<void> | void): Promise<void> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const run = prev.then(async () => {
      try {
        await task();
      } catch (err) {
        this.onError(key, err);
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

  /** Resolves once every task queued so far (and those they queue meanwhile) has finished. */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}
