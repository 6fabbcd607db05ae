// Gates (strategy.gates) on the real time-skipping test server: where the rollout waits for a person,
// what promote and abort do there, and what their validators refuse everywhere else.
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import {
  ABORT_REASON_MAX_LENGTH,
  UPDATE_ABORT,
  UPDATE_PROMOTE,
  type AbortRequest,
  type AbortResult,
  type Progress,
  type PromoteResult,
} from '../../api/rollout-contract';
import type { rolloutWorkflow } from '../../workflows';
import type { FakeCluster } from './fake-cluster';
import { inputOf, makeFake, withWorker, useTimeSkippingEnv, type Running } from './setup';

jest.setTimeout(180_000);
const env = useTimeSkippingEnv();

type Handle = WorkflowHandle<typeof rolloutWorkflow>;
const promote = (h: Handle) => h.executeUpdate<PromoteResult, []>(UPDATE_PROMOTE);
const abort = (h: Handle, request?: AbortRequest) => h.executeUpdate<AbortResult, [AbortRequest]>(UPDATE_ABORT, { args: [request ?? {}] });
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (e: unknown) => (e instanceof WorkflowUpdateFailedError ? e.cause?.message : `not refused: ${String(e)}`),
  );
/** Whether the zone's VMCluster was written for real (a dry run or a read does not count). */
const patched = (fake: FakeCluster, zone: string) => fake.calls.some((c) => c === `applyObject:VMCluster:vm-${zone}`);
const atGate = (r: Running, h: Handle, zone: string) => r.progressUntil(h, (p: Progress) => p.awaiting?.nextZone === zone, 60_000);

test('gates hold before the first zone to upgrade and after it, every zone in reads; promote passes each; time alone does not', async () => {
  // az-a is up to date: it is skipped, so the first zone to upgrade (and the gate before it) is az-b.
  const fake = makeFake({ upToDate: ['az-a'] });
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf({ upToDate: ['az-a'], gates: ['BeforeFirstZone', 'AfterFirstZone'] }));
    const first = await atGate(r, h, 'az-b');
    expect(first).toMatchObject({ phase: 'Progressing', currentZone: 'az-b', currentStep: 'AwaitingApproval', zonesOutOfRotation: [] });
    expect(first.awaiting!.gates).toEqual(['BeforeFirstZone']);
    expect(first.zones.map((z) => z.phase)).toEqual(['Skipped', 'Pending', 'Pending']);
    const written = fake.statuses.at(-1)!;
    expect(written.awaiting).toEqual(first.awaiting);
    expect(written.message).toBe('waiting at gate BeforeFirstZone for a person, every zone in reads: promote starts zone az-b, abort ends the rollout here');
    const calls = fake.calls.length;
    await env().sleep('48h'); // a gate has no timeout: nothing moves without a person
    expect(fake.calls.length).toBe(calls);
    expect(patched(fake, 'az-b')).toBe(false);

    expect(await promote(h)).toEqual({ gates: ['BeforeFirstZone'], nextZone: 'az-b' });
    const second = await atGate(r, h, 'az-c');
    expect(second.awaiting!.gates).toEqual(['AfterFirstZone']);
    expect(second.zones.map((z) => z.phase)).toEqual(['Skipped', 'Done', 'Pending']);
    expect([patched(fake, 'az-b'), patched(fake, 'az-c')]).toEqual([true, false]);
    // A promote is for the gate in progress: the one just sent cannot pass a later one.
    expect(await promote(h)).toEqual({ gates: ['AfterFirstZone'], nextZone: 'az-c' });
    const res = await h.result();
    expect(res.phase).toBe('Succeeded');
    expect(fake.statuses.at(-1)!.awaiting).toBeUndefined();
    expect(fake.statuses.filter((s) => s.awaiting).map((s) => s.awaiting!.nextZone)).toEqual(['az-b', 'az-c']);
    expect(r.breaches(true)).toEqual([]);
  });
});

test('negative control: the same rollout without gates upgrades every zone with no one promoting', async () => {
  const fake = makeFake({ upToDate: ['az-a'] });
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf({ upToDate: ['az-a'] }));
    expect((await h.result()).phase).toBe('Succeeded');
    expect([patched(fake, 'az-b'), patched(fake, 'az-c')]).toEqual([true, true]);
    expect(fake.statuses.some((s) => s.awaiting)).toBe(false);
  });
});

test('abort at a gate ends the rollout Aborted, every zone in reads, the rest not upgraded; an over-long reason is refused', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf({ gates: ['BeforeEachZone'] }));
    await atGate(r, h, 'az-a');
    expect(await promote(h)).toEqual({ gates: ['BeforeEachZone'], nextZone: 'az-a' });
    await atGate(r, h, 'az-b');
    expect(await refusal(abort(h, { reason: 'x'.repeat(ABORT_REASON_MAX_LENGTH + 1) }))).toBe(
      `the reason must be a string of at most ${ABORT_REASON_MAX_LENGTH} characters`,
    );
    expect(await abort(h, { reason: 'canary dashboards look wrong' })).toEqual({ gates: ['BeforeEachZone'], nextZone: 'az-b', upgraded: 1 });
    const res = await h.result();
    expect(res).toMatchObject({ phase: 'Aborted', zonesOutOfRotation: [] });
    expect(res.message).toBe('aborted at gate BeforeEachZone before zone az-b (canary dashboards look wrong): every zone in reads, 1 upgraded');
    expect(res.zones.map((z) => z.phase)).toEqual(['Done', 'Pending', 'Pending']);
    expect([patched(fake, 'az-b'), patched(fake, 'az-c')]).toEqual([false, false]);
    expect(fake.routeSnapshot()).toEqual(r.initialRoutes);
    const last = fake.statuses.at(-1)!;
    expect(last).toMatchObject({ phase: 'Aborted', zonesOutOfRotation: [] });
    expect(last.awaiting).toBeUndefined();
    expect(last.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'Aborted' });
    expect(r.breaches(true)).toEqual([]);
  });
});

