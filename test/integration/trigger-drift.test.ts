// Drift detection by the real trigger on a real kube-apiserver (the environment: trigger-env.ts). A
// VM object gets its record (vmrollout.io/applied) from the real applyObject activity, as a rollout
// writes it; a person then changes an applied field by hand (a JSON merge patch as `kubectl edit`
// sends it): the trigger reports it in the VMDistributedCluster's Drifted condition and a Warning
// Event, and reports it gone once the field is back. Negative controls: an object without a record,
// and an object that carries an out-of-rotation record of the VMDistributedCluster, are not
// reported. Every wait polls real state; "not reported" is checked once the trigger has taken in
// the object's latest state and has nothing left to do.
import * as k8s from '@kubernetes/client-node';
import { applyObject } from '../../activities/objects/apply-object';
import { KubeObjects } from '../../kube/custom-objects';
import type { VMKind } from '../../api/constants';
import { formatRecords, OUT_OF_ROTATION_ANNOTATION, recordKey } from '../../api/route-records';
import type { Condition, JsonObject } from '../../api/types';
import type { TriggerHandle } from '../../trigger/main';
import { waitFor } from '../infra/harness/processes';
import { mergePatch as patchObject } from '../e2e/support';
import { T, triggerEnv, type Vmdc } from './trigger-env';

jest.setTimeout(120_000);

const NS = 'trigger-drift';
const E = triggerEnv({ name: 'trigger-drift', namespaces: [NS], namespace: NS });
const { trigger, logTail, createWithObjects, createVm, get, events } = E;

let t: TriggerHandle;
let kube: KubeObjects;

beforeAll(async () => {
  await E.setup();
  kube = new KubeObjects(E.kube.kubeConfig);
  t = await trigger();
  await t.synced;
}, 240_000);

afterAll(() => E.teardown(), 120_000);

/** A VMCluster/vmselect targetRef (the operator's CRD requires crd.name and crd.namespace). */
const vmselects = (objects: string[]) => ({
  crd: { kind: 'VMCluster/vmselect', name: '', namespace: '', objects: objects.map((name) => ({ name, namespace: NS })) },
  paths: ['/select/.*'],
});

/** The real activity applies `patch` to a new object of `o`, recording it as a rollout does. */
async function applyFor(o: Vmdc, kind: VMKind, name: string, patch: JsonObject): Promise<void> {
  await applyObject(kube, {
    kind,
    namespace: NS,
    name,
    patch,
    create: true,
    managedBy: {
      vmdc: { name: o.metadata.name, uid: o.metadata.uid, generation: o.metadata.generation },
      specPath: 'zones[0].vmcluster',
      retain: false,
      adopt: false,
      forceConflicts: false,
    },
  });
}

/** A person's change: a JSON merge patch as `kubectl edit` sends it. Returns the new resourceVersion. */
async function byHand(kind: VMKind, name: string, body: JsonObject): Promise<string> {
  return (await patchObject(E.kube.kubeConfig, kind, NS, name, body, 'kubectl-edit')).metadata.resourceVersion!;
}

const driftedOf = (o: Vmdc): Condition | undefined => o.status?.conditions?.find((c) => c.type === 'Drifted');

/** Waits until the Drifted condition of `name` satisfies `ok`. */
async function driftedUntil(name: string, ok: (c: Condition | undefined) => boolean, description: string): Promise<Condition | undefined> {
  let last: Condition | undefined;
  await waitFor(
    async () => {
      last = driftedOf(await get(name));
      return ok(last);
    },
    { timeoutMs: T, description: `${name}: ${description}`, diagnostics: () => `last Drifted: ${JSON.stringify(last)}\n${logTail()}` },
  );
  return last;
}

/** Waits for an Event of `reason` on `name` whose message contains every one of `parts`. */
async function eventWith(name: string, reason: string, parts: string[]): Promise<k8s.CoreV1Event> {
  return waitFor(async () => (await events(name)).find((e) => e.reason === reason && parts.every((p) => e.message?.includes(p))), {
    timeoutMs: T,
    description: `${name}: Event ${reason} naming ${parts.join(', ')}`,
    diagnostics: logTail,
  });
}

/** Waits until the trigger has taken in `resourceVersion` of the object and has nothing left to do. */
async function takenIn(kind: VMKind, name: string, resourceVersion: string): Promise<void> {
  await waitFor(() => t.drift.observed(kind, NS, name) === resourceVersion, {
    timeoutMs: T,
    description: `the trigger to see ${kind} ${name} at ${resourceVersion}`,
    diagnostics: logTail,
  });
  await t.idle();
}

