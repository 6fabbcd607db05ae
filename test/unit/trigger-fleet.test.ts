// The trigger's hand-over of a fleet member's generation (spec.fleet) to its fleet's parent workflow,
// executed by the Reconciler against small fakes of Temporal and of its Kubernetes I/O. On the real
// stack: test/e2e/fleet.test.ts.
import { ROUTE_RECORDS_FINALIZER } from '../../api/constants';
import { FLEET_WORKFLOW_TYPE, SIGNAL_FLEET_MEMBER, type FleetMemberRequest } from '../../api/fleet-contract';
import { workflowIdFor } from '../../api/rollout-contract';
import type { VMDistributedClusterStatus } from '../../api/types';
import type { VmdcObject } from '../../kube/vmdc-object';
import { reconcilerOver, spec, UID } from './trigger-helpers';

const child = workflowIdFor({ namespace: 'ns', name: 'c1', uid: UID, generation: 1 });

function member(status?: VMDistributedClusterStatus, fleet: object | null = { name: 'prod', region: 'eu-west' }): VmdcObject {
  return {
    apiVersion: 'vmrollout.io/v1alpha1',
    kind: 'VMDistributedCluster',
    metadata: { name: 'c1', namespace: 'ns', uid: UID, generation: 1, resourceVersion: '1', finalizers: [ROUTE_RECORDS_FINALIZER] },
    spec: spec(fleet ? { fleet } : {}),
    ...(status ? { status } : {}),
  };
}

describe('Reconciler: fleet members', () => {
  it("hands the generation to its fleet's parent workflow (signalWithStart), never starts it itself; the status names the child and says it is queued", async () => {
    const { temporal, kube, reconciler } = reconcilerOver(member());
    await reconciler.reconcile('add', kube.obj!);
    expect(temporal.started).toEqual([]);
    expect(temporal.signalledWithStart).toHaveLength(1);
    const s = temporal.signalledWithStart[0]!;
    expect(s).toMatchObject({ type: FLEET_WORKFLOW_TYPE, workflowId: 'fleet/ns/prod', args: [{ namespace: 'ns', name: 'prod' }], signal: SIGNAL_FLEET_MEMBER });
    const req = s.signalArgs[0] as FleetMemberRequest;
    expect(req.workflowId).toBe(child);
    expect(req.input.object).toEqual({ namespace: 'ns', name: 'c1', uid: UID, generation: 1 });
    expect(req.input.spec.fleet).toEqual({ name: 'prod', region: 'eu-west' });
    expect(kube.obj?.status).toMatchObject({
      observedGeneration: 1,
      workflow: { id: child, runId: '' },
      phase: 'Pending',
      message: 'queued in fleet prod (workflow fleet/ns/prod), region eu-west: starts once no other member of the region rolls out',
    });
    expect(kube.events.map((e) => e.reason)).toEqual(['RolloutQueued']);
  });

  it('a child the fleet started already (a trigger restarted before observedGeneration was written) is not handed over again: its run is recorded', async () => {
    const { temporal, kube, reconciler } = reconcilerOver(member());
    temporal.status.set(child, 'RUNNING');
    await reconciler.reconcile('add', kube.obj!);
    expect(temporal.signalledWithStart).toEqual([]);
    expect(kube.obj?.status).toMatchObject({ observedGeneration: 1, workflow: { id: child, runId: expect.any(String) } });
    expect(kube.obj?.status?.phase).toBeUndefined();
  });

  it('the child wrote its own status before the hand-over was recorded: that status stands', async () => {
    const { kube, reconciler } = reconcilerOver(member({ workflow: { id: child, runId: 'run-1' }, phase: 'Progressing', message: 'az-a: LeavingReads' }));
    await reconciler.reconcile('add', kube.obj!);
    expect(kube.obj?.status).toMatchObject({
      observedGeneration: 1,
      workflow: { id: child, runId: 'run-1' },
      phase: 'Progressing',
      message: 'az-a: LeavingReads',
    });
    expect(kube.events).toEqual([]);
  });

  it('without spec.fleet the trigger starts the rollout itself', async () => {
    const { temporal, kube, reconciler } = reconcilerOver(member(undefined, null));
    await reconciler.reconcile('add', kube.obj!);
    expect(temporal.started).toEqual([child]);
    expect(temporal.signalledWithStart).toEqual([]);
  });
});

describe('Reconciler: a generation still queued in its fleet', () => {
  const queued: VMDistributedClusterStatus = {
    observedGeneration: 1,
    workflow: { id: child, runId: '' },
    phase: 'Pending',
    message: 'queued in fleet prod (workflow fleet/ns/prod), region eu-west: starts once no other member of the region rolls out',
  };

  it('is handed over again at every look (a fleet terminated with members queued cannot strand them); the status stays, no new Event', async () => {
    const { temporal, kube, reconciler } = reconcilerOver(member(queued));
    await reconciler.reconcile('update', kube.obj!);
    expect(temporal.signalledWithStart.map((s) => [s.workflowId, (s.signalArgs[0] as FleetMemberRequest).workflowId])).toEqual([['fleet/ns/prod', child]]);
    expect(kube.obj?.status).toEqual(queued);
    expect(kube.events).toEqual([]);
  });

  it('once its child runs (the status names a run), only spec.paused is forwarded, as for any rollout', async () => {
    const { temporal, kube, reconciler } = reconcilerOver(member({ ...queued, workflow: { id: child, runId: 'run-1' }, phase: 'Progressing' }));
    await reconciler.reconcile('update', kube.obj!);
    expect(temporal.signalledWithStart).toEqual([]);
    expect(temporal.started).toEqual([]);
  });
});
