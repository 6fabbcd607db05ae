// The trigger's finalizer (ROUTE_RECORDS_FINALIZER) executed by the Reconciler against small fakes of
// Temporal and of its Kubernetes I/O: when it is added, when it stays (a workflow still runs, route
// records remain or cannot be read) and what the status and Events then say, and when it goes.
// The same on the real API server and Temporal: test/integration/trigger-finalizer.test.ts.
import { ROUTE_RECORDS_FINALIZER } from '../../api/constants';
import type { OutOfRotationRecord, RecordedRoute } from '../../api/route-records';
import { workflowIdFor } from '../../api/rollout-contract';
import type { VMDistributedClusterStatus } from '../../api/types';
import { statusGuard } from '../../trigger/kube';
import { deletionBlockedStatus } from '../../trigger/deletion';
import type { VmdcObject } from '../../kube/vmdc-object';
import { reconcilerOver, spec, UID } from './trigger-helpers';

const id = (g: number) => workflowIdFor({ namespace: 'ns', name: 'c1', uid: UID, generation: g });

function record(zone: string, route: RecordedRoute['route']): RecordedRoute {
  const r: OutOfRotationRecord = {
    vmdc: { namespace: 'ns', name: 'c1', uid: UID },
    route: { ...route, uid: `uid-${route.name}` },
    zone,
    workflowId: id(2),
    generation: 2,
    vmcluster: { namespace: 'ns', name: `vm-${zone}` },
    removed: [{ type: 'object', index: 0, objectIndex: 1, object: { name: `vm-${zone}`, namespace: 'ns' } }],
    since: '2024-05-01T00:00:00Z',
  };
  return { route, record: r };
}

/** The object at generation 3 (bumped by the deletion), being deleted, with its workflow of generation 2 in the status. */
function deletingObject(
  finalizers = ['example.com/other', ROUTE_RECORDS_FINALIZER],
  status: VMDistributedClusterStatus = { observedGeneration: 2, workflow: { id: id(2), runId: 'r' }, phase: 'Progressing' },
): VmdcObject {
  return {
    apiVersion: 'vmrollout.io/v1alpha1',
    kind: 'VMDistributedCluster',
    metadata: { name: 'c1', namespace: 'ns', uid: UID, generation: 3, resourceVersion: '7', deletionTimestamp: new Date('2024-05-01T00:00:00Z'), finalizers },
    spec: spec(),
    status,
  };
}