describe('drift (real kube-apiserver, real trigger)', () => {
  it('a field changed by hand: Drifted=True and a Warning Event naming object and field; set back: Drifted=False', async () => {
    const o = await createWithObjects('d1');
    await applyFor(o, 'VMCluster', 'd1-x', { clusterVersion: 'v1', retentionPeriod: '1' });
    await driftedUntil('d1', (c) => c?.status === 'False' && c.reason === 'NoDrift', 'Drifted=False once an object carries its record');

    await byHand('VMCluster', 'd1-x', { spec: { clusterVersion: 'v2' } });
    const c = await driftedUntil('d1', (x) => x?.status === 'True', 'Drifted=True');
    expect(c).toMatchObject({ reason: 'FieldsChanged' });
    expect(c!.message).toContain('VMCluster d1-x: .spec.clusterVersion');
    expect(c!.message).toContain('the next rollout takes them back, zone by zone');
    expect(c!.message).not.toContain('retentionPeriod');
    const ev = await eventWith('d1', 'Drifted', ['VMCluster d1-x', '.spec.clusterVersion']);
    expect(ev.type).toBe('Warning');
    expect(ev.involvedObject).toMatchObject({ kind: 'VMDistributedCluster', name: 'd1', uid: o.metadata.uid });

    await byHand('VMCluster', 'd1-x', { spec: { clusterVersion: 'v1' } });
    await driftedUntil('d1', (x) => x?.status === 'False' && x.reason === 'NoDrift', 'Drifted=False again');
    expect((await eventWith('d1', 'DriftResolved', ['VMCluster d1-x'])).type).toBe('Normal');
    // One Warning for the one change, whatever the number of watch events and status writes since.
    expect((await events('d1')).filter((e) => e.reason === 'Drifted')).toHaveLength(1);
  });

  it('negative controls: an object without a record, and one out of reads for the VMDistributedCluster, are not reported', async () => {
    const o = await createWithObjects('d2');
    await applyFor(o, 'VMUser', 'd2-u', { targetRefs: [vmselects(['d2-a', 'd2-b'])] });
    await createVm('VMCluster', NS, 'd2-plain', { clusterVersion: 'v1' });
    await driftedUntil('d2', (c) => c?.status === 'False', 'Drifted=False once an object carries its record');

    // A zone out of reads: its record on the route, the zone gone from targetRefs (on purpose).
    const record = {
      vmdc: { namespace: NS, name: 'd2', uid: o.metadata.uid },
      route: { kind: 'VMUser' as const, name: 'd2-u', uid: 'the-uid-of-d2-u' },
      zone: 'az-a',
      workflowId: E.idOf(o),
      generation: o.metadata.generation,
      vmcluster: { namespace: NS, name: 'd2-a' },
      removed: [{ type: 'object' as const, index: 0, objectIndex: 0, object: { name: 'd2-a', namespace: NS } }],
      since: new Date().toISOString(),
    };
    const annotations = { [OUT_OF_ROTATION_ANNOTATION]: formatRecords({ [recordKey(o.metadata.uid, 'az-a')]: record }) };
    const rvUser = await byHand('VMUser', 'd2-u', { metadata: { annotations }, spec: { targetRefs: [vmselects(['d2-b'])] } });
    const rvPlain = await byHand('VMCluster', 'd2-plain', { spec: { clusterVersion: 'v2' } });
    await takenIn('VMUser', 'd2-u', rvUser);
    await takenIn('VMCluster', 'd2-plain', rvPlain);
    expect(driftedOf(await get('d2'))).toMatchObject({ status: 'False', reason: 'NoDrift' });
    expect((await events('d2')).filter((e) => e.reason === 'Drifted')).toEqual([]);

    // The record gone while targetRefs still lack the zone: now it is drift.
    await byHand('VMUser', 'd2-u', { metadata: { annotations: { [OUT_OF_ROTATION_ANNOTATION]: null } } });
    const c = await driftedUntil('d2', (x) => x?.status === 'True', 'Drifted=True once the route record is gone');
    expect(c!.message).toMatch(/^VMUser d2-u: \.spec\.targetRefs\. /);
    await eventWith('d2', 'Drifted', ['VMUser d2-u', '.spec.targetRefs']);
  });
});
