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
    for (const [n, d] of [[1, 30], [2, 0], [3, 10], [4, 0]] as const) void q.push('a', task(n, d));
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
