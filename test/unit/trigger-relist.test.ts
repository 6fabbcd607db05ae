// What a relist does to objects the trigger has handled or is handling, executed by the real
// Reconciler on the real KeyedSerialQueue (as trigger/main.ts wires them) against small fakes of
// Temporal and of the trigger's Kubernetes I/O:
//   * a relist delivering an object again while its workflow's start is still in flight never
//     starts a second workflow: the per-object queue runs the second reconciliation only after the
//     first (start and status write) has finished, and the start is idempotent by workflow id;
//   * paused objects whose status shows their workflow Paused get no `pause` signal again.
import type { Client } from '@temporalio/client';
import { ROUTE_RECORDS_FINALIZER } from '../../api/constants';
import { workflowIdFor } from '../../api/rollout-contract';
import type { VMDistributedClusterStatus } from '../../api/types';
import type { KubeOps } from '../../trigger/kube';
import { silentLogger } from '../../trigger/log';
import { createMetrics } from '../../trigger/metrics';
import { KeyedSerialQueue } from '../../trigger/queue';
import { Reconciler } from '../../trigger/execute';
import { objectKey } from '../../trigger/watch';
import type { VmdcObject } from '../../kube/vmdc-object';
import { spec, UID, validator, InMemoryVmdc } from './trigger-helpers';

const id = (g: number) => workflowIdFor({ namespace: 'ns', name: 'c1', uid: UID, generation: g });

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Temporal as the server behaves for starts (one execution per workflow id) and signals. */
class FakeTemporal {
  readonly executions = new Map<string, string>();
  readonly startCalls: Array<{ workflowId: string; conflict: unknown; reuse: unknown }> = [];
  readonly signals: Array<{ workflowId: string; signal: string }> = [];
  inFlight = 0;
  maxInFlight = 0;
  /** When set, every start waits for it (a start "in flight"). */
  gate?: Promise<void>;

  get client(): Client {
    return {
      workflow: {
        start: async (_type: string, o: { workflowId: string; workflowIdConflictPolicy: unknown; workflowIdReusePolicy: unknown }) => {
          this.startCalls.push({ workflowId: o.workflowId, conflict: o.workflowIdConflictPolicy, reuse: o.workflowIdReusePolicy });
          this.inFlight++;
          this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
          try {
            await this.gate;
            // USE_EXISTING: a running execution of this id is returned, not started again.
            let runId = this.executions.get(o.workflowId);
            if (!runId) this.executions.set(o.workflowId, (runId = `run-${this.executions.size + 1}`));
            return { firstExecutionRunId: runId };
          } finally {
            this.inFlight--;
          }
        },
        getHandle: (workflowId: string) => ({
          signal: async (signal: string) => {
            this.signals.push({ workflowId, signal });
          },
        }),
      },
    } as unknown as Client;
  }
}

/** The trigger's Kubernetes I/O over one in-memory object (status writes as the API server does them). */
class FakeKube extends InMemoryVmdc implements KubeOps {
  readonly events: string[] = [];
  async list() {
    return { items: [this.obj] };
  }
  async get() {
    return this.obj;
  }
  async addFinalizer() {
    return 'present' as const;
  }
  async removeFinalizer() {
    return 'absent' as const;
  }
  async listRouteRecords() {
    return { verified: [], unverified: [] };
  }
  async createEvent(_o: VmdcObject, _type: string, reason: string) {
    this.events.push(reason);
  }
}

function object(generation: number, s: unknown, status?: VMDistributedClusterStatus): VmdcObject {
  return {
    apiVersion: 'vmrollout.io/v1alpha1',
    kind: 'VMDistributedCluster',
    metadata: { name: 'c1', namespace: 'ns', uid: UID, generation, resourceVersion: '1', finalizers: [ROUTE_RECORDS_FINALIZER] },
    spec: s,
    ...(status ? { status } : {}),
  };
}

function setup(obj: VmdcObject) {
  const temporal = new FakeTemporal();
  const kube = new FakeKube(obj);
  const reconciler = new Reconciler({ temporal: temporal.client, kube, validator, taskQueue: 'q', log: silentLogger, metrics: createMetrics() });
  const errors: unknown[] = [];
  const queue = new KeyedSerialQueue((_k, err) => errors.push(err));
  return { temporal, kube, reconciler, queue, errors };
}

describe('relist while a workflow start is in flight', () => {
  it('the same (stale) object delivered again: its reconciliation waits for the first; one workflow, one status write, one Event', async () => {
    const stale = object(1, spec());
    const { temporal, kube, reconciler, queue, errors } = setup(stale);
    const gate = deferred();
    temporal.gate = gate.promise;
    const key = objectKey(stale);
    void queue.push(key, async () => void (await reconciler.reconcile('add', stale)));
    await new Promise((r) => setImmediate(r));
    expect(temporal.inFlight).toBe(1);
    // The relist lists the object before the status write: the same generation, no observedGeneration.
    void queue.push(key, async () => void (await reconciler.reconcile('update', stale)));
    await new Promise((r) => setImmediate(r));
    expect(temporal.startCalls).toHaveLength(1); // the second has not begun
    gate.resolve();
    await queue.drain();

    expect(errors).toEqual([]);
    expect(temporal.maxInFlight).toBe(1);
    expect([...temporal.executions.keys()]).toEqual([id(1)]);
    // The second (a start of the same id) is answered with the same run: never a second workflow.
    expect(temporal.startCalls.every((c) => c.workflowId === id(1) && c.conflict === 'USE_EXISTING' && c.reuse === 'REJECT_DUPLICATE')).toBe(true);
    expect(kube.obj.status).toMatchObject({ observedGeneration: 1, workflow: { id: id(1), runId: 'run-1' } });
    expect(kube.statusWrites).toBe(1);
    expect(kube.events).toEqual(['RolloutStarted']);
  });

  it('the object as listed after the status write: nothing to start', async () => {
    const { temporal, kube, reconciler } = setup(object(1, spec()));
    await reconciler.reconcile('add', kube.obj);
    await reconciler.reconcile('update', kube.obj);
    expect(temporal.startCalls).toHaveLength(1);
  });

  it('control: without the per-object queue both starts would be in flight at once (the queue is what serializes them)', async () => {
    const stale = object(1, spec());
    const { temporal, reconciler } = setup(stale);
    const gate = deferred();
    temporal.gate = gate.promise;
    const both = Promise.all([reconciler.reconcile('add', stale), reconciler.reconcile('update', stale)]);
    await new Promise((r) => setImmediate(r));
    gate.resolve();
    await both;
    expect(temporal.maxInFlight).toBe(2);
  });
});

describe('relist of paused objects', () => {
  it('a workflow whose status shows it Paused gets no pause again after a relist; one whose pause has not landed does', async () => {
    const landed = object(2, spec({ paused: true }), { observedGeneration: 2, workflow: { id: id(2), runId: 'r' }, phase: 'Paused' });
    const { temporal, reconciler } = setup(landed);
    reconciler.forgetSignals(); // what every list does
    await reconciler.reconcile('update', landed);
    expect(temporal.signals).toEqual([]);

    const notYet = object(2, spec({ paused: true }), { observedGeneration: 2, workflow: { id: id(2), runId: 'r' }, phase: 'Progressing' });
    await reconciler.reconcile('update', notYet);
    expect(temporal.signals).toEqual([{ workflowId: id(2), signal: 'pause' }]);
    // Sent: not again until the next relist.
    await reconciler.reconcile('update', notYet);
    expect(temporal.signals).toHaveLength(1);
  });
});