describe('Reconciler: finalizer on objects being deleted', () => {
  it('a workflow still runs → cancelled once, finalizer kept, no status written by the trigger, look again later', async () => {
    const { temporal, kube, reconciler } = reconcilerOver(deletingObject());
    temporal.status.set(id(2), 'RUNNING');
    temporal.visible = [id(2)];
    expect(await reconciler.reconcile('update', kube.obj!)).toEqual({ blocked: true, running: [id(2)] });
    expect(temporal.cancels).toEqual([id(2)]);
    expect(kube.finalizerCalls).toEqual([]);
    expect(kube.statusWrites).toBe(0);
    // Reconciled again while its cleanup runs: not asked to cancel again.
    expect(await reconciler.reconcile('update', kube.obj!)).toEqual({ blocked: true, running: [id(2)] });
    expect(temporal.cancels).toEqual([id(2)]);
  });

  it('a workflow the status does not name, found by visibility, also holds the finalizer', async () => {
    const { temporal, kube, reconciler } = reconcilerOver(deletingObject(undefined, {}));
    temporal.status.set(id(3), 'RUNNING');
    temporal.visible = [id(3), 'vmdc/ns/c1/g1-ffffffff']; // another uid's: ignored
    temporal.status.set('vmdc/ns/c1/g1-ffffffff', 'RUNNING');
    expect(await reconciler.reconcile('update', kube.obj!)).toEqual({ blocked: true, running: [id(3)] });
    expect(temporal.cancels).toEqual([id(3)]);
  });

  it('no workflow runs (visibility still lists a closed one: describe decides) and no records → finalizer removed, the other kept', async () => {
    const { temporal, kube, reconciler } = reconcilerOver(deletingObject());
    temporal.status.set(id(2), 'CANCELLED');
    temporal.visible = [id(2)];
    expect(await reconciler.reconcile('update', kube.obj!)).toEqual({ blocked: false, running: [] });
    expect(kube.finalizerCalls).toEqual([`remove ${ROUTE_RECORDS_FINALIZER}`]);
    expect(kube.obj?.metadata?.finalizers).toEqual(['example.com/other']);
    expect(kube.events).toEqual([]);
  });

  it('records remain → finalizer kept; status names the zones and routes and the release command; one Warning Event per state', async () => {
    const { temporal, kube, reconciler } = reconcilerOver(deletingObject());
    temporal.status.set(id(2), 'CANCELLED');
    kube.records = [record('az-b', { kind: 'VMAuth', name: 'vm-global' }), record('az-b', { kind: 'VMUser', name: 'reads-az-b' })];
    expect(await reconciler.reconcile('update', kube.obj!)).toEqual({ blocked: true, running: [] });
    expect(kube.finalizerCalls).toEqual([]);
    expect(kube.obj?.status?.zonesOutOfRotation).toEqual(['az-b']);
    expect(kube.obj?.status?.phase).toBe('Progressing'); // what the workflow left
    const message = kube.obj?.status?.message;
    expect(message).toBe(
      `being deleted, held by finalizer vmrollout.io/route-records: zone out of read rotation: az-b (VMAuth vm-global, VMUser reads-az-b); ` +
        `release it with \`kubectl vmdc release-zone --namespace ns --uid ${UID} --zone az-b\`, ` +
        'or restore those routes and remove their vmrollout.io/out-of-rotation records by hand',
    );
    expect(kube.events).toEqual([{ type: 'Warning', reason: 'ZoneOutOfRotation', message }]);

    // The same state again (a recheck, a relist): no new write, no new Event.
    expect(await reconciler.reconcile('update', kube.obj!)).toEqual({ blocked: true, running: [] });
    expect(kube.events).toHaveLength(1);
    expect(kube.statusWrites).toBe(1);

    // A person released the VMUser's entry only: a new state, a new Event.
    kube.records = [record('az-b', { kind: 'VMAuth', name: 'vm-global' })];
    expect(await reconciler.reconcile('update', kube.obj!)).toEqual({ blocked: true, running: [] });
    expect(kube.events).toHaveLength(2);
    expect(kube.events[1]?.message).toContain('az-b (VMAuth vm-global);');

    // ... then the rest: the finalizer goes.
    kube.records = [];
    expect(await reconciler.reconcile('update', kube.obj!)).toEqual({ blocked: false, running: [] });
    expect(kube.obj?.metadata?.finalizers).toEqual(['example.com/other']);
  });

  it('unverified records hold nothing (a forged or garbled annotation cannot block a deletion): finalizer removed, a Warning Event says what was not acted on', async () => {
    const { temporal, kube, reconciler } = reconcilerOver(deletingObject());
    temporal.status.set(id(2), 'COMPLETED');
    kube.unverified = [{ route: { kind: 'VMAuth', name: 'vm-global' }, reason: 'vmrollout.io/out-of-rotation is not JSON' }];
    expect(await reconciler.reconcile('update', kube.obj!)).toEqual({ blocked: false, running: [] });
    expect(kube.obj?.metadata?.finalizers).toEqual(['example.com/other']);
    expect(kube.events).toEqual([
      { type: 'Warning', reason: 'RouteRecordsUnverified', message: expect.stringContaining('VMAuth vm-global: vmrollout.io/out-of-rotation is not JSON') },
    ]);
    // The records were verified against the object's own spec (its zones and routes).
    expect(kube.expectations.at(-1)).toMatchObject({
      namespace: 'ns',
      uid: UID,
      spec: { routes: expect.arrayContaining([{ kind: 'VMAuth', name: expect.any(String) }]) },
    });
  });

  it('verified records hold the finalizer; the unverified ones beside them are named in the status', async () => {
    const { temporal, kube, reconciler } = reconcilerOver(deletingObject());
    temporal.status.set(id(2), 'COMPLETED');
    kube.records = [record('az-b', { kind: 'VMAuth', name: 'vm-global' })];
    kube.unverified = [
      { route: { kind: 'VMUser', name: 'x' }, zone: 'az-c', reason: 'record of zone az-c is on a route its VMDistributedCluster does not manage' },
    ];
    expect(await reconciler.reconcile('update', kube.obj!)).toEqual({ blocked: true, running: [] });
    expect(kube.finalizerCalls).toEqual([]);
    expect(kube.obj?.status?.zonesOutOfRotation).toEqual(['az-b']);
    expect(kube.obj?.status?.message).toContain('; not acted on (unverified): VMUser x: record of zone az-c is on a route');
  });

  it('any other error listing the records is thrown (retried by the caller), the finalizer stays', async () => {
    const { temporal, kube, reconciler } = reconcilerOver(deletingObject());
    temporal.status.set(id(2), 'COMPLETED');
    kube.records = Object.assign(new Error('HTTP 403'), { code: 403 });
    await expect(reconciler.reconcile('update', kube.obj!)).rejects.toThrow('HTTP 403');
    expect(kube.finalizerCalls).toEqual([]);
  });

  it('being deleted without our finalizer → cancel only: nothing to finalize, nothing blocked', async () => {
    const { temporal, kube, reconciler } = reconcilerOver(deletingObject(['example.com/other']));
    temporal.status.set(id(2), 'RUNNING');
    expect(await reconciler.reconcile('update', kube.obj!)).toEqual({ blocked: false, running: [] });
    expect(temporal.cancels).toEqual([id(2)]);
    expect(kube.finalizerCalls).toEqual([]);
  });
});

