// A cancel always ends, even when the API server rejects every status write for good: on the REAL
// Temporal dev server (the time-skipping server can hang when an activity finishes as its workflow
// is cancelled; test/workflow/records.test.ts has the same case there). The real rollout workflow
// runs against the in-memory fake cluster of the workflow suite.
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { useTemporalDevEnv } from '../infra/harness/temporal';
import { inputOf, makeFake, withWorker } from '../workflow/setup';

jest.setTimeout(120_000);

const env = useTemporalDevEnv();

test('a cancel with a zone out and every status write rejected ends: the zone rejoins, the details say what was not written', async () => {
  const fake = makeFake();
  await withWorker(env(), fake, async (r) => {
    const held = fake.hold('waitOperational:VMAuth:vm-global', { after: 'editRoutes:remove:vm-az-a' });
    const h = await r.start(inputOf({ readDrainDelayMs: 0 }));
    await r.reach(held, 100);
    await h.signal('pause');
    held.release();
    await r.progressUntil(h, (p) => p.phase === 'Paused', 100);
    fake.rejectStatusWrites = Number.POSITIVE_INFINITY;
    await h.cancel();
    expect(((await h.result().catch((e: unknown) => e)) as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    // The cleanup still put the zone back; only the status could not say so.
    expect(fake.routeSnapshot()).toEqual(r.initialRoutes);
    expect(fake.records.size).toBe(0);
    expect((await r.progress(h)).statusError).toMatch(/StatusRejected.*HTTP 422/);
    const details = (await h.query<{ currentDetails?: string }>('__temporal_workflow_metadata')).currentDetails ?? '';
    expect(details).toMatch(/could not write the status.*Cancelled/s);
  });
});
