// The capacity guard (strategy.capacityGuard) on the time-skipping test server: while a zone is out,
// before each of its next steps, the reads the other zones carried since the last look are judged
// (workflows/capacity.ts) from vmauth's counters as the fake's readReadHealth serves them; a breach
// waits for a person with the zone out.
import { UPDATE_ABORT, UPDATE_PROMOTE, type AbortRequest, type AbortResult, type PromoteResult } from '../../api/rollout-contract';
import type { WorkflowHandle } from '@temporalio/client';
import type { rolloutWorkflow } from '../../workflows';
import type { FakeCluster } from './fake-cluster';
import { inputOf, makeFake, withWorker, useTimeSkippingEnv } from './setup';

jest.setTimeout(180_000);
const env = useTimeSkippingEnv();

type Handle = WorkflowHandle<typeof rolloutWorkflow>;
const promote = (h: Handle) => h.executeUpdate<PromoteResult, []>(UPDATE_PROMOTE);
const abort = (h: Handle, request?: AbortRequest) => h.executeUpdate<AbortResult, [AbortRequest]>(UPDATE_ABORT, { args: [request ?? {}] });
const GUARD = { maxErrorRatio: 0.01, maxLatencyRatio: 3 };
const patched = (fake: FakeCluster, zone: string) => fake.calls.some((c) => c === `applyObject:VMCluster:vm-${zone}`);
const looks = (fake: FakeCluster) => fake.calls.filter((c) => c.startsWith('readReadHealth'));

test('reads failing while a zone is out: the rollout waits before its next step, the zone out and not upgraded; promote goes on once healthy', async () => {
  const fake = makeFake();
  fake.readWindow = { requests: 100, errors: 20, meanMs: 5 };
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf({ capacityGuard: GUARD }));
    const p = await r.progressUntil(h, (p) => p.awaiting !== undefined, 30_000);
    expect(p.awaiting).toMatchObject({ nextZone: 'az-a', gates: [], capacity: expect.stringMatching(/^20 of 100 reads failed \(20\.00% > 1%\)$/) });
    expect(p.message).toMatch(
      /^the capacity guard stopped before zone az-a's next step \(20 of 100 reads failed .*\): waiting for a person, the zone out of reads/,
    );
    const a = p.zones.find((z) => z.name === 'az-a')!;
    expect(a).toMatchObject({ outOfRotation: true, capacity: { breached: true, requests: 100, errorRatio: 0.2, latencyMs: 5, baselineLatencyMs: 5 } });
    expect(patched(fake, 'az-a')).toBe(false);
    // The carriers it reads: the zones still in reads.
    expect(looks(fake)).toEqual(['readReadHealth:vm-az-b,vm-az-c', 'readReadHealth:vm-az-b,vm-az-c']);

    fake.readWindow = { requests: 100, errors: 0, meanMs: 5 };
    expect(await promote(h)).toEqual({ gates: [], nextZone: 'az-a' });
    expect((await h.result()).phase).toBe('Succeeded');
    // One look before leaving and one before each of the 4 steps after the switch, per zone.
    expect(looks(fake)).toHaveLength(3 * 5);
    expect(fake.statuses.at(-1)!.zones!.find((z) => z.name === 'az-c')!.capacity).toMatchObject({
      breached: false,
      message: expect.stringMatching(/^carriers healthy: 100 reads/),
    });
    expect(r.breaches(true)).toEqual([]);
  });
});

test('negative control: the same failing reads without strategy.capacityGuard never stop the rollout, nothing is read', async () => {
  const fake = makeFake();
  fake.readWindow = { requests: 100, errors: 20, meanMs: 5 };
  await withWorker(env(), fake, async (r) => {
    expect((await (await r.start(inputOf())).result()).phase).toBe('Succeeded');
    expect(looks(fake)).toEqual([]);
  });
});

test('reads three times slower (and 100 ms more) than before the zone left breach; abort fails the zone, out of reads, before its upgrade', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    // The look before az-a leaves: 5 ms; the next one (before its upgrade): 400 ms.
    fake.nextReadWindows.push({ requests: 100, errors: 0, meanMs: 5 }, { requests: 100, errors: 0, meanMs: 400 });
    const h = await r.start(inputOf({ capacityGuard: GUARD }));
    const p = await r.progressUntil(h, (p) => p.awaiting !== undefined, 30_000);
    expect(p.awaiting!.capacity).toBe("vmauth's mean read latency 400 ms, 3× and 100 ms over its 5 ms before the zone left");
    await abort(h, { reason: 'carriers overloaded' });
    const f = await r.progressUntil(h, (p) => p.phase === 'Failed');
    expect(f.zones.find((z) => z.name === 'az-a')).toMatchObject({ phase: 'Failed', failedStep: 'Upgrading', outOfRotation: true });
    expect(f.message).toMatch(/capacity guard: vmauth's mean read latency 400 ms.*aborted by a person \(carriers overloaded\): the zone stays out of reads/);
    expect(patched(fake, 'az-a')).toBe(false);
    await h.cancel();
  });
});

test('reads that cannot be measured are a breach: the guard cannot say the carriers are fine', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    fake.nextReadWindows.push(
      { requests: 100, errors: 0, meanMs: 5 },
      { requests: 0, errors: 0, meanMs: 0, unreadable: 'service vmauth-vm-global: no ready pod' },
    );
    const h = await r.start(inputOf({ capacityGuard: GUARD }));
    const p = await r.progressUntil(h, (p) => p.awaiting !== undefined, 30_000);
    expect(p.awaiting!.capacity).toBe("the carriers' reads cannot be measured: service vmauth-vm-global: no ready pod");
    await h.cancel();
  });
});
