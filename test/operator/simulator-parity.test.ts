/**
 * Simulator parity (issue 27 item 4): the zone simulator (test/infra/simulator/) and the real operator
 * (test/infra/harness/operator-bed/), each on its own kube-apiserver, are fed the same objects and the
 * same changes; what each writes is compared: the vmauth config Secret's content (decoded), and the
 * VMAuth, VMUser and VMCluster status fields with the order they took in time: the same. What the
 * simulator still does differently (zone outages, Secret propagation timing) is in its header
 * (test/infra/simulator/simulator.ts).
 */
import * as zlib from 'node:zlib';
import * as k8s from '@kubernetes/client-node';
import { parse } from 'yaml';
import { startRealOperatorBed, type RealOperatorBed } from '../infra/harness/operator-bed';
import { waitFor } from '../infra/harness/processes';
import { createObjects, mergePatch, type KubeObject } from '../e2e/support';
import { NS, startOperatorBed, VMAUTH, vmObject, vmselectRef, ZONES, type OperatorBed } from '../integration/operator-bed';
import { VM_GROUP, VM_VERSION } from '../../api/constants';

jest.setTimeout(6 * 60_000);

interface StatusStep {
  updateStatus?: string;
  observedGeneration?: number;
  reason?: string;
  /** VMUser: its Applied condition (type, status, reason). */
  condition?: string;
}

/** Every distinct status (the fields compared) each VMAuth, VMUser and VMCluster took, from a watch (every write, in order). */
async function recordStatuses(kc: k8s.KubeConfig) {
  const steps = new Map<string, StatusStep[]>();
  const aborts: AbortController[] = [];
  for (const plural of ['vmauths', 'vmusers', 'vmclusters']) {
    aborts.push(
      await new k8s.Watch(kc).watch(
        `/apis/${VM_GROUP}/${VM_VERSION}/namespaces/${NS}/${plural}`,
        {},
        (_type, o: KubeObject) => {
          const st = (o.status ?? {}) as {
            updateStatus?: string;
            observedGeneration?: number;
            reason?: string;
            conditions?: Array<{ type: string; status: string; reason?: string }>;
          };
          const c = st.conditions?.[0];
          const step: StatusStep = {
            updateStatus: st.updateStatus,
            observedGeneration: st.observedGeneration,
            ...(st.reason ? { reason: st.reason } : {}),
            ...(c ? { condition: `${c.type}=${c.status}/${c.reason ?? ''}` } : {}),
          };
          const key = `${o.kind}/${o.metadata.name}`;
          const list = steps.get(key) ?? [];
          if (JSON.stringify(list.at(-1)) !== JSON.stringify(step)) list.push(step);
          steps.set(key, list);
        },
        () => {},
      ),
    );
  }
  return { steps, stop: () => aborts.forEach((a) => a.abort()) };
}

async function secretConfig(kc: k8s.KubeConfig): Promise<unknown> {
  const s = await kc.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({ name: `vmauth-config-${VMAUTH}`, namespace: NS });
  return parse(zlib.gunzipSync(Buffer.from(s.data!['config.yaml.gz']!, 'base64')).toString('utf8'));
}

const OBJECTS: KubeObject[] = [
  ...ZONES.map((z) =>
    vmObject('VMCluster', z, {
      clusterVersion: 'v1.150.0-cluster',
      retentionPeriod: '1',
      vmselect: { replicaCount: 1 },
      vminsert: { replicaCount: 1 },
      vmstorage: { replicaCount: 1 },
    }),
  ),
  vmObject('VMAuth', VMAUTH, {
    selectAllByDefault: true,
    unauthorizedUserAccessSpec: { targetRefs: [{ ...vmselectRef(['vm-az-b'], 'vm-az-a', NS), paths: ['/select/.+/prometheus/api/v1/query.*'] }] },
  }),
  vmObject('VMUser', 'reads', { bearerToken: 'tok', targetRefs: [vmselectRef(['vm-az-a', 'vm-az-b'])] }),
];

