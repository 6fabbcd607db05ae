// The e2e bed of the paired benchmarks (bench/stack/gates.ts, checks.ts): pairs of 3-zone rollouts
// one after the other on one bed, the control first (`on` false), then the variant (`on` true).
import { DEMO_CLUSTERS, DEMO_TOKENS, startE2EStack, V1, V2, V3, V4, type E2EStack } from '../../test/e2e/support';

export const PAIRED_NS = 'default';

/** Runs `pairs` pairs of `rollout` on a fresh bed (every version a new one), and stops the bed. */
export async function pairedRollouts<R>(
  opts: { name: string; vmdc: string; pairs: number; pollMs: number; progress: (m: string) => void; label: (on: boolean) => string },
  rollout: (stack: E2EStack, version: string, on: boolean) => Promise<R>,
): Promise<R[]> {
  opts.progress(`starting the e2e stack (${opts.pairs} pair(s) of rollouts)`);
  const stack = await startE2EStack({
    namespace: PAIRED_NS,
    vmdcName: opts.vmdc,
    clusters: DEMO_CLUSTERS,
    tokens: DEMO_TOKENS,
    initialVersion: V1,
    zoneDowntimeMs: 2000,
    strategy: { order: 'Declared', readDrainDelay: '500ms', queueDrainedFor: '4s', pollInterval: `${opts.pollMs}ms`, zoneTimeout: '2m' },
    taskQueue: `vmrollout-bench-${opts.name}-${process.pid}`,
  });
  try {
    const versions = [V2, V3, V4, V1];
    const runs: R[] = [];
    for (let i = 0; i < opts.pairs * 2; i++) {
      const on = i % 2 === 1;
      runs.push(await rollout(stack, versions[i % versions.length]!, on));
      opts.progress(`rollout ${i + 1} of ${opts.pairs * 2} (${opts.label(on)}) done`);
    }
    return runs;
  } finally {
    await stack.stop();
  }
}
