/**
 * End to end, a fleet (spec.fleet) on real processes: real Temporal, kube-apiserver, six real
 * VictoriaMetrics zones behind their vmselect fronts, the real vmagent and vmauth, the real worker
 * and trigger (the zone simulator plays the operator). Three VMDistributedClusters of two zones each
 * share the global vmauth and vmagent (as several deployments of one team do): east-1 and east-2 in
 * region east, west-1 in region west, all in fleet `prod`.
 *
 * All three bumped at once (as one GitOps commit would): the trigger hands each generation to the
 * fleet's parent workflow, which runs them as its children, one per region at a time — never two
 * east zones out of the vmauth config together, while an east and the west zone are out together
 * (regions in parallel) — and every read through vmauth stays answered and fresh. The negative
 * control: the two east members bumped again without spec.fleet take two east zones out at once.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { fleetWorkflowId, type FleetProgress, type FleetResult } from '../../api/fleet-contract';
import { DEFAULT_TASK_QUEUE, workflowIdFor } from '../../api/rollout-contract';
import type { VMDistributedClusterStatus } from '../../api/types';
import { waitFor } from '../infra/harness/processes';
import type { RenderedConfigRecord } from '../infra/simulator/simulator';
import {
  createObjects,
  E2E_STRATEGY,
  kubeRaw,
  getObject,
  mergePatch,
  REPO_ROOT,
  runCommand,
  startControlPlane,
  startTraffic,
  STALE_AFTER_MS,
  V1,
  V2,
  V3,
  waitVmauthRendered,
  waitVmdcPhase,
  type ControlPlane,
  type KubeObject,
  type Traffic,
} from './support';

jest.setTimeout(10 * 60_000);

const NS = 'default';
const MEMBERS = [
  { name: 'east-1', region: 'east' },
  { name: 'east-2', region: 'east' },
  { name: 'west-1', region: 'west' },
];
const clustersOf = (member: string) => [`vm-${member}-a`, `vm-${member}-b`];
const CLUSTERS = MEMBERS.flatMap((m) => clustersOf(m.name));
const regionOf = (vmcluster: string) => MEMBERS.find((m) => clustersOf(m.name).includes(vmcluster))!.region;

/** The plugin from the checkout (`kubectl vmdc` runs the same code bundled), with the run's Temporal and payload keys. */
let pluginEnv: NodeJS.ProcessEnv;
const plugin = (args: string[]) =>
  runCommand(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'cli', 'main.ts'), ...args], { env: pluginEnv, timeoutMs: 60_000 });

let cp: ControlPlane & { onStop(f: () => Promise<void>): void };
let kc: k8s.KubeConfig;
let traffic: Traffic;

function manifests(): KubeObject[] {
  const meta = (name: string) => ({ name, namespace: NS });
  const vmclusters: KubeObject[] = CLUSTERS.map((name) => ({
    apiVersion: 'operator.victoriametrics.com/v1beta1',
    kind: 'VMCluster',
    metadata: meta(name),
    spec: { clusterVersion: V1, retentionPeriod: '1', vmselect: {}, vminsert: { replicaCount: 1 }, vmstorage: { replicaCount: 1 } },
  }));
  const [first, ...rest] = CLUSTERS;
  const vmauth: KubeObject = {
    apiVersion: 'operator.victoriametrics.com/v1beta1',
    kind: 'VMAuth',
    metadata: meta('vm-global'),
    spec: {
      selectAllByDefault: true,
      unauthorizedUserAccessSpec: {
        targetRefs: [
          {
            crd: { kind: 'VMCluster/vmselect', name: first, namespace: NS, objects: rest.map((name) => ({ name, namespace: NS })) },
            paths: ['/select/.+/prometheus/api/v1/query.*'],
          },
        ],
      },
    },
  };
  const vmagent: KubeObject = {
    apiVersion: 'operator.victoriametrics.com/v1beta1',
    kind: 'VMAgent',
    metadata: meta('vm-global'),
    spec: { replicaCount: 1, remoteWrite: CLUSTERS.map((c) => ({ url: cp.vm.remoteWriteURLs[c] })) },
  };
  return [...vmclusters, vmauth, vmagent];
}