describe('the zone simulator and the real operator fed the same objects', () => {
  let real: RealOperatorBed;
  let sim: OperatorBed;
  let recReal: Awaited<ReturnType<typeof recordStatuses>>;
  let recSim: Awaited<ReturnType<typeof recordStatuses>>;

  beforeAll(async () => {
    [real, sim] = await Promise.all([startRealOperatorBed({ namespace: NS, zones: ZONES, vmauth: VMAUTH }), startOperatorBed({ vmauthPods: 1 })]);
    [recReal, recSim] = await Promise.all([recordStatuses(real.kc), recordStatuses(sim.kc)]);
    await Promise.all([createObjects(real.kc, OBJECTS), createObjects(sim.kc, OBJECTS)]);
  }, 4 * 60_000);

  afterAll(async () => {
    recReal?.stop();
    recSim?.stop();
    await real?.stop();
    await sim?.stop();
  }, 120_000);

  const settled = (steps: Map<string, StatusStep[]>, kind: string, name: string, generation: number) =>
    steps.get(`${kind}/${name}`)?.at(-1)?.observedGeneration === generation && steps.get(`${kind}/${name}`)?.at(-1)?.updateStatus === 'operational';

  async function bothSettled(kind: string, name: string, generation: number): Promise<void> {
    await waitFor(() => settled(recReal.steps, kind, name, generation) && settled(recSim.steps, kind, name, generation), {
      timeoutMs: 120_000,
      description: `${kind}/${name} operational at generation ${generation} under both`,
      diagnostics: () => JSON.stringify({ real: recReal.steps.get(`${kind}/${name}`), sim: recSim.steps.get(`${kind}/${name}`) }),
    });
  }

  it('created: the same config Secret content and the same statuses, in the same order', async () => {
    for (const z of ZONES) await bothSettled('VMCluster', z, 1);
    await bothSettled('VMAuth', VMAUTH, 1);
    await bothSettled('VMUser', 'reads', 1);
    expect(await secretConfig(real.kc)).toEqual(await secretConfig(sim.kc));
    for (const key of [`VMAuth/${VMAUTH}`, 'VMUser/reads']) expect({ key, steps: recSim.steps.get(key) }).toEqual({ key, steps: recReal.steps.get(key) });
    for (const z of ZONES) {
      expect(recReal.steps.get(`VMCluster/${z}`)).toEqual([
        {},
        { updateStatus: 'expanding', observedGeneration: 1 },
        { updateStatus: 'operational', observedGeneration: 1 },
      ]);
      expect({ z, steps: recSim.steps.get(`VMCluster/${z}`) }).toEqual({ z, steps: recReal.steps.get(`VMCluster/${z}`) });
    }
  });

  it('a zone taken out of the VMAuth, a VMUser edited, a VMCluster rolled: the same Secret and status sequences', async () => {
    for (const r of [recReal, recSim]) r.steps.clear();
    const change = async (kc: k8s.KubeConfig) => {
      await mergePatch(kc, 'VMAuth', NS, VMAUTH, {
        spec: { unauthorizedUserAccessSpec: { targetRefs: [{ ...vmselectRef([], 'vm-az-a', NS), paths: ['/select/.+/prometheus/api/v1/query.*'] }] } },
      });
      await mergePatch(kc, 'VMUser', NS, 'reads', { spec: { targetRefs: [vmselectRef(['vm-az-b'])] } });
      await mergePatch(kc, 'VMCluster', NS, 'vm-az-b', { spec: { clusterVersion: 'v1.151.0-cluster' } });
    };
    await Promise.all([change(real.kc), change(sim.kc)]);
    await bothSettled('VMAuth', VMAUTH, 2);
    await bothSettled('VMUser', 'reads', 2);
    await bothSettled('VMCluster', 'vm-az-b', 2);
    expect(await secretConfig(real.kc)).toEqual(await secretConfig(sim.kc));
    for (const key of [`VMAuth/${VMAUTH}`, 'VMUser/reads']) expect({ key, steps: recSim.steps.get(key) }).toEqual({ key, steps: recReal.steps.get(key) });
    expect(recReal.steps.get(`VMAuth/${VMAUTH}`)).toEqual([
      { updateStatus: 'operational', observedGeneration: 1 },
      { updateStatus: 'expanding', observedGeneration: 2 },
      { updateStatus: 'operational', observedGeneration: 2 },
    ]);
    // The VMCluster's status steps too: `expanding` already at the new generation, then `operational`.
    expect(recReal.steps.get('VMCluster/vm-az-b')).toEqual([
      { updateStatus: 'operational', observedGeneration: 1 },
      { updateStatus: 'expanding', observedGeneration: 2 },
      { updateStatus: 'operational', observedGeneration: 2 },
    ]);
    expect(recSim.steps.get('VMCluster/vm-az-b')).toEqual(recReal.steps.get('VMCluster/vm-az-b'));
  });
});
