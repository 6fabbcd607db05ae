// Drift detection in the trigger: the pure part (trigger/drift.ts: what an object shows, what a
// VMDistributedCluster's objects add up to, the Drifted condition and which Events it is worth) and
// the reporter (trigger/drift-reporter.ts) over a fake of the trigger's Kubernetes I/O. On the real
// API server with the real trigger: test/integration/trigger-drift.test.ts.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { VMKind } from '../../api/constants';
import { OUT_OF_ROTATION_ANNOTATION } from '../../api/route-records';
import type { Condition, JsonObject } from '../../api/types';
import { APPLIED_ANNOTATION, appliedRecord } from '../../kube/applied-fields';
import {
  conditionChanges,
  driftCondition,
  driftReport,
  objectDrift,
  ObjectDriftIndex,
  OBJECTS_MESSAGE_MAX,
  planDrift,
  type DriftReport,
  type ObjectDrift,
} from '../../trigger/drift';
import { DriftReporter } from '../../trigger/drift-reporter';
import type { KubeOps } from '../../trigger/kube';
import { silentLogger } from '../../trigger/log';
import { createMetrics } from '../../trigger/metrics';
import { KeyedSerialQueue } from '../../trigger/queue';
import type { VmdcObject } from '../../kube/vmdc-object';
import { UID, InMemoryVmdc } from './trigger-helpers';

const OTHER_UID = 'ffff0000-ffff-4444-8888-000000000000';
const VMDC = { namespace: 'ns', name: 'c1', uid: UID };

/** A live VM object whose record says vmrollout applied `applied` for `vmdc`, and whose spec is now `live`. */
function vmObject(
  kind: VMKind,
  name: string,
  applied: JsonObject | undefined,
  live: JsonObject,
  opts: { vmdc?: { name: string; uid: string }; annotations?: Record<string, string>; namespace?: string } = {},
): KubernetesObject {
  const vmdc = opts.vmdc ?? { name: VMDC.name, uid: UID };
  const annotations: Record<string, string> = { ...opts.annotations };
  if (applied) annotations[APPLIED_ANNOTATION] = appliedRecord({ ...vmdc, generation: 1 }, 'overlay', applied);
  return {
    apiVersion: 'operator.victoriametrics.com/v1beta1',
    kind,
    metadata: { name, namespace: opts.namespace ?? 'ns', resourceVersion: '5', annotations },
    spec: live,
  } as KubernetesObject;
}

const drift = (kind: VMKind, name: string, applied: JsonObject | undefined, live: JsonObject, opts?: Parameters<typeof vmObject>[4]): ObjectDrift =>
  objectDrift(kind, vmObject(kind, name, applied, live, opts))!;

/** An out-of-rotation annotation with one record of `uid`. */
function routeRecord(uid: string): string {
  const record = {
    vmdc: { namespace: 'ns', name: 'c1', uid },
    zone: 'az-a',
    workflowId: 'w',
    generation: 1,
    vmcluster: { namespace: 'ns', name: 'vm-az-a' },
    removed: [{ type: 'targetRef', index: 0, targetRef: { crd: { kind: 'VMCluster/vmselect', name: 'vm-az-a', namespace: 'ns' } } }],
    since: '2024-05-01T00:00:00Z',
  };
  return JSON.stringify({ [`${uid}/az-a`]: record });
}

const cond = (status: Condition['status'], reason: string, message: string): Condition => ({
  type: 'Drifted',
  status,
  reason,
  message,
  lastTransitionTime: '2024-05-01T00:00:00Z',
});