function member(name: string, region: string): KubeObject {
  return {
    apiVersion: 'vmrollout.io/v1alpha1',
    kind: 'VMDistributedCluster',
    metadata: { name, namespace: NS },
    spec: {
      clusterVersion: V1,
      zones: clustersOf(name).map((c) => ({ name: c.slice(-1) === 'a' ? 'az-a' : 'az-b', vmcluster: { name: c }, remoteWriteURL: cp.vm.remoteWriteURLs[c] })),
      vmauth: { name: 'vm-global' },
      vmagent: { name: 'vm-global' },
      strategy: E2E_STRATEGY,
      fleet: { name: 'prod', region },
    },
  };
}

/** Per rendered config, the zones it no longer routes to (out of reads), with their regions. */
function outAtOnce(configs: RenderedConfigRecord[], since: number): Array<{ at: number; out: string[] }> {
  return configs.filter((c) => c.at >= since).map((c) => ({ at: c.at, out: CLUSTERS.filter((z) => !c.routes.unauthorized?.includes(z)) }));
}
const eastOut = (out: string[]) => out.filter((z) => regionOf(z) === 'east');

/** The reasons of the Events on a member, any component. */
async function reasons(name: string): Promise<string[]> {
  const r = await kubeRaw(kc, 'GET', `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name%3D${name}`);
  return (JSON.parse(r.body) as { items: Array<{ reason: string }> }).items.map((e) => e.reason);
}

const statusOf = async (name: string) => (await getObject(kc, 'VMDistributedCluster', NS, name)).status as VMDistributedClusterStatus;

/** What the members and the fleet say, for a failure message. */
async function diagnostics(): Promise<string> {
  const statuses = await Promise.all(MEMBERS.map(async (m) => `${m.name}: ${JSON.stringify(await statusOf(m.name))}`));
  const fleet = await cp.client.workflow
    .getHandle(fleetWorkflowId(NS, 'prod'))
    .query('fleetProgress')
    .then(JSON.stringify, (e: Error) => e.message);
  return `${statuses.join('\n')}\nfleet: ${fleet}\nsimulator: ${cp.vm.simulator.errors.slice(-3).join('\n')}`;
}

