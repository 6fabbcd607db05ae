/**
 * End to end, vmrollout owns what it creates: server-side apply, ownership, greenfield, conflicts,
 * drift. The real stack (kube-apiserver with the VM operator's CRDs and its garbage collector,
 * Temporal dev server, the real worker and trigger, the zone simulator with real VictoriaMetrics
 * zones, vmagent and vmauth pods) on a namespace that starts EMPTY.
 *
 *  1. Greenfield: a VMDistributedCluster of full specs only comes up in order (VMAgent, VMClusters,
 *     then the VMAuth and the VMUsers routing to them, each created only once the previous ones are
 *     operational), every object owned; then, under read load, a version bump rolls out zone by zone
 *     with no failed and no stale read; a full spec loses a key (it disappears) and flips
 *     retainOnDelete (the ownerReferences go); deleting it leaves every object in place.
 *  2. The six combinations (VMCluster, VMUser, VMAgent × reference + overlay, full spec) on the
 *     objects the first one left: full specs of objects this one does not own are refused until
 *     adopt: true (which retains them unless retainOnDelete: false says otherwise); overlays and full specs change and lose keys (the keys disappear); an overlay
 *     setting a field another manager owns fails the zone while it is still in reads, until
 *     forceConflicts; a field changed by hand is taken back by the next rollout, zone by zone;
 *     deleting it deletes what it owns (the API server's garbage collector) and keeps the references.
 */
import * as k8s from '@kubernetes/client-node';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, type Payload } from '@temporalio/common';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { SA_NAME, WORKFLOW_TYPE, workflowIdFor, type RolloutInput } from '../../api/rollout-contract';
import { EncryptionCodec } from '../../process/payload-codec';
import { FailureType } from '../../workflows/failures';
import { APPLIED_ANNOTATION, readAppliedRecord } from '../../kube/applied-fields';
import { isNotFound } from '../../kube/errors';
import type { VMDistributedClusterStatus } from '../../api/types';
import { waitFor } from '../infra/harness/processes';
import { normalizedSpec } from '../unit/api-helpers';
import {
  createObjects,
  getObject,
  mergePatch,
  resourceOf,
  startControlPlane,
  startTraffic,
  STALE_AFTER_MS,
  waitVmauthRendered,
  waitVmdcPhase,
  type ControlPlane,
  type KubeObject,
  V1,
  V2,
} from './support';

jest.setTimeout(10 * 60_000);

const NS = 'default';
const ZONES = ['vm-az-a', 'vm-az-b'];
/** The VMUsers' bearer tokens: secrets of the spec (no log, Event, status or history may show them). */
const TOKENS = ['e2e-secret-token-az-a', 'e2e-secret-token-az-b'];
const STRATEGY = { order: 'Declared', readDrainDelay: '1s', queueDrainedFor: '6s', pollInterval: '250ms', zoneTimeout: '2m' };
/**
 * For rollouts nobody reads through (the six combinations): reads stay fresh only when the queue
 * stays empty longer than vmagent's retry interval plus the zone's ingestion lag (6 s), which these
 * tests do not measure.
 */
const UNREAD_STRATEGY = { ...STRATEGY, queueDrainedFor: '2s' };
const PATHS = ['/select/.+/prometheus/api/v1/query.*'];

const TASK_QUEUE = 'vmrollout-e2e-ownership';

let cp: ControlPlane;
let kc: k8s.KubeConfig;

const log = (m: string) => {
  if (process.env.E2E_VERBOSE) console.log(`${Date.now()} ${m}`);
};

beforeAll(async () => {
  cp = await startControlPlane({ namespace: NS, clusters: ZONES, zoneDowntimeMs: 1000, garbageCollector: true, taskQueue: TASK_QUEUE, log });
  kc = cp.kc;
}, 6 * 60_000);

afterAll(async () => {
  await cp?.stop();
});

// ---- the objects -------------------------------------------------------------------------------