describe('objectDrift', () => {
  it('names the VMDistributedCluster of the record and the fields whose live value differs or is gone, sorted', () => {
    const d = drift(
      'VMCluster',
      'vm-az-b',
      { clusterVersion: 'v1', vmstorage: { replicaCount: 2 }, retentionPeriod: '1' },
      { clusterVersion: 'v2', retentionPeriod: '1' },
    );
    expect(d).toEqual({
      kind: 'VMCluster',
      namespace: 'ns',
      name: 'vm-az-b',
      resourceVersion: '5',
      applied: { vmdc: { name: 'c1', uid: UID }, fields: ['.spec.clusterVersion', '.spec.vmstorage.replicaCount'], outOfReads: false },
    });
  });

  it('compares a list as a whole', () => {
    const d = drift('VMUser', 'reads-az-a', { targetRefs: [{ a: 1 }, { b: 2 }] }, { targetRefs: [{ a: 1 }] });
    expect(d.applied?.fields).toEqual(['.spec.targetRefs']);
  });

  it('an object without a (readable) record: nothing applied', () => {
    expect(drift('VMCluster', 'x', undefined, { clusterVersion: 'v2' }).applied).toBeUndefined();
    expect(
      objectDrift('VMCluster', vmObject('VMCluster', 'x', undefined, {}, { annotations: { [APPLIED_ANNOTATION]: '{not json' } }))?.applied,
    ).toBeUndefined();
  });

  it('an object that carries a route record — of that VMDistributedCluster, of another one sharing the route, or one that cannot be read — is out of reads', () => {
    const with_ = (annotation: string) =>
      drift('VMUser', 'u', { targetRefs: [1] }, { targetRefs: [] }, { annotations: { [OUT_OF_ROTATION_ANNOTATION]: annotation } }).applied?.outOfReads;
    expect(with_(routeRecord(UID))).toBe(true);
    expect(with_('{broken')).toBe(true);
    // Another rollout took its zone out of this shared route: the targetRefs it changed are not drift.
    expect(with_(routeRecord(OTHER_UID))).toBe(true);
    expect(drift('VMUser', 'u', { targetRefs: [1] }, { targetRefs: [] }).applied?.outOfReads).toBe(false);
  });
});

describe('driftReport', () => {
  it('takes the objects whose record names the live VMDistributedCluster by name and uid, in kind then name order; out-of-reads objects are skipped', () => {
    const objects = [
      drift('VMAgent', 'agent', { replicaCount: 1 }, { replicaCount: 1 }),
      drift('VMUser', 'reads-b', { targetRefs: [1] }, { targetRefs: [2] }),
      drift('VMCluster', 'vm-b', { clusterVersion: 'v1' }, { clusterVersion: 'v2' }),
      drift('VMCluster', 'vm-a', { clusterVersion: 'v1' }, { clusterVersion: 'v1' }),
      drift('VMUser', 'reads-a', { targetRefs: [1] }, { targetRefs: [] }, { annotations: { [OUT_OF_ROTATION_ANNOTATION]: routeRecord(UID) } }),
      // stale: an earlier object of that name applied it
      drift('VMCluster', 'vm-stale', { clusterVersion: 'v1' }, { clusterVersion: 'v2' }, { vmdc: { name: 'c1', uid: OTHER_UID } }),
      // another VMDistributedCluster, another namespace, no record
      drift('VMCluster', 'vm-other', { clusterVersion: 'v1' }, { clusterVersion: 'v2' }, { vmdc: { name: 'c2', uid: UID } }),
      drift('VMCluster', 'vm-b', { clusterVersion: 'v1' }, { clusterVersion: 'v2' }, { namespace: 'ns2' }),
      drift('VMCluster', 'vm-c', undefined, { clusterVersion: 'v2' }),
    ];
    expect(driftReport(VMDC, objects)).toEqual({
      checked: [
        { object: 'VMCluster vm-a', fields: [] },
        { object: 'VMCluster vm-b', fields: ['.spec.clusterVersion'] },
        { object: 'VMUser reads-b', fields: ['.spec.targetRefs'] },
        { object: 'VMAgent agent', fields: [] },
      ],
      skipped: ['VMUser reads-a'],
    });
  });
});