/** Until every member's `generation` reached one of `phases`; a timeout says what the members and the fleet say. */
async function waitMembers(generation: number, phases: string[], timeoutMs: number): Promise<VMDistributedClusterStatus[]> {
  try {
    return await Promise.all(MEMBERS.map((m) => waitVmdcPhase(kc, NS, m.name, generation, phases, { timeoutMs })));
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${await diagnostics()}`);
  }
}

beforeAll(async () => {
  cp = await startControlPlane({ namespace: NS, clusters: CLUSTERS, zoneDowntimeMs: 2_000, taskQueue: `${DEFAULT_TASK_QUEUE}-e2e-fleet` });
  kc = cp.kc;
  const keysFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vmrollout-fleet-')), 'payload-keys');
  fs.writeFileSync(keysFile, [...cp.payloadKeys.byId].map(([id, key]) => `${id}:${key.export().toString('base64')}\n`).join(''), { mode: 0o600 });
  pluginEnv = {
    PATH: process.env.PATH,
    KUBECONFIG: cp.kube.kubeconfigPath,
    TEMPORAL_ADDRESS: cp.temporal.address,
    TEMPORAL_NAMESPACE: cp.temporal.namespace ?? 'default',
    TEMPORAL_PAYLOAD_KEYS_FILE: keysFile,
  };
  await createObjects(kc, manifests());
  await waitVmauthRendered(cp.vm, CLUSTERS.length, 0);
  traffic = startTraffic({ vmagentURL: cp.vm.vmagent.url, vmauthURL: cp.vm.vmauth.url, staleAfterMs: STALE_AFTER_MS });
  cp.onStop(() => traffic.stop());
  await traffic.waitHealthy();
  // Generation 1 of each, at the version every zone runs: through the fleet, nothing to upgrade.
  await createObjects(
    kc,
    MEMBERS.map((m) => member(m.name, m.region)),
  );
  await waitMembers(1, ['Succeeded'], 120_000);
}, 5 * 60_000);

afterAll(() => cp?.stop(), 120_000);

describe('a fleet on the real stack', () => {
  it('rolls out three VMDistributedClusters as children of the fleet: one zone out per region at a time, regions in parallel, no failed or stale read', async () => {
    const t0 = Date.now();
    const fleet = cp.client.workflow.getHandle(fleetWorkflowId(NS, 'prod'));
    await Promise.all(MEMBERS.map((m) => mergePatch(kc, 'VMDistributedCluster', NS, m.name, { spec: { clusterVersion: V2 } })));
    // The east member the fleet did not start first is queued, and says so.
    await waitFor(async () => (await Promise.all(['east-1', 'east-2'].map(statusOf))).some((s) => /^queued in fleet prod/.test(s.message ?? '')), {
      timeoutMs: 30_000,
      description: 'an east member reported queued in fleet prod',
    });
    // What `kubectl vmdc fleet` shows meanwhile: one member per region rolling out, the other east one queued.
    const shown = await plugin(['fleet', 'prod', '-n', NS, '-o', 'json']);
    expect(shown.code).toBe(0);
    const view = JSON.parse(shown.stdout) as FleetProgress & { executionStatus: string };
    expect(view.executionStatus).toBe('RUNNING');
    expect(view.running.map((r) => r.region).sort()).toEqual(['east', 'west']);
    expect(view.queued.map((r) => r.member)).toEqual(['east-1', 'east-2'].filter((m) => !view.running.some((r) => r.member === m)));

    for (const st of await waitMembers(2, ['Succeeded', 'Failed'], 180_000)) {
      expect(st.phase).toBe('Succeeded');
      expect(st.zonesOutOfRotation).toEqual([]);
    }
    // Every generation-2 rollout ran as a child of the fleet, which then ended.
    const result = (await fleet.result()) as FleetResult;
    const ended = result.ended.filter((e) => e.workflowId.includes('/g2-'));
    expect(ended.map((e) => [e.member, e.outcome]).sort()).toEqual(MEMBERS.map((m) => [m.name, 'Succeeded']).sort());
    for (const m of MEMBERS) {
      const uid = (await getObject(kc, 'VMDistributedCluster', NS, m.name)).metadata.uid!;
      const d = await cp.client.workflow.getHandle(workflowIdFor({ namespace: NS, name: m.name, uid, generation: 2 })).describe();
      expect(d.raw.workflowExecutionInfo?.parentExecution?.workflowId).toBe(fleetWorkflowId(NS, 'prod'));
    }
    expect([...(await reasons('east-1')), ...(await reasons('east-2'))]).toContain('RolloutQueued');

    const seen = outAtOnce(cp.vm.simulator.configs, t0);
    expect(seen.filter((s) => eastOut(s.out).length > 1)).toEqual([]);
    expect(seen.some((s) => eastOut(s.out).length === 1 && s.out.length === 2)).toBe(true);
    expect(new Set(seen.flatMap((s) => s.out))).toEqual(new Set(CLUSTERS));
    expect(traffic.failed(t0, Date.now())).toEqual([]);
    expect(traffic.stale(t0, Date.now())).toEqual([]);
  });

  it('negative control: without spec.fleet the east members take two east zones out at once', async () => {
    const t0 = Date.now();
    const east = MEMBERS.filter((m) => m.region === 'east');
    await Promise.all(east.map((m) => mergePatch(kc, 'VMDistributedCluster', NS, m.name, { spec: { clusterVersion: V3, fleet: null } })));
    // Seen as soon as both have taken their first zone out (the stack stops them after).
    await waitFor(() => outAtOnce(cp.vm.simulator.configs, t0).some((s) => eastOut(s.out).length > 1), {
      timeoutMs: 60_000,
      description: 'two east zones out of the vmauth config at once',
    });
  });
});
