import { KeyedSerialQueue } from '../../trigger/queue';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('KeyedSerialQueue', () => {
  it('runs tasks of one key one at a time, in order', async () => {
    const q = new KeyedSerialQueue();
    const log: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const task = (n: number, delayMs: number) => async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      log.push(`start ${n}`);
      await new Promise((r) => setTimeout(r, delayMs));
      log.push(`end ${n}`);
      running--;
    };
    for (const [n, d] of [
      [1, 30],
      [2, 0],
      [3, 10],
      [4, 0],
    ] as const)
      void q.push('a', task(n, d));
    await q.drain();
    expect(maxRunning).toBe(1);
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3', 'start 4', 'end 4']);
    expect(q.activeKeys).toBe(0);
  });

  it('runs different keys concurrently', async () => {
    const q = new KeyedSerialQueue();
    const gate = deferred();
    const order: string[] = [];
    void q.push('a', async () => {
      await gate.promise;
      order.push('a');
    });
    await q.push('b', () => {
      order.push('b');
    });
    expect(order).toEqual(['b']); // b finished while a is still blocked
    gate.resolve();
    await q.drain();
    expect(order).toEqual(['b', 'a']);
  });

  it('a failing task reports its error and does not block the key', async () => {
    const errors: Array<[string, unknown]> = [];
    const q = new KeyedSerialQueue((k, e) => errors.push([k, e]));
    const order: number[] = [];
    void q.push('a', () => {
      throw new Error('boom');
    });
    void q.push('a', () => {
      order.push(2);
    });
    await q.drain();
    expect(order).toEqual([2]);
    expect(errors).toHaveLength(1);
    expect(errors[0]![0]).toBe('a');
  });

  it('tasks queued while draining are awaited too', async () => {
    const q = new KeyedSerialQueue();
    const order: number[] = [];
    void q.push('a', () => {
      order.push(1);
      void q.push('b', () => {
        order.push(2);
      });
    });
    await q.drain();
    expect(order).toEqual([1, 2]);
  });
});

describe('KeyedSerialQueue: at most `concurrency` tasks at once', () => {
  /** Pushes one task per key, each held until `gate` opens; records how many ran at once. */
  function burst(q: KeyedSerialQueue, keys: number, gate: Promise<void>) {
    const seen = { running: 0, maxRunning: 0, done: 0, order: [] as string[] };
    for (let i = 0; i < keys; i++) {
      void q.push(`k${i}`, async () => {
        seen.running++;
        seen.maxRunning = Math.max(seen.maxRunning, seen.running);
        seen.order.push(`k${i}`);
        await gate;
        seen.running--;
        seen.done++;
      });
    }
    return seen;
  }
  const ticks = async (n = 20) => {
    for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
  };

  it('a burst of 5,000 objects runs 32 at a time by default (every one of them, in the end)', async () => {
    const q = new KeyedSerialQueue();
    const gate = deferred();
    const seen = burst(q, 5000, gate.promise);
    await ticks();
    expect(seen.running).toBe(32);
    expect(q.running).toBe(32);
    expect(q.waiting).toBe(5000 - 32);
    gate.resolve();
    await q.drain();
    expect(seen.maxRunning).toBe(32);
    expect(seen.done).toBe(5000);
    expect(q.running).toBe(0);
    expect(q.waiting).toBe(0);
  });

  it('takes its cap from the constructor, and hands slots out first come, first served', async () => {
    const q = new KeyedSerialQueue(undefined, 3);
    const gate = deferred();
    const seen = burst(q, 10, gate.promise);
    await ticks();
    expect(seen.order).toEqual(['k0', 'k1', 'k2']);
    gate.resolve();
    await q.drain();
    expect(seen.maxRunning).toBe(3);
    expect(seen.order).toEqual(Array.from({ length: 10 }, (_, i) => `k${i}`));
  });

  it('keeps each key serial and in order under the cap; a task waiting for its own key holds no slot', async () => {
    const q = new KeyedSerialQueue(undefined, 2);
    const a1 = deferred();
    const order: string[] = [];
    void q.push('a', async () => {
      order.push('a1 start');
      await a1.promise;
      order.push('a1 end');
    });
    void q.push('a', () => {
      order.push('a2');
    });
    // Slot 2 is free although a2 is queued: b runs now, while a1 still holds slot 1.
    await q.push('b', () => {
      order.push('b');
    });
    expect(order).toEqual(['a1 start', 'b']);
    a1.resolve();
    await q.drain();
    expect(order).toEqual(['a1 start', 'b', 'a1 end', 'a2']);
  });

  it('a failing task gives its slot back', async () => {
    const errors: string[] = [];
    const q = new KeyedSerialQueue((k) => errors.push(k), 1);
    void q.push('a', () => {
      throw new Error('boom');
    });
    const ran: string[] = [];
    void q.push('b', () => {
      ran.push('b');
    });
    await q.drain();
    expect(errors).toEqual(['a']);
    expect(ran).toEqual(['b']);
    expect(q.running).toBe(0);
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses a cap of %p', (n) => {
    expect(() => new KeyedSerialQueue(undefined, n)).toThrow(RangeError);
  });
});
