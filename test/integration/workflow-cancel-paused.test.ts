// Cancel while paused, on the REAL Temporal dev server (the time-skipping server can hang when an
// activity finishes as its workflow is cancelled). The real rollout workflow runs against the
// in-memory fake cluster of the workflow suite; the invariant checker judges every edit.
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { useTemporalDevEnv } from '../infra/harness/temporal';
import { inputOf, makeFake, withWorker } from '../workflow/setup';

jest.setTimeout(120_000);

const env = useTemporalDevEnv();

test.each([
  ['before the patch: az-a rejoins at once', 'waitOperational:VMAuth:vm-global@editRoutes:remove:vm-az-a', 'Upgrading', []],
  ['patched, not yet operational: az-a stays out and the status says why', 'applyObject:VMCluster:vm-az-a', 'WaitingOperational', ['az-a']],
  ['after the drain: az-a rejoins', 'watchQueue:vm-az-a', 'RejoiningReads', []],
])('cancel while paused %s', async (_name, holdKey, pausedBefore, staysOut) => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    // `call@after`: the call made after that one (prepare waits on the VMAuth too).
    const [key, after] = holdKey.split('@') as [string, string | undefined];
    const held = fake.hold(key, { after });
    const h = await r.start(inputOf({ readDrainDelayMs: 0 }));
    await r.reach(held, 100);
    await h.signal('pause');
    held.release();
    const p = await r.progressUntil(h, (p) => p.phase === 'Paused', 100);
    expect(p.currentStep).toBe(pausedBefore);
    expect(p.zonesOutOfRotation).toEqual(['az-a']);
    await h.cancel();
    expect(((await h.result().catch((e: unknown) => e)) as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    const st = fake.statuses.at(-1)!;
    expect(st).toMatchObject({ phase: 'Cancelled', zonesOutOfRotation: staysOut });
    if (staysOut.length === 0) {
      expect(fake.routeSnapshot()).toEqual(r.initialRoutes);
      expect(fake.records.size).toBe(0);
    } else {
      expect(st.zones?.find((z) => z.name === 'az-a')?.message).toMatch(/stays out of read rotation \(cancelled\): VMCluster not operational/);
      expect([...fake.records.keys()].sort()).toEqual(['VMAuth/vm-global', 'VMUser/reads-az-a']);
    }
    expect(r.breaches(true)).toEqual([]);
  });
});