/** A VMCluster/vmselect targetRef to these zones (crd.name/namespace empty: the CRD requires both keys). */
const vmselects = (zones: string[]) => ({
  crd: { kind: 'VMCluster/vmselect', name: '', namespace: '', objects: zones.map((name) => ({ name, namespace: NS })) },
});
const clusterSpec = (extra: Record<string, unknown> = {}) => ({ retentionPeriod: '1', vmselect: { replicaCount: 1 }, ...extra });
/** Zone-affine readers: each reads from its zone and the other one (a route never runs empty). */
const userSpec = (i: number, extra: Record<string, unknown> = {}) => ({
  bearerToken: TOKENS[i],
  targetRefs: [vmselects([ZONES[i]!, ZONES[1 - i]!])],
  ...extra,
});
const agentSpec = (extra: Record<string, unknown> = {}) => ({ replicaCount: 1, remoteWrite: ZONES.map((z) => ({ url: cp.vm.remoteWriteURLs[z] })), ...extra });
const authSpec = (extra: Record<string, unknown> = {}) => ({
  // The VMUsers of this namespace (selectAllByDefault alone would select every namespace's, which
  // the trust policy refuses).
  userSelector: {},
  unauthorizedUserAccessSpec: { targetRefs: [{ ...vmselects(ZONES), paths: PATHS }] },
  ...extra,
});

type Managed = { name: string; spec?: Record<string, unknown>; overrideSpec?: Record<string, unknown>; adopt?: boolean };
interface Shape {
  clusterVersion: string;
  clusters: [Managed, Managed];
  users: [Managed, Managed];
  vmagent: Managed;
  vmauth: Managed;
  extra?: Record<string, unknown>;
  strategy?: Record<string, unknown>;
}

const vmdcSpec = (s: Shape) => ({
  clusterVersion: s.clusterVersion,
  zones: ZONES.map((z, i) => ({ name: `az-${'ab'[i]}`, vmcluster: s.clusters[i], vmuser: s.users[i], remoteWriteURL: cp.vm.remoteWriteURLs[z] })),
  vmagent: s.vmagent,
  vmauth: s.vmauth,
  strategy: s.strategy ?? STRATEGY,
  ...s.extra,
});

const api = () => kc.makeApiClient(k8s.CustomObjectsApi);