describe('ObjectDriftIndex', () => {
  const labels = (it: Iterable<ObjectDrift>) => [...it].map((o) => `${o.namespace}/${o.name}`).sort();

  it('gives a VMDistributedCluster only the objects whose record names it (by namespace and name; driftReport checks the uid)', () => {
    const index = new ObjectDriftIndex();
    index.set('VMCluster/ns/vm-a', drift('VMCluster', 'vm-a', { clusterVersion: 'v1' }, {}));
    index.set('VMCluster/ns/vm-stale', drift('VMCluster', 'vm-stale', { clusterVersion: 'v1' }, {}, { vmdc: { name: 'c1', uid: OTHER_UID } }));
    index.set('VMCluster/ns/vm-other', drift('VMCluster', 'vm-other', { clusterVersion: 'v1' }, {}, { vmdc: { name: 'c2', uid: UID } }));
    index.set('VMCluster/ns2/vm-a', drift('VMCluster', 'vm-a', { clusterVersion: 'v1' }, {}, { namespace: 'ns2' }));
    index.set('VMCluster/ns/vm-none', drift('VMCluster', 'vm-none', undefined, {}));
    expect(labels(index.of('ns', 'c1'))).toEqual(['ns/vm-a', 'ns/vm-stale']);
    expect(labels(index.of('ns', 'c2'))).toEqual(['ns/vm-other']);
    expect(labels(index.of('ns2', 'c1'))).toEqual(['ns2/vm-a']);
    expect(labels(index.of('ns', 'nobody'))).toEqual([]);
    expect(index.get('VMCluster/ns/vm-none')?.name).toBe('vm-none');
  });

  it('follows an object whose record moves to another VMDistributedCluster, loses its record, or is deleted', () => {
    const index = new ObjectDriftIndex();
    const key = 'VMUser/ns/u';
    index.set(key, drift('VMUser', 'u', { targetRefs: [1] }, {}));
    index.set(key, drift('VMUser', 'u', { targetRefs: [1] }, {}, { vmdc: { name: 'c2', uid: UID } }));
    expect(labels(index.of('ns', 'c1'))).toEqual([]);
    expect(labels(index.of('ns', 'c2'))).toEqual(['ns/u']);
    index.set(key, drift('VMUser', 'u', undefined, {}));
    expect(labels(index.of('ns', 'c2'))).toEqual([]);
    expect(index.get(key)).toBeDefined();
    index.set(key, drift('VMUser', 'u', { targetRefs: [1] }, {}));
    index.delete(key);
    index.delete(key);
    expect(labels(index.of('ns', 'c1'))).toEqual([]);
    expect(index.get(key)).toBeUndefined();
  });

  it('a report over the index equals one over every object (1,000 VMDistributedClusters × 6 objects)', () => {
    const index = new ObjectDriftIndex();
    const all: ObjectDrift[] = [];
    for (let c = 0; c < 1000; c++) {
      for (let z = 0; z < 6; z++) {
        const kind: VMKind = z < 3 ? 'VMCluster' : 'VMUser';
        const o = drift(
          kind,
          `c${c}-${z}`,
          { clusterVersion: 'v1' },
          { clusterVersion: z % 2 ? 'v2' : 'v1' },
          { vmdc: { name: `c${c}`, uid: z === 5 ? OTHER_UID : UID } },
        );
        index.set(`${kind}/ns/c${c}-${z}`, o);
        all.push(o);
      }
    }
    for (const c of [0, 1, 499, 999]) {
      const vmdc = { namespace: 'ns', name: `c${c}`, uid: UID };
      const viaIndex = [...index.of('ns', vmdc.name)];
      expect(viaIndex).toHaveLength(6);
      expect(driftReport(vmdc, viaIndex)).toEqual(driftReport(vmdc, all));
      expect(driftReport(vmdc, viaIndex).checked).toHaveLength(5);
    }
  });
});

describe('driftCondition', () => {
  const report = (checked: DriftReport['checked'], skipped: string[] = []): DriftReport => ({ checked, skipped });

  it('True naming each drifted object and its fields, and that the next rollout takes them back', () => {
    const c = driftCondition(
      report([
        { object: 'VMCluster vm-az-b', fields: ['.spec.clusterVersion'] },
        { object: 'VMUser reads-az-a', fields: ['.spec.targetRefs'] },
        { object: 'VMAgent a', fields: [] },
      ]),
      undefined,
    );
    expect(c).toEqual({
      type: 'Drifted',
      status: 'True',
      reason: 'FieldsChanged',
      message:
        'VMCluster vm-az-b: .spec.clusterVersion; VMUser reads-az-a: .spec.targetRefs. These fields changed since vmrollout applied them; the next rollout takes them back, zone by zone.',
    });
    expect(c).not.toHaveProperty('observedGeneration');
  });

  it('a long list is bounded: objects beyond the bound are counted, many fields of one object too', () => {
    const fields = Array.from({ length: 12 }, (_, i) => `.spec.extraArgs.flag-${i}`);
    const many = Array.from({ length: 40 }, (_, i) => ({ object: `VMCluster some-rather-long-vmcluster-name-${i}`, fields }));
    const m = driftCondition(report(many), undefined)!.message;
    expect(m.length).toBeLessThan(OBJECTS_MESSAGE_MAX + 200);
    expect(m).toMatch(/; and \d+ more objects\. These fields changed/);
    expect(m).toContain('.spec.extraArgs.flag-7 and 4 more');
    expect(m).not.toContain('flag-8');
  });

  it('False once an object carries a record of it (checked or out of reads), or while it has the condition; none before', () => {
    const noDrift = { type: 'Drifted', status: 'False', reason: 'NoDrift', message: 'Every field vmrollout applied is as it applied it.' };
    expect(driftCondition(report([{ object: 'VMCluster a', fields: [] }]), undefined)).toEqual(noDrift);
    expect(driftCondition(report([], ['VMUser u']), undefined)).toEqual(noDrift);
    expect(driftCondition(report([]), cond('True', 'FieldsChanged', 'x'))).toEqual(noDrift);
    expect(driftCondition(report([]), undefined)).toBeUndefined();
  });

  it('conditionChanges compares status, reason and message, not times', () => {
    const c = cond('False', 'NoDrift', 'Every field vmrollout applied is as it applied it.');
    expect(conditionChanges(c, driftCondition(report([]), c)!)).toBe(false);
    expect(conditionChanges(undefined, driftCondition(report([]), c)!)).toBe(true);
    expect(conditionChanges(c, driftCondition(report([{ object: 'VMCluster a', fields: ['.spec.x'] }]), c)!)).toBe(true);
  });
});