test('abort in the pauseBetweenZones wait ends the rollout there; with no wait and no gate both Updates are refused, saying where the rollout is', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const held = fake.hold('waitOperational:VMCluster:vm-az-a');
    const h = await r.start(inputOf({ pauseBetweenZonesMs: 3_600_000 }));
    await r.reach(held);
    // A zone in flight: neither applies (pause or cancel stop it).
    const inFlight = await refusal(abort(h));
    expect(inFlight).toMatch(
      /^no gate, pauseBetweenZones or canary wait in progress: the rollout is Progressing at zone az-a, step WaitingOperational; nothing to abort here/,
    );
    expect(await refusal(promote(h))).toBe(
      'no gate, pauseBetweenZones or canary wait in progress: the rollout is Progressing at zone az-a, step WaitingOperational; nothing to promote',
    );
    held.release();
    await r.progressUntil(h, (p) => p.currentStep === 'PauseBetweenZones', 60_000);
    expect(await abort(h)).toEqual({ nextZone: 'az-b', upgraded: 1 });
    const res = await h.result();
    expect(res.phase).toBe('Aborted');
    expect(res.message).toBe('aborted in the pause between zones before zone az-b: every zone in reads, 1 upgraded');
    expect(patched(fake, 'az-b')).toBe(false);
    expect(r.breaches(true)).toEqual([]);
  });
});

test.each<[string, string, (h: Handle) => Promise<unknown>]>([
  ['a newer generation (supersede)', 'Superseded', (h) => h.signal('supersede', { generation: 2 })],
  ['a cancel', 'Cancelled', (h) => h.cancel()],
])('%s at a gate ends the rollout %s: nothing touched, nothing out of reads, the gate cleared', async (_what, phase, stop) => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const h = await r.start(inputOf({ gates: ['BeforeFirstZone'] }));
    await atGate(r, h, 'az-a');
    await stop(h);
    await h.result().catch(() => undefined);
    const last = fake.statuses.at(-1)!;
    expect(last).toMatchObject({ phase, zonesOutOfRotation: [] });
    expect(last.awaiting).toBeUndefined();
    expect(patched(fake, 'az-a')).toBe(false);
    expect(r.breaches(true)).toEqual([]);
  });
});

test('a gate after continue-as-new: the new run holds at the gate the boundary has (AfterFirstZone once, not again)', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const h = await r.start({ ...inputOf({ gates: ['AfterFirstZone'] }), continueAsNewAfterEvents: 60 } as ReturnType<typeof inputOf>);
    // A zone's run is over 60 events: the first run continues as new after az-a. The test server's
    // queries and Updates do not follow a continued run: the gate is read from the status the run
    // writes, and promote is sent to the run that wrote it.
    const deadline = Date.now() + 60_000;
    while (!fake.statuses.at(-1)?.awaiting && Date.now() < deadline) await env().sleep(5_000);
    const last = fake.statuses.at(-1)!;
    expect(last.awaiting).toMatchObject({ gates: ['AfterFirstZone'], nextZone: 'az-b' });
    expect(last.workflow!.runId).not.toBe(fake.statuses[0]!.workflow!.runId);
    expect(await promote(env().client.workflow.getHandle(h.workflowId, last.workflow!.runId))).toEqual({ gates: ['AfterFirstZone'], nextZone: 'az-b' });
    expect((await h.result()).phase).toBe('Succeeded');
    expect(fake.statuses.filter((s) => s.awaiting).map((s) => s.awaiting!.nextZone)).toEqual(['az-b']);
  });
});

test("a zone taken over from the records is not this rollout's first zone: BeforeFirstZone holds before the first zone it upgrades afresh, the unnamed canary", async () => {
  const fake = makeFake();
  fake.patchBehaviour.set('vm-az-a', 'failed');
  await withWorker(env(), fake, async (r) => {
    const h1 = await r.start(inputOf({ generation: 1 }));
    await r.progressUntil(h1, (p) => p.phase === 'Failed');
    fake.patchBehaviour.set('vm-az-a', 'operational');
    fake.object('VMCluster', 'vm-az-a')!.updateStatus = 'expanding';
    fake.objectGeneration = 2;
    const canary = {
      bakeMs: 60_000,
      analysis: { intervalMs: 30_000, tenant: '0', queries: ['up'], recentQueries: 0, maxLatencyRatio: 2, tolerance: 0.01, maxIngestionLagMs: 30_000 },
    };
    const h2 = await r.start(inputOf({ generation: 2, gates: ['BeforeFirstZone'], canary }, [h1.workflowId]));
    // az-a (out of reads since g1) gets back first, without a gate; the gate holds before az-b.
    const p = await atGate(r, h2, 'az-b');
    expect(p.awaiting!.gates).toEqual(['BeforeFirstZone']);
    expect(p.zones.find((z) => z.name === 'az-a')).toMatchObject({ phase: 'Done', outOfRotation: false });
    await promote(h2);
    expect((await h2.result()).phase).toBe('Succeeded');
    // The canary is az-b, the first zone g2 upgraded afresh (as the dry run and kubectl vmdc plan say).
    const last = fake.statuses.at(-1)!;
    expect(last.zones!.filter((z) => z.analysis).map((z) => z.name)).toEqual(['az-b']);
  });
});