async function find(kind: string, name: string): Promise<KubeObject | undefined> {
  try {
    return await getObject(kc, kind, NS, name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Creates or replaces the spec of VMDistributedCluster `name`; returns the new generation. */
async function setSpec(name: string, spec: Record<string, unknown>): Promise<number> {
  const cur = await find('VMDistributedCluster', name);
  if (!cur) {
    await createObjects(kc, [{ apiVersion: 'vmrollout.io/v1alpha1', kind: 'VMDistributedCluster', metadata: { name, namespace: NS }, spec }]);
    return 1;
  }
  const r = (await api().replaceNamespacedCustomObject({ ...resourceOf('VMDistributedCluster'), namespace: NS, name, body: { ...cur, spec } })) as KubeObject;
  return r.metadata.generation!;
}

const phaseOf = (name: string, generation: number, phases: string[]) =>
  waitVmdcPhase(kc, NS, name, generation, phases, {
    timeoutMs: 4 * 60_000,
    diagnostics: () => `simulator errors: ${cp.vm.simulator.errors.slice(-5).join('\n')}`,
  });

/** Waits for the rollout of `generation` to end and expects Succeeded (the message shows when it is not). */
async function succeeded(name: string, generation: number): Promise<VMDistributedClusterStatus> {
  const st = await phaseOf(name, generation, ['Succeeded', 'Failed']);
  const seen = { phase: st.phase, message: st.message, zones: st.zones?.map((z) => `${z.name}: ${z.message ?? ''}`) };
  expect(seen).toEqual({ ...seen, phase: 'Succeeded' });
  return st;
}

const ownerUids = (o: KubeObject) =>
  ((o.metadata as { ownerReferences?: Array<{ uid: string; controller?: boolean }> }).ownerReferences ?? []).map(
    (r) => `${r.uid}${r.controller ? '/controller' : ''}`,
  );

async function deleteAndWaitGone(name: string): Promise<void> {
  await api().deleteNamespacedCustomObject({ ...resourceOf('VMDistributedCluster'), namespace: NS, name });
  await waitFor(async () => (await find('VMDistributedCluster', name)) === undefined, {
    timeoutMs: 60_000,
    description: `VMDistributedCluster ${name} to be gone`,
  });
}

/** Every VM operator object of the namespace, `Kind/name`. */
async function vmObjects(): Promise<string[]> {
  const out: string[] = [];
  for (const kind of ['VMCluster', 'VMUser', 'VMAgent', 'VMAuth']) {
    const list = (await api().listNamespacedCustomObject({ ...resourceOf(kind), namespace: NS })) as { items: KubeObject[] };
    out.push(...list.items.map((o) => `${kind}/${o.metadata.name}`));
  }
  return out.sort();
}

/** What a write would change: every VM object's and the VMDistributedClusters' metadata, spec and status. */
async function snapshot(): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const kind of ['VMCluster', 'VMUser', 'VMAgent', 'VMAuth', 'VMDistributedCluster']) {
    const list = (await api().listNamespacedCustomObject({ ...resourceOf(kind), namespace: NS })) as { items: KubeObject[] };
    for (const o of list.items) {
      const { resourceVersion: _rv, managedFields: _mf, ...metadata } = o.metadata as KubeObject['metadata'] & { managedFields?: unknown };
      out[`${kind}/${o.metadata.name}`] = { metadata, spec: o.spec, status: o.status };
    }
  }
  return out;
}

/** `text` followed by the UTF-8 of every base64 string in it (history JSON carries payloads as base64). */
function withBase64Decoded(text: string): string {
  const decoded = [...text.matchAll(/"([A-Za-z0-9+/]{8,}={0,2})"/g)].map((m) => Buffer.from(m[1]!, 'base64').toString('utf8'));
  return [text, ...decoded].join('\n');
}

/**
 * Records, per object, the resourceVersion of its creation and of its first status `operational`
 * (from watches of the namespace). One etcd orders every write: these compare across kinds, where
 * arrival times on separate watch streams would not.
 */
function watchLifecycle() {
  const created = new Map<string, number>();
  const operational = new Map<string, number>();
  const aborts: Array<{ abort(): void }> = [];
  const watch = new k8s.Watch(kc);
  const start = async () => {
    for (const kind of ['VMCluster', 'VMUser', 'VMAgent', 'VMAuth']) {
      const r = resourceOf(kind);
      aborts.push(
        await watch.watch(
          `/apis/${r.group}/${r.version}/namespaces/${NS}/${r.plural}`,
          {},
          (type, o: KubeObject) => {
            const key = `${kind}/${o.metadata.name}`;
            const rv = Number(o.metadata.resourceVersion);
            if (type === 'ADDED' && !created.has(key)) created.set(key, rv);
            if ((o.status as { updateStatus?: string } | undefined)?.updateStatus === 'operational' && !operational.has(key)) operational.set(key, rv);
          },
          () => {},
        ),
      );
    }
  };
  return { created, operational, start, stop: () => aborts.forEach((a) => a.abort()) };
}

// ---- 1. greenfield ----------------------------------------------------------------------------

const OWN = 'greenfield';
const fullShape = (
  clusterVersion: string,
  extra: Record<string, unknown> = {},
  agentExtra: Record<string, unknown> = { extraArgs: { 'promscrape.suppressDuplicateScrapeTargetErrors': 'true' } },
): Shape => ({
  clusterVersion,
  clusters: [
    { name: ZONES[0]!, spec: clusterSpec() },
    { name: ZONES[1]!, spec: clusterSpec() },
  ],
  users: [
    { name: 'reads-az-a', spec: userSpec(0) },
    { name: 'reads-az-b', spec: userSpec(1) },
  ],
  vmagent: { name: 'vm-global', spec: agentSpec(agentExtra) },
  vmauth: { name: 'vm-global', spec: authSpec() },
  extra,
});

describe('greenfield: full specs on an empty namespace', () => {
  let uid = '';

  it('come up in order, each waited for, all owned; the first rollout Succeeds', async () => {
    expect(await vmObjects()).toEqual([]);
    const life = watchLifecycle();
    await life.start();
    try {
      expect(await setSpec(OWN, vmdcSpec(fullShape(V1)))).toBe(1);
      const st = await succeeded(OWN, 1);
      expect(st.zones?.map((z) => z.phase)).toEqual(['Skipped', 'Skipped']);
      const [agent, clusters, users, auth] = [
        ['VMAgent/vm-global'],
        ZONES.map((z) => `VMCluster/${z}`),
        ['VMUser/reads-az-a', 'VMUser/reads-az-b'],
        ['VMAuth/vm-global'],
      ];
      const createdAt = (k: string) => life.created.get(k) ?? Infinity;
      const operationalAt = (k: string) => life.operational.get(k) ?? Infinity;
      // VMClusters after the VMAgent is operational; the VMAuth after every VMCluster is; the VMUsers after the VMAuth.
      await waitFor(() => [...agent, ...clusters, ...users, ...auth].every((k) => life.created.has(k) && life.operational.has(k)), {
        timeoutMs: 10_000,
        description: 'the watches to see every object created and operational',
      });
      for (const c of clusters) expect(createdAt(c)).toBeGreaterThan(operationalAt(agent[0]!));
      expect(createdAt(auth[0]!)).toBeGreaterThan(Math.max(...clusters.map(operationalAt)));
      for (const u of users) expect(createdAt(u)).toBeGreaterThan(operationalAt(auth[0]!));
    } finally {
      life.stop();
    }
    uid = (await getObject(kc, 'VMDistributedCluster', NS, OWN)).metadata.uid!;
    for (const k of await vmObjects()) {
      const [kind, name] = k.split('/') as [string, string];
      const o = await getObject(kc, kind, NS, name);
      expect([k, ownerUids(o)]).toEqual([k, [`${uid}/controller`]]);
      expect(readAppliedRecord(o)).toMatchObject({ vmdc: { name: OWN, uid, generation: 1 }, form: 'spec' });
    }
    await waitVmauthRendered(cp.vm, ZONES.length, TOKENS.length);
  });

  it('a version bump under read load: zone by zone, no failed and no stale read', async () => {
    const traffic = startTraffic({
      vmagentURL: cp.vm.vmagent.url,
      vmauthURL: cp.vm.vmauthPods.map((p) => p.vmauth.url),
      bearerTokens: TOKENS,
      staleAfterMs: STALE_AFTER_MS,
    });
    try {
      await traffic.waitHealthy();
      const t0 = Date.now();
      const g = await setSpec(OWN, vmdcSpec(fullShape(V2)));
      const st = await succeeded(OWN, g);
      const t1 = Date.now();
      expect(st.zones?.map((z) => z.phase)).toEqual(['Done', 'Done']);
      for (const z of ZONES) expect((await getObject(kc, 'VMCluster', NS, z)).spec?.clusterVersion).toBe(V2);
      expect(traffic.failed(t0, t1)).toEqual([]);
      expect(traffic.stale(t0, t1)).toEqual([]);
    } finally {
      await traffic.stop();
    }
  });

  it('a workflow started by hand with a forged input does nothing and fails saying why', async () => {
    const live = await getObject(kc, 'VMDistributedCluster', NS, OWN);
    const object = { namespace: NS, name: OWN, uid: live.metadata.uid!, generation: live.metadata.generation! };
    const before = await snapshot();
    // Within the trust policy (an official image, another tag): only the spec comparison refuses it.
    const evil = vmdcSpec(fullShape('v0.0.1-evil', {}, { image: { repository: 'victoriametrics/vmagent', tag: 'v0.0.1-evil' } }));
    const forgeries: Array<{ what: string; workflowId: string; input: RolloutInput; reason: RegExp }> = [
      // the id the trigger gives this generation (its workflow has closed: the id is free again)
      {
        what: 'another spec',
        workflowId: workflowIdFor(object),
        input: { object, spec: normalizedSpec(evil), previousWorkflowIds: [] },
        reason: /the spec differs/,
      },
      {
        what: 'another namespace',
        workflowId: workflowIdFor({ ...object, namespace: 'kube-system' }),
        input: { object: { ...object, namespace: 'kube-system' }, spec: normalizedSpec(evil), previousWorkflowIds: [] },
        reason: /cannot read kube-system\/greenfield|createNamespaces/,
      },
      {
        what: 'a previous workflow of another object (it would be superseded)',
        workflowId: workflowIdFor(object),
        input: { object, spec: normalizedSpec(live.spec), previousWorkflowIds: [workflowIdFor({ ...object, name: 'someone-else' })] },
        reason: /is not a rollout of default\/greenfield/,
      },
      {
        what: 'an id of its own choosing',
        workflowId: 'my-rollout',
        input: { object, spec: normalizedSpec(live.spec), previousWorkflowIds: [] },
        reason: /is not the id of default\/greenfield/,
      },
    ];
    for (const f of forgeries) {
      const h = await cp.client.workflow.start(WORKFLOW_TYPE, { taskQueue: TASK_QUEUE, workflowId: f.workflowId, args: [f.input] });
      const err = await h.result().then(
        () => undefined,
        (e: unknown) => e,
      );
      const cause = err instanceof WorkflowFailedError ? err.cause : undefined;
      expect([f.what, cause instanceof ApplicationFailure ? cause.type : String(err)]).toEqual([f.what, FailureType.InputRefused]);
      expect([f.what, (cause as ApplicationFailure).message]).toEqual([f.what, expect.stringMatching(f.reason)]);
    }
    expect(await snapshot()).toEqual(before);
  });

  it('no fixture secret in Temporal history (payloads encrypted), logs, Events or status', async () => {
    const found = (haystack: string) => TOKENS.filter((t) => haystack.includes(t));
    const raw = cp.temporal.client; // no codec: what the server stores and the Web UI shows without the codec server
    let histories = '';
    let startInputs: Payload[] = [];
    for await (const wf of cp.client.workflow.list({ query: `${SA_NAME.name} = '${OWN}'` })) {
      const history = await raw.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
      histories += withBase64Decoded(historyToJSON(history));
      startInputs.push(...(history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? []));
    }
    expect(startInputs.length).toBeGreaterThanOrEqual(2);
    expect(found(histories)).toEqual([]);
    // Negative control: the same search over the decrypted inputs finds both tokens.
    const decrypted = await new EncryptionCodec(cp.payloadKeys).decode(startInputs);
    expect(found(withBase64Decoded(JSON.stringify(decrypted.map((p) => ({ ...p, data: Buffer.from(p.data ?? []).toString('base64') })))))).toEqual(TOKENS);
    startInputs = [];

    const logs = cp.logs.join('\n');
    expect(logs).toContain(OWN); // the logs do talk about this object
    expect(found(logs)).toEqual([]);
    const events = await kc.makeApiClient(k8s.CoreV1Api).listNamespacedEvent({ namespace: NS });
    expect(events.items.length).toBeGreaterThan(0);
    expect(found(JSON.stringify(events.items))).toEqual([]);
    const status = (await getObject(kc, 'VMDistributedCluster', NS, OWN)).status;
    expect(status).toMatchObject({ phase: 'Succeeded' });
    expect(found(JSON.stringify(status))).toEqual([]);
    // ...while the VMUsers (the operator's objects) do carry them: the fixture really has these secrets.
    expect(found(JSON.stringify(await getObject(kc, 'VMUser', NS, 'reads-az-a')))).toEqual([TOKENS[0]]);
  });

  it('a key removed from a full spec disappears; retainOnDelete drops the ownerReferences; deleting it leaves everything', async () => {
    const g = await setSpec(OWN, vmdcSpec(fullShape(V2, { retainOnDelete: true }, {})));
    await succeeded(OWN, g);
    const agent = await getObject(kc, 'VMAgent', NS, 'vm-global');
    expect(agent.spec).not.toHaveProperty('extraArgs');
    for (const k of await vmObjects()) {
      const [kind, name] = k.split('/') as [string, string];
      expect([k, ownerUids(await getObject(kc, kind, NS, name))]).toEqual([k, []]);
    }
    const before = await vmObjects();
    await deleteAndWaitGone(OWN);
    // The garbage collector had its chance: an owned object it deletes is gone within milliseconds.
    const canary = 'gc-canary';
    await createObjects(kc, [
      {
        apiVersion: 'operator.victoriametrics.com/v1beta1',
        kind: 'VMCluster',
        metadata: {
          name: canary,
          namespace: NS,
          ownerReferences: [{ apiVersion: 'vmrollout.io/v1alpha1', kind: 'VMDistributedCluster', name: OWN, uid }],
        } as KubeObject['metadata'],
        spec: {},
      },
    ]);
    await waitFor(async () => (await find('VMCluster', canary)) === undefined, {
      timeoutMs: 60_000,
      description: 'the garbage collector to delete an object owned by the deleted VMDistributedCluster',
    });
    expect(await vmObjects()).toEqual(before);
  });
});

// ---- 2. the six combinations ------------------------------------------------------------------

const MIX = 'mixed';
/** VMCluster, VMUser: zone a full spec, zone b reference + overlay; VMAgent: reference + overlay; VMAuth: full spec. */
const mixedShape = (o: {
  adopt: boolean;
  clusterB?: Record<string, unknown>;
  clusterA?: Record<string, unknown>;
  userA?: Record<string, unknown>;
  userB?: Record<string, unknown>;
  agent?: Record<string, unknown>;
  extra?: Record<string, unknown>;
  /** Adopted objects are retained unless the spec says otherwise (docs/cr-reference.md): these tests own them, saying so. */
  retainAdopted?: boolean;
}): Shape => ({
  clusterVersion: V2,
  clusters: [
    { name: ZONES[0]!, spec: clusterSpec(o.clusterA), ...(o.adopt ? { adopt: true } : {}) },
    { name: ZONES[1]!, overrideSpec: o.clusterB ?? {} },
  ],
  users: [
    { name: 'reads-az-a', spec: userSpec(0, o.userA), ...(o.adopt ? { adopt: true } : {}) },
    { name: 'reads-az-b', overrideSpec: o.userB ?? {} },
  ],
  vmagent: { name: 'vm-global', overrideSpec: o.agent ?? {} },
  vmauth: { name: 'vm-global', spec: authSpec(), ...(o.adopt ? { adopt: true } : {}) },
  extra: o.adopt && !o.retainAdopted ? { retainOnDelete: false, ...o.extra } : o.extra,
  strategy: UNREAD_STRATEGY,
});

const MANAGERS = (o: KubeObject) => (o.metadata as { managedFields?: Array<{ manager: string; operation: string; fieldsV1?: unknown }> }).managedFields ?? [];

describe('the six combinations on the objects left behind', () => {
  let uid = '';
  let gen = 0;

  it('full specs of objects it does not own are refused (nothing changes) until adopt: true; adopted, they are retained unless retainOnDelete: false', async () => {
    gen = await setSpec(MIX, vmdcSpec(mixedShape({ adopt: false })));
    const st = await phaseOf(MIX, gen, ['Failed', 'Succeeded']);
    expect(st.phase).toBe('Failed');
    expect(st.message).toMatch(/NotOwned|does not own/);
    expect(st.message).toMatch(/adopt: true/);
    expect(st.zonesOutOfRotation ?? []).toEqual([]);
    uid = (await getObject(kc, 'VMDistributedCluster', NS, MIX)).metadata.uid!;
    expect(readAppliedRecord(await getObject(kc, 'VMCluster', NS, ZONES[0]!))?.vmdc.name).toBe(OWN);

    // adopt: true alone retains what it adopts: no ownerReference, a delete would not take them.
    gen = await setSpec(MIX, vmdcSpec(mixedShape({ adopt: true, retainAdopted: true })));
    await succeeded(MIX, gen);
    for (const [kind, name] of [
      ['VMCluster', ZONES[0]],
      ['VMUser', 'reads-az-a'],
      ['VMAuth', 'vm-global'],
    ] as const) {
      const o = await getObject(kc, kind, NS, name!);
      expect([kind, name, ownerUids(o)]).toEqual([kind, name, []]);
      expect(readAppliedRecord(o)).toMatchObject({ vmdc: { name: MIX, uid }, form: 'spec' });
    }

    // retainOnDelete: false says otherwise: owned from here on.
    gen = await setSpec(
      MIX,
      vmdcSpec(
        mixedShape({
          adopt: true,
          clusterA: { vminsert: { replicaCount: 1 } },
          clusterB: { vminsert: { replicaCount: 1 } },
          userA: { metric_labels: { team: 'sre' } },
          userB: { metric_labels: { team: 'sre' } },
          agent: { extraArgs: { 'remoteWrite.showURL': 'false' } },
        }),
      ),
    );
    await succeeded(MIX, gen);
    for (const [kind, name, owned] of [
      ['VMCluster', ZONES[0], true],
      ['VMCluster', ZONES[1], false],
      ['VMUser', 'reads-az-a', true],
      ['VMUser', 'reads-az-b', false],
      ['VMAgent', 'vm-global', false],
      ['VMAuth', 'vm-global', true],
    ] as const) {
      const o = await getObject(kc, kind, NS, name!);
      expect([kind, name, ownerUids(o)]).toEqual([kind, name, owned ? [`${uid}/controller`] : []]);
      expect(readAppliedRecord(o)).toMatchObject({ vmdc: { name: MIX, uid }, form: owned ? 'spec' : 'overlay' });
    }
    expect((await getObject(kc, 'VMCluster', NS, ZONES[1]!)).spec).toMatchObject({ vminsert: { replicaCount: 1 }, retentionPeriod: '1' });
    expect((await getObject(kc, 'VMUser', NS, 'reads-az-b')).spec).toMatchObject({ metric_labels: { team: 'sre' } });
  });

  it('overlays and full specs change, and a key removed from either disappears from the object', async () => {
    gen = await setSpec(
      MIX,
      vmdcSpec(
        mixedShape({
          adopt: true,
          clusterA: { vmstorage: { replicaCount: 1 } },
          clusterB: { vmstorage: { replicaCount: 1 } },
          userA: { max_concurrent_requests: 10 },
          agent: { logLevel: 'INFO' },
        }),
      ),
    );
    await succeeded(MIX, gen);
    const [ca, cb, ua, ub, ag] = await Promise.all([
      getObject(kc, 'VMCluster', NS, ZONES[0]!),
      getObject(kc, 'VMCluster', NS, ZONES[1]!),
      getObject(kc, 'VMUser', NS, 'reads-az-a'),
      getObject(kc, 'VMUser', NS, 'reads-az-b'),
      getObject(kc, 'VMAgent', NS, 'vm-global'),
    ]);
    // Each of the five (the VMAgent's full spec: greenfield above) got a key and lost the one it had.
    expect(ca.spec).toMatchObject({ vmstorage: { replicaCount: 1 } });
    expect(ca.spec).not.toHaveProperty('vminsert');
    // zone b's overlay dropped vminsert: the key vmrollout set goes; what the full spec of before set stays (handed over).
    expect(cb.spec).toMatchObject({ vmstorage: { replicaCount: 1 }, retentionPeriod: '1' });
    expect(cb.spec).not.toHaveProperty('vminsert');
    expect(ua.spec).toMatchObject({ max_concurrent_requests: 10 });
    expect(ua.spec).not.toHaveProperty('metric_labels');
    expect(ub.spec).not.toHaveProperty('metric_labels');
    expect(ag.spec).toMatchObject({ logLevel: 'INFO', replicaCount: 1 });
    expect(ag.spec).not.toHaveProperty('extraArgs');
    for (const o of [ca, cb, ua, ub, ag]) expect(MANAGERS(o).filter((m) => m.manager === 'vmrollout' && m.operation === 'Apply')).toHaveLength(1);
  });

  it('a field another manager owns fails the zone while it is still in reads; forceConflicts takes it', async () => {
    // Zone a holds at WaitingOperational (the simulated operator hangs) until the conflict is in place.
    await mergePatch(kc, 'VMCluster', NS, ZONES[0]!, { metadata: { annotations: { 'sim.vmrollout.io/hang': 'true' } } });
    const shape = (extra?: Record<string, unknown>) =>
      mixedShape({
        adopt: true,
        clusterA: { vmstorage: { replicaCount: 2 } },
        clusterB: { vmstorage: { replicaCount: 1 }, retentionPeriod: '3' },
        userA: { max_concurrent_requests: 10 },
        agent: { logLevel: 'INFO' },
        extra,
      });
    gen = await setSpec(MIX, vmdcSpec(shape()));
    await waitFor(
      async () =>
        ((await getObject(kc, 'VMDistributedCluster', NS, MIX)).status as VMDistributedClusterStatus | undefined)?.zones?.[0]?.phase === 'WaitingOperational',
      { timeoutMs: 120_000, description: 'zone a to wait for its VMCluster' },
    );
    await mergePatch(kc, 'VMCluster', NS, ZONES[1]!, { spec: { retentionPeriod: '2' } }, 'kubectl-edit');
    await mergePatch(kc, 'VMCluster', NS, ZONES[0]!, { metadata: { annotations: { 'sim.vmrollout.io/hang': null } } });
    const st = await phaseOf(MIX, gen, ['Failed', 'Succeeded']);
    expect(st.phase).toBe('Failed');
    const b = st.zones?.find((z) => z.name === 'az-b');
    expect(b?.phase).toBe('Failed');
    expect(b?.message).toMatch(/^failed at LeavingReads: .*\.spec\.retentionPeriod \(owned by "kubectl-edit"\)/);
    expect(b?.message).toMatch(/forceConflicts/);
    expect(st.zonesOutOfRotation ?? []).toEqual([]);
    expect((await getObject(kc, 'VMCluster', NS, ZONES[1]!)).spec?.retentionPeriod).toBe('2');

    gen = await setSpec(MIX, vmdcSpec(shape({ forceConflicts: true })));
    await succeeded(MIX, gen);
    const cb = await getObject(kc, 'VMCluster', NS, ZONES[1]!);
    expect(cb.spec?.retentionPeriod).toBe('3');
    expect(JSON.stringify(MANAGERS(cb).find((m) => m.manager === 'kubectl-edit')?.fieldsV1 ?? {})).not.toContain('retentionPeriod');
  });

  it('a field changed by hand is taken back by the next rollout, zone by zone, never instantly', async () => {
    await mergePatch(kc, 'VMCluster', NS, ZONES[0]!, { spec: { clusterVersion: 'v0.0.1-by-hand' } }, 'kubectl-edit');
    // The trigger reports it; nothing takes it back yet.
    const drifted = (status: unknown) => (status as VMDistributedClusterStatus | undefined)?.conditions?.find((c) => c.type === 'Drifted');
    await waitFor(async () => drifted((await getObject(kc, 'VMDistributedCluster', NS, MIX)).status)?.status === 'True', {
      timeoutMs: 30_000,
      description: 'condition Drifted=True',
    });
    expect(drifted((await getObject(kc, 'VMDistributedCluster', NS, MIX)).status)?.message).toContain(`VMCluster ${ZONES[0]}: .spec.clusterVersion`);
    expect((await getObject(kc, 'VMCluster', NS, ZONES[0]!)).spec?.clusterVersion).toBe('v0.0.1-by-hand');
    const cur = (await getObject(kc, 'VMDistributedCluster', NS, MIX)).spec as Record<string, unknown>;
    gen = await setSpec(MIX, { ...cur, strategy: { ...UNREAD_STRATEGY, pauseBetweenZones: '1s' } });
    const st = await succeeded(MIX, gen);
    expect(st.zones?.map((z) => z.phase)).toEqual(['Done', 'Skipped']);
    expect((await getObject(kc, 'VMCluster', NS, ZONES[0]!)).spec?.clusterVersion).toBe(V2);
    await waitFor(async () => drifted((await getObject(kc, 'VMDistributedCluster', NS, MIX)).status)?.status === 'False', {
      timeoutMs: 30_000,
      description: 'condition Drifted=False',
    });
  });

  it('deleting it deletes what it owns and keeps the references', async () => {
    await deleteAndWaitGone(MIX);
    const owned = ['VMAuth/vm-global', `VMCluster/${ZONES[0]}`, 'VMUser/reads-az-a'];
    let left: string[] = [];
    await waitFor(async () => (left = await vmObjects()).every((k) => !owned.includes(k)), {
      timeoutMs: 60_000,
      description: 'the garbage collector to delete the owned objects',
      diagnostics: () => left.join(', '),
    });
    expect(await vmObjects()).toEqual([`VMAgent/vm-global`, `VMCluster/${ZONES[1]}`, 'VMUser/reads-az-b']);
    // What vmrollout recorded on the references stays (it names a VMDistributedCluster that is gone).
    expect((await getObject(kc, 'VMCluster', NS, ZONES[1]!)).metadata.annotations?.[APPLIED_ANNOTATION]).toBeDefined();
  });
});