describe('planDrift: which Events', () => {
  const B = 'VMCluster vm-az-b';
  const U = 'VMUser reads-az-a';
  const r = (b: string[], u?: string[]): DriftReport => ({
    checked: [{ object: B, fields: b }, ...(u ? [{ object: U, fields: u }] : [])],
    skipped: u ? [] : [U],
  });

  it('an object whose drifted fields become non-empty or change gets a Warning Drifted naming it and them; the same fields again: none', () => {
    const first = planDrift(r(['.spec.clusterVersion'], []), undefined, new Map());
    expect(first.write).toBe(true);
    expect(first.events).toEqual([
      {
        type: 'Warning',
        reason: 'Drifted',
        message: 'VMCluster vm-az-b: .spec.clusterVersion changed since vmrollout applied it; the next rollout takes it back, zone by zone.',
      },
    ]);
    const again = planDrift(r(['.spec.clusterVersion'], []), { ...first.condition!, lastTransitionTime: 't' }, first.reported);
    expect(again).toMatchObject({ write: false, events: [] });
    const more = planDrift(r(['.spec.clusterVersion', '.spec.retentionPeriod'], []), undefined, again.reported);
    expect(more.events.map((e) => [e.reason, e.message])).toEqual([
      ['Drifted', expect.stringContaining('VMCluster vm-az-b: .spec.clusterVersion, .spec.retentionPeriod changed since vmrollout applied them')],
    ]);
  });

  it('back to none: a Normal DriftResolved, and the condition turns False', () => {
    const drifted = planDrift(r(['.spec.clusterVersion'], []), undefined, new Map());
    const back = planDrift(r([], []), { ...drifted.condition!, lastTransitionTime: 't' }, drifted.reported);
    expect(back.condition).toMatchObject({ status: 'False', reason: 'NoDrift' });
    expect(back.write).toBe(true);
    expect(back.events).toEqual([
      { type: 'Normal', reason: 'DriftResolved', message: 'VMCluster vm-az-b: every field vmrollout applied is as it applied it again.' },
    ]);
  });

  it('an object out of reads keeps what was reported for it: coming back with the same fields is no news, with other fields it is', () => {
    const seen = planDrift(r([], ['.spec.targetRefs']), undefined, new Map());
    expect(seen.events).toHaveLength(1);
    const out = planDrift(r([]), undefined, seen.reported);
    expect(out.events).toEqual([]);
    expect(out.reported.get(U)).toEqual(['.spec.targetRefs']);
    expect(planDrift(r([], ['.spec.targetRefs']), undefined, out.reported).events).toEqual([]);
    expect(planDrift(r([], ['.spec.targetRefs', '.spec.name']), undefined, out.reported).events).toHaveLength(1);
  });

  it('nothing remembered (a trigger just started): a condition that already says it all means its Events went out before', () => {
    const report = r(['.spec.clusterVersion'], []);
    const current = { ...driftCondition(report, undefined)!, lastTransitionTime: 't' } as Condition;
    expect(planDrift(report, current, undefined)).toMatchObject({ write: false, events: [] });
    expect(planDrift(report, cond('False', 'NoDrift', 'x'), undefined).events).toHaveLength(1);
    expect(planDrift(report, undefined, undefined).events).toHaveLength(1);
  });

  it('no objects and no condition: nothing to write, no Events', () => {
    expect(planDrift({ checked: [], skipped: [] }, undefined, undefined)).toEqual({ write: false, events: [], reported: new Map() });
  });
});

/** The reporter's Kubernetes I/O over one in-memory VMDistributedCluster. */
class FakeKube extends InMemoryVmdc implements Pick<KubeOps, 'patchStatus' | 'createEvent'> {
  readonly events: Array<{ type: string; reason: string; message: string }> = [];
  async createEvent(_o: VmdcObject, type: 'Normal' | 'Warning', reason: string, message: string) {
    this.events.push({ type, reason, message });
  }
}

