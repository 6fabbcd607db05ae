// Shared fixtures for the trigger-* unit tests.
import type { Client } from '@temporalio/client';
import type { RecordedRoute } from '../../api/route-records';
import type { RecordExpectation, RecordListing, UnverifiedRecord } from '../../api/record-verification';
import { validateSpec, formatIssues } from '../../api/validate';
import type { ObjectGeneration, VMDistributedClusterStatus } from '../../api/types';
import type { SpecValidator } from '../../trigger/decide';
import { Reconciler } from '../../trigger/execute';
import { statusGuard, type KubeOps, type ObjectRef } from '../../trigger/kube';
import { silentLogger } from '../../trigger/log';
import { createMetrics } from '../../trigger/metrics';
import type { VmdcObject } from '../../kube/vmdc-object';

export const validator: SpecValidator = { validate: validateSpec, format: formatIssues };
export const UID = '0123abcd-ffff-4444-8888-000000000000';

/** A valid raw spec with two bare zone references. */
export function spec(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    clusterVersion: 'v1.150.0-cluster',
    zones: [
      { name: 'az-a', vmcluster: { name: 'vm-az-a' } },
      { name: 'az-b', vmcluster: { name: 'vm-az-b' } },
    ],
    vmauth: { name: 'vm-global' },
    vmagent: { name: 'vm-global' },
    ...extra,
  };
}

/** One in-memory VMDistributedCluster whose status is written as the API server does (uid and generation guarded). */
export class InMemoryVmdc {
  statusWrites = 0;
  constructor(public obj: VmdcObject) {}
  async patchStatus(og: ObjectGeneration, compute: (fresh: VmdcObject) => VMDistributedClusterStatus | undefined) {
    if (this.obj.metadata?.uid !== og.uid || this.obj.metadata?.generation !== og.generation) return false;
    const patch = compute(this.obj);
    if (!patch) return false;
    this.obj = { ...this.obj, status: { ...this.obj.status, ...patch } };
    this.statusWrites++;
    return true;
  }
}

/** Temporal as the Reconciler uses it: visibility (possibly stale), describe, cancel. */
export class FakeTemporal {
  /** Real state, by id: what describe says. */
  readonly status = new Map<string, string>();
  /** What the visibility query returns (may lag behind `status`). */
  visible: string[] = [];
  readonly cancels: string[] = [];
  readonly started: string[] = [];
  /** signalWithStart calls: the workflow signalled (started if not running) and what it was sent. */
  readonly signalledWithStart: Array<{ type: string; workflowId: string; args: unknown[]; signal: string; signalArgs: unknown[] }> = [];

  get client(): Client {
    const notFound = (wid: string) => Object.assign(new Error(`workflow ${wid} not found`), { name: 'WorkflowNotFoundError' });
    const visible = () => this.visible;
    return {
      workflow: {
        list: () =>
          (async function* () {
            for (const workflowId of visible()) yield { workflowId };
          })(),
        getHandle: (wid: string) => ({
          describe: async () => {
            const s = this.status.get(wid);
            if (!s) throw notFound(wid);
            return { status: { name: s }, runId: 'r', memo: {} };
          },
          cancel: async () => {
            if (!this.status.has(wid)) throw notFound(wid);
            this.cancels.push(wid);
          },
          signal: async () => undefined,
        }),
        start: async (_t: string, o: { workflowId: string }) => {
          this.started.push(o.workflowId);
          this.status.set(o.workflowId, 'RUNNING');
          return { firstExecutionRunId: 'r1' };
        },
        signalWithStart: async (type: string, o: { workflowId: string; args: unknown[]; signal: string; signalArgs: unknown[] }) => {
          this.signalledWithStart.push({ type, workflowId: o.workflowId, args: o.args, signal: o.signal, signalArgs: o.signalArgs });
          this.status.set(o.workflowId, 'RUNNING');
          return { workflowId: o.workflowId };
        },
      },
    } as unknown as Client;
  }
}

/** The trigger's Kubernetes I/O over one in-memory object. */
export class FakeKube implements KubeOps {
  records: RecordedRoute[] | Error = [];
  unverified: UnverifiedRecord[] = [];
  readonly expectations: RecordExpectation[] = [];
  readonly events: Array<{ type: string; reason: string; message: string }> = [];
  readonly finalizerCalls: string[] = [];
  statusWrites = 0;

  constructor(public obj: VmdcObject | undefined) {}

  async list() {
    return { items: this.obj ? [this.obj] : [] };
  }
  async get() {
    return this.obj;
  }
  async patchStatus(og: ObjectGeneration, compute: (fresh: VmdcObject) => VMDistributedClusterStatus | undefined, opts: { deleting?: boolean } = {}) {
    if (!this.obj || !statusGuard(this.obj, og, !!opts.deleting)) return false;
    const patch = compute(this.obj);
    if (!patch) return false;
    this.obj = { ...this.obj, status: { ...this.obj.status, ...patch } };
    this.statusWrites++;
    return true;
  }
  async addFinalizer(ref: ObjectRef, f: string) {
    this.finalizerCalls.push(`add ${f}`);
    const md = this.obj?.metadata;
    if (!md || md.uid !== ref.uid) return 'gone' as const;
    if (md.finalizers?.includes(f)) return 'present' as const;
    if (md.deletionTimestamp) return 'deleting' as const;
    md.finalizers = [...(md.finalizers ?? []), f];
    return 'added' as const;
  }
  async removeFinalizer(ref: ObjectRef, f: string) {
    this.finalizerCalls.push(`remove ${f}`);
    const md = this.obj?.metadata;
    if (!md || md.uid !== ref.uid) return 'gone' as const;
    if (!md.finalizers?.includes(f)) return 'absent' as const;
    md.finalizers = md.finalizers.filter((x) => x !== f);
    return 'removed' as const;
  }
  async listRouteRecords(_namespace: string, expect: RecordExpectation): Promise<RecordListing> {
    this.expectations.push(expect);
    if (this.records instanceof Error) throw this.records;
    return { verified: this.records, unverified: this.unverified };
  }
  async createEvent(_o: VmdcObject, type: 'Normal' | 'Warning', reason: string, message: string) {
    this.events.push({ type, reason, message });
  }
}

/** A Reconciler over the fakes, with the object given (or none). */
export function reconcilerOver(obj: VmdcObject | undefined) {
  const temporal = new FakeTemporal();
  const kube = new FakeKube(obj);
  const reconciler = new Reconciler({ temporal: temporal.client, kube, validator, taskQueue: 'q', log: silentLogger, metrics: createMetrics() });
  return { temporal, kube, reconciler };
}