describe('Reconciler: finalizer on new rollouts', () => {
  const fresh = (): VmdcObject => ({
    apiVersion: 'vmrollout.io/v1alpha1',
    kind: 'VMDistributedCluster',
    metadata: { name: 'c1', namespace: 'ns', uid: UID, generation: 1, resourceVersion: '1', finalizers: ['example.com/other'] },
    spec: spec(),
  });

  it('adds the finalizer (keeping others) before it starts the workflow', async () => {
    const { temporal, kube, reconciler } = reconcilerOver(fresh());
    expect(await reconciler.reconcile('add', kube.obj!)).toEqual({ blocked: false, running: [] });
    expect(kube.obj?.metadata?.finalizers).toEqual(['example.com/other', ROUTE_RECORDS_FINALIZER]);
    expect(temporal.started).toEqual([id(1)]);
  });

  it('an object deleted before the finalizer could be added → no workflow started', async () => {
    const { temporal, kube, reconciler } = reconcilerOver(fresh());
    const seen = fresh();
    kube.obj!.metadata!.deletionTimestamp = new Date(); // the watch has not seen it yet
    expect(await reconciler.reconcile('add', seen)).toEqual({ blocked: false, running: [] });
    expect(kube.finalizerCalls).toEqual([`add ${ROUTE_RECORDS_FINALIZER}`]);
    expect(temporal.started).toEqual([]);
    kube.obj = undefined;
    expect(await reconciler.reconcile('add', seen)).toEqual({ blocked: false, running: [] });
    expect(temporal.started).toEqual([]);
  });
});

describe('deletionBlockedStatus', () => {
  it('several zones: every zone with its routes, zonesOutOfRotation sorted, a command per zone', () => {
    const s = deletionBlockedStatus(
      { namespace: 'ns', uid: UID },
      {
        routes: [record('az-c', { kind: 'VMUser', name: 'reads-az-c' }), record('az-a', { kind: 'VMAuth', name: 'vm-global' })],
        unverified: [],
      },
    );
    expect(s.zonesOutOfRotation).toEqual(['az-a', 'az-c']);
    expect(s.message).toContain('zones out of read rotation: az-a (VMAuth vm-global), az-c (VMUser reads-az-c); release each with');
    expect(s.message).toContain(`--namespace ns --uid ${UID} --zone <zone>`);
  });
});

describe('statusGuard', () => {
  const og = { namespace: 'ns', name: 'c1', uid: UID, generation: 2 };
  const at = (generation: number, extra: Record<string, unknown> = {}): VmdcObject => ({
    metadata: { name: 'c1', namespace: 'ns', uid: UID, generation, ...extra },
  });
  it('a rollout write: same uid at the same generation only', () => {
    expect(statusGuard(at(2), og, false)).toBe(true);
    expect(statusGuard(at(3), og, false)).toBe(false);
    expect(statusGuard({ metadata: { ...at(2).metadata, uid: 'other' } }, og, false)).toBe(false);
  });
  it('the deletion report: same uid being deleted, at any generation (the deletion itself bumps it)', () => {
    expect(statusGuard(at(3, { deletionTimestamp: new Date() }), og, true)).toBe(true);
    expect(statusGuard(at(2), og, true)).toBe(false);
    expect(statusGuard({ metadata: { ...at(3, { deletionTimestamp: new Date() }).metadata, uid: 'other' } }, og, true)).toBe(false);
  });
});