describe('DriftReporter', () => {
  const vmdc = (): VmdcObject => ({
    apiVersion: 'vmrollout.io/v1alpha1',
    kind: 'VMDistributedCluster',
    metadata: { name: 'c1', namespace: 'ns', uid: UID, generation: 2, resourceVersion: '1' },
    spec: {},
  });

  function setup() {
    const kube = new FakeKube(vmdc());
    const queue = new KeyedSerialQueue();
    const metrics = createMetrics();
    const reporter = new DriftReporter({ kube, queue, log: silentLogger, metrics, now: () => new Date('2024-05-02T00:00:00Z') });
    reporter.objectsListed();
    // The watch delivers every status write back, as the API server's watch does.
    const settle = async () => {
      await queue.drain();
      reporter.vmdcChanged('update', kube.obj);
      await queue.drain();
    };
    return { kube, reporter, metrics, settle };
  }

  it('writes the condition and one Event per change, whatever the number of watch events; the gauge counts the fields', async () => {
    const { kube, reporter, metrics, settle } = setup();
    reporter.vmdcChanged('add', kube.obj);
    const cluster = (v: string) => vmObject('VMCluster', 'vm-az-b', { clusterVersion: 'v1' }, { clusterVersion: v });
    reporter.objectChanged('VMCluster', 'add', cluster('v1'));
    await settle();
    expect(kube.obj.status?.conditions).toEqual([
      { ...cond('False', 'NoDrift', 'Every field vmrollout applied is as it applied it.'), lastTransitionTime: '2024-05-02T00:00:00.000Z' },
    ]);
    for (let i = 0; i < 3; i++) {
      reporter.objectChanged('VMCluster', 'update', cluster('v2'));
      await settle();
    }
    expect(kube.obj.status?.conditions?.[0]).toMatchObject({
      status: 'True',
      reason: 'FieldsChanged',
      message: expect.stringContaining('VMCluster vm-az-b: .spec.clusterVersion'),
    });
    expect(kube.events.map((e) => `${e.type} ${e.reason}`)).toEqual(['Warning Drifted']);
    expect(kube.statusWrites).toBe(2);
    expect((await metrics.driftedFields.get()).values).toEqual([{ labels: { namespace: 'ns', name: 'c1' }, value: 1 }]);
    expect(reporter.observed('VMCluster', 'ns', 'vm-az-b')).toBe('5');

    reporter.objectChanged('VMCluster', 'update', cluster('v1'));
    await settle();
    expect(kube.obj.status?.conditions?.[0]).toMatchObject({ status: 'False', reason: 'NoDrift' });
    expect(kube.events.map((e) => `${e.type} ${e.reason}`)).toEqual(['Warning Drifted', 'Normal DriftResolved']);

    reporter.vmdcChanged('delete', kube.obj);
    expect((await metrics.driftedFields.get()).values).toEqual([]);
  });

  it('reports nothing before the object watches have listed: a trigger starting up does not flip Drifted=True to False', async () => {
    const kube = new FakeKube({ ...vmdc(), status: { conditions: [cond('True', 'FieldsChanged', 'VMCluster vm-az-b: .spec.clusterVersion. ...')] } });
    const queue = new KeyedSerialQueue();
    const reporter = new DriftReporter({ kube, queue, log: silentLogger, metrics: createMetrics() });
    reporter.vmdcChanged('add', kube.obj);
    await queue.drain();
    expect(kube.statusWrites).toBe(0);
    reporter.objectChanged('VMCluster', 'add', vmObject('VMCluster', 'vm-az-b', { clusterVersion: 'v1' }, { clusterVersion: 'v2' }));
    reporter.objectsListed();
    await queue.drain();
    expect(kube.obj.status?.conditions?.[0]).toMatchObject({
      status: 'True',
      message: expect.stringMatching(/^VMCluster vm-az-b: \.spec\.clusterVersion\. These fields/),
    });
    expect(kube.events).toHaveLength(1);
  });

  it('a record of an earlier object of that name (another uid) is not reported, and writes nothing', async () => {
    const { kube, reporter, settle } = setup();
    reporter.vmdcChanged('add', kube.obj);
    reporter.objectChanged(
      'VMCluster',
      'add',
      vmObject('VMCluster', 'vm-az-b', { clusterVersion: 'v1' }, { clusterVersion: 'v2' }, { vmdc: { name: 'c1', uid: OTHER_UID } }),
    );
    await settle();
    expect(kube.statusWrites).toBe(0);
    expect(kube.events).toEqual([]);
  });
});
