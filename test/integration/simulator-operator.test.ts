/**
 * The zone simulator plays the VM operator v0.74.1 as it is (test/infra/simulator/simulator.ts header):
 * real kube-apiserver, real vmauth pods (each with the config-reloader stand-in), real
 * VictoriaMetrics zones behind vmselect fronts. Proves: the config Secret's content and hash; the
 * statuses written right after the Secret without spec.waitForConfigReload while the pods still
 * serve the old config during the propagation delay, and only after every pod reports the hash
 * with it (and `failed` on timeout); the reloader publishes a hash only after vmauth really
 * reloaded; the vmselect fronts count requests; the operator's errors for unknown VMClusters.
 */
import * as zlib from 'node:zlib';
import * as k8s from '@kubernetes/client-node';
import { parse } from 'yaml';
import { podNetworkFetch } from '../infra/harness/pod-network';
import { httpRequest, waitFor } from '../infra/harness/processes';
import { metricValue } from '../infra/harness/vm';
import { createObjects, getObject, mergePatch } from '../e2e/support';
import type { VmEnvironment } from '../infra/simulator/environment';
import { NS, startOperatorBed, VMAUTH, vmObject, vmselectRef } from './operator-bed';
import { configHash } from '../infra/simulator/render';
import type { StatusRecord } from '../infra/simulator/simulator';

jest.setTimeout(180_000);

const SECRET = `vmauth-config-${VMAUTH}`;
const COND = `${VMAUTH}.${NS}.vmauth.victoriametrics.com/Applied`;
const svc = (vmc: string) => `http://vmselect-${vmc}.${NS}.svc:8481`;
const QUERY = '/select/0/prometheus/api/v1/query?query=up';
const QUERY_COUNTER = '/select/{}/prometheus/api/v1/query';

let kc: k8s.KubeConfig;
let vm: VmEnvironment;
let stop: () => Promise<void>;

const obj = vmObject;
const sel = vmselectRef;

async function readSecret(): Promise<{ gz: Buffer; yaml: Record<string, unknown> } | undefined> {
  try {
    const s = await kc.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({ name: SECRET, namespace: NS });
    const gz = Buffer.from(s.data!['config.yaml.gz']!, 'base64');
    return { gz, yaml: parse(zlib.gunzipSync(gz).toString('utf8')) as Record<string, unknown> };
  } catch {
    return undefined;
  }
}

/** configreloader_reload_content_hash{key="main"} of a pod, scraped at <podIP>:8435 through the pod network. */
async function reloaderHash(podIP: string): Promise<number | undefined> {
  const text = await (await podNetworkFetch(`http://${podIP}:8435/metrics`)).text();
  return metricValue(text, 'configreloader_reload_content_hash', 'key="main"');
}

const statusesSince = (i: number, kind: string, name: string): StatusRecord[] =>
  vm.simulator.statuses.slice(i).filter((s) => s.kind === kind && s.name === name);
const frontCount = (vmc: string) => vm.vmselects[vmc]!.counts()[QUERY_COUNTER] ?? 0;
const setDelay = (ms: number) => vm.vmauthPods.forEach((p) => (p.propagationDelayMs = ms));

beforeAll(async () => {
  ({ kc, vm, stop } = await startOperatorBed({
    vmauthPods: 2,
    configReloadWaitIntervalMs: 500,
    configReloadWaitTimeoutMs: 5000,
  }));
  await createObjects(kc, [
    obj('VMCluster', 'vm-az-a', { vmselect: { replicaCount: 1 } }),
    obj('VMCluster', 'vm-az-b', { vmselect: { replicaCount: 1 } }),
    obj('VMAuth', VMAUTH, {
      selectAllByDefault: true,
      unauthorizedUserAccessSpec: {
        targetRefs: [{ ...sel(['vm-az-b'], 'vm-az-a', NS), paths: ['/select/.+/prometheus/api/v1/query.*', '/select/.+/prometheus/api/v1/labels'] }],
      },
    }),
    obj('VMUser', 'reads', { bearerToken: 'tok', targetRefs: [sel(['vm-az-a'])] }),
  ]);
  await waitFor(() => vm.simulator.allPodsServeCurrent() && vm.simulator.currentConfig?.routes['user:tok']?.length === 1, {
    timeoutMs: 30_000,
    description: 'both vmauth pods to serve the first config',
  });
}, 240_000);

afterAll(() => stop?.());

describe('zone simulator as the VM operator v0.74.1', () => {
  it('writes the config Secret in the operator format, and every pod publishes its CRC32 once it serves it', async () => {
    const s = (await readSecret())!;
    expect(s.yaml).toEqual({
      users: [{ url_prefix: [svc('vm-az-a')], bearer_token: 'tok' }],
      unauthorized_user: {
        url_map: [{ url_prefix: [svc('vm-az-a'), svc('vm-az-b')], src_paths: ['/select/.+/prometheus/api/v1/query.*', '/select/.+/prometheus/api/v1/labels'] }],
      },
    });
    const hash = configHash(s.gz);
    expect(hash).toBe(zlib.crc32(s.gz) >>> 0);
    expect(vm.simulator.currentConfig!.hash).toBe(hash);
    for (const p of vm.vmauthPods) {
      expect(p.currentConfig!.hash).toBe(hash);
      expect(await reloaderHash(p.podIP)).toBe(hash);
    }
    // Service vmauth-<name>: one ready endpoint per pod, port http 8427; vmselect-<vmc> → its front
    const slices = await kc
      .makeApiClient(k8s.DiscoveryV1Api)
      .listNamespacedEndpointSlice({ namespace: NS, labelSelector: `kubernetes.io/service-name=vmauth-${VMAUTH}` });
    expect(slices.items[0]!.ports).toEqual([{ name: 'http', port: 8427, protocol: 'TCP' }]);
    expect(slices.items[0]!.endpoints.map((e) => [e.addresses[0], e.conditions?.ready])).toEqual(vm.vmauthPods.map((p) => [p.podIP, true]));
    expect(new Set(vm.vmauthPods.map((p) => p.podIP)).size).toBe(2);
    const sa = await kc
      .makeApiClient(k8s.DiscoveryV1Api)
      .listNamespacedEndpointSlice({ namespace: NS, labelSelector: 'kubernetes.io/service-name=vmselect-vm-az-a' });
    expect(sa.items[0]!.endpoints[0]!.addresses).toEqual([vm.vmselects['vm-az-a']!.podIP]);
    expect(sa.items[0]!.ports?.[0]).toMatchObject({ name: 'http', port: 8481 });

    // Statuses as reconcile/status.go and UpdateObjectStatus write them (accepted by the real CRD schema)
    const auth = await getObject(kc, 'VMAuth', NS, VMAUTH);
    expect(auth.status).toMatchObject({ observedGeneration: auth.metadata.generation, updateStatus: 'operational', lastAppliedSpec: auth.spec });
    const user = await getObject(kc, 'VMUser', NS, 'reads');
    expect(user.status).toMatchObject({ observedGeneration: 1, updateStatus: 'operational' });
    const conds = (user.status as { conditions: Array<Record<string, unknown>> }).conditions;
    expect(conds).toHaveLength(1);
    expect(conds[0]).toMatchObject({ type: COND, status: 'True', reason: 'ConfigParsedAndApplied', observedGeneration: 1 });
    expect(conds[0]!.lastTransitionTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(conds[0]!.lastUpdateTime).toBe(conds[0]!.lastTransitionTime);
  });

  it('without waitForConfigReload: the VMUser status is written right after the Secret, while the pods still serve the old config', async () => {
    setDelay(3000);
    const i = vm.simulator.statuses.length;
    const oldHash = vm.simulator.currentConfig!.hash;
    const aBefore = frontCount('vm-az-a');
    const bBefore = frontCount('vm-az-b');
    await mergePatch(kc, 'VMUser', NS, 'reads', { spec: { targetRefs: [sel(['vm-az-b'])] } });
    await waitFor(() => statusesSince(i, 'VMUser', 'reads').find((s) => s.generation === 2), {
      timeoutMs: 10_000,
      description: 'VMUser status at generation 2',
    });
    const secretAt = vm.simulator.configs[vm.simulator.configs.length - 1]!.at;
    const newHash = vm.simulator.currentConfig!.hash;
    expect(newHash).not.toBe(oldHash);
    const st = statusesSince(i, 'VMUser', 'reads').find((s) => s.generation === 2)!;
    expect(st.updateStatus).toBe('operational');
    expect(st.condition).toMatchObject({ type: COND, status: 'True', observedGeneration: 2 });
    expect(st.at - secretAt).toBeLessThan(2000);
    // the VMAuth status is not touched by a VMUser change
    expect(statusesSince(i, 'VMAuth', VMAUTH)).toEqual([]);
    // the pods still serve the old config: hash and routing (reads go to vm-az-a's vmselect)
    for (const p of vm.vmauthPods) {
      expect(p.servedAt(st.at)!.hash).toBe(oldHash);
      expect(await reloaderHash(p.podIP)).toBe(oldHash);
      const r = await httpRequest('GET', `${p.vmauth.url}${QUERY}`, { headers: { authorization: 'Bearer tok' } });
      expect(r.status).toBe(200);
    }
    expect(frontCount('vm-az-a')).toBe(aBefore + 2);
    expect(frontCount('vm-az-b')).toBe(bBefore);
    // ... until each pod got the Secret (≥ 3 s later) and vmauth reloaded it
    await waitFor(() => vm.simulator.allPodsServeCurrent(), { timeoutMs: 15_000, description: 'both pods to serve the new config' });
    for (const p of vm.vmauthPods) {
      const rec = p.served.find((r) => r.hash === newHash)!;
      expect(rec.at - secretAt).toBeGreaterThanOrEqual(3000);
      expect(rec.routes['user:tok']).toEqual(['vm-az-b']);
      expect(await reloaderHash(p.podIP)).toBe(newHash);
      await httpRequest('GET', `${p.vmauth.url}${QUERY}`, { headers: { authorization: 'Bearer tok' } });
    }
    expect(frontCount('vm-az-a')).toBe(aBefore + 2);
    expect(frontCount('vm-az-b')).toBe(bBefore + 2);
  });

  it('with waitForConfigReload: the VMAuth status (expanding, then operational) only after every pod reports the new hash', async () => {
    setDelay(3000);
    const i = vm.simulator.statuses.length;
    const patched = await mergePatch(kc, 'VMAuth', NS, VMAUTH, {
      spec: {
        waitForConfigReload: true,
        unauthorizedUserAccessSpec: { targetRefs: [{ ...sel([], 'vm-az-a', NS), paths: ['/select/.+/prometheus/api/v1/query.*'] }] },
      },
    });
    const gen = patched.metadata.generation!;
    const ok = await waitFor(() => statusesSince(i, 'VMAuth', VMAUTH).find((s) => s.updateStatus === 'operational' && s.generation === gen), {
      timeoutMs: 20_000,
      description: 'VMAuth operational',
    });
    const hash = vm.simulator.currentConfig!.hash;
    const secretAt = vm.simulator.currentConfig!.at;
    // reconcileAndTrackStatus: `expanding` before the Secret, `operational` after the wait
    const auth = statusesSince(i, 'VMAuth', VMAUTH);
    expect(auth.map((s) => s.updateStatus)).toEqual(['expanding', 'operational']);
    expect(auth[0]!.at).toBeLessThanOrEqual(secretAt);
    for (const p of vm.vmauthPods) {
      const served = p.served.find((r) => r.hash === hash)!;
      expect(served.at - secretAt).toBeGreaterThanOrEqual(3000);
      expect(ok.at).toBeGreaterThanOrEqual(served.at);
    }
    expect((await getObject(kc, 'VMAuth', NS, VMAUTH)).status).toMatchObject({ observedGeneration: gen, updateStatus: 'operational' });
  });

  it('the reloader publishes a hash only after vmauth really reloaded; an old reloader publishes none', async () => {
    setDelay(0);
    const pod = vm.vmauthPods[0]!;
    const reloadsBefore = metricValue(await pod.vmauth.metricsText(), 'vmauth_config_last_reload_total')!;
    const oldHash = pod.currentHash;
    await mergePatch(kc, 'VMUser', NS, 'reads', { spec: { targetRefs: [sel(['vm-az-a', 'vm-az-b'])] } });
    await waitFor(async () => (await reloaderHash(pod.podIP)) !== oldHash, { timeoutMs: 15_000, intervalMs: 10, description: 'the new hash on the reloader' });
    const m = await (await podNetworkFetch(`http://${pod.podIP}:8427/metrics`)).text();
    expect(metricValue(m, 'vmauth_config_last_reload_total')).toBeGreaterThan(reloadsBefore);
    expect(metricValue(m, 'vmauth_config_last_reload_successful')).toBe(1);
    expect(pod.reloadErrors).toEqual([]);

    vm.vmauthPods[1]!.noContentHashMetric = true;
    expect(await reloaderHash(vm.vmauthPods[1]!.podIP)).toBeUndefined();
    const m1 = await (await podNetworkFetch(`http://${vm.vmauthPods[1]!.podIP}:8427/metrics`)).text();
    expect(metricValue(m1, 'vmauth_config_last_reload_success_timestamp_seconds')).toBeGreaterThan(0);
    vm.vmauthPods[1]!.noContentHashMetric = false;
  });

  it('waitForConfigReload timing out fails the VMAuth with the operator reason', async () => {
    await waitFor(() => vm.simulator.allPodsServeCurrent(), { timeoutMs: 10_000, description: 'pods in sync' });
    vm.vmauthPods[1]!.propagationDelayMs = 9000; // > the 5 s timeout of this test's simulator
    const i = vm.simulator.statuses.length;
    const patched = await mergePatch(kc, 'VMAuth', NS, VMAUTH, {
      spec: { unauthorizedUserAccessSpec: { targetRefs: [{ ...sel(['vm-az-b'], 'vm-az-a', NS), paths: ['/select/.+/prometheus/api/v1/query.*'] }] } },
    });
    const failed = await waitFor(() => statusesSince(i, 'VMAuth', VMAUTH).find((s) => s.updateStatus === 'failed'), {
      timeoutMs: 20_000,
      description: 'VMAuth failed',
    });
    expect(failed.generation).toBe(patched.metadata.generation);
    expect(failed.reason).toBe(`cannot create or update vmauth deploy: timed out waiting for ${NS}/${VMAUTH} to reload config: context deadline exceeded`);
    // once the slow pod serves it, the next reconcile (resync) is operational again
    vm.vmauthPods[1]!.propagationDelayMs = 0;
    await waitFor(() => statusesSince(i, 'VMAuth', VMAUTH).find((s) => s.updateStatus === 'operational' && s.at > failed.at), {
      timeoutMs: 30_000,
      description: 'VMAuth operational again',
    });
  });

  it('a VMUser naming no VMCluster is skipped with a failed status; the VMAuth naming none fails', async () => {
    const i = vm.simulator.statuses.length;
    await mergePatch(kc, 'VMUser', NS, 'reads', { spec: { targetRefs: [sel(['vm-gone'])] } });
    const st = await waitFor(() => statusesSince(i, 'VMUser', 'reads').find((s) => s.updateStatus === 'failed'), {
      timeoutMs: 20_000,
      description: 'VMUser failed',
    });
    const err = `failed to fetch VMUser=${NS}/reads spec.targetRefs[0]: cannot find CRD link for kind="VMCluster/vmselect": cannot find object by the given ref,namespace="${NS}",name="vm-gone": vmclusters.operator.victoriametrics.com "vm-gone" not found`;
    expect(st.reason).toBe(err);
    expect(st.condition).toMatchObject({ type: COND, status: 'False', message: err });
    expect((await readSecret())!.yaml.users).toBeUndefined();

    const j = vm.simulator.statuses.length;
    await mergePatch(kc, 'VMAuth', NS, VMAUTH, {
      spec: { unauthorizedUserAccessSpec: { targetRefs: [{ ...sel(['vm-gone'], 'vm-az-a', NS), paths: ['/select/.+/prometheus/api/v1/query.*'] }] } },
    });
    const f = await waitFor(() => statusesSince(j, 'VMAuth', VMAUTH).find((s) => s.updateStatus === 'failed'), {
      timeoutMs: 20_000,
      description: 'VMAuth failed',
    });
    expect(f.reason).toMatch(
      /^cannot create or update vmauth deploy: failed to fetch spec.unauthorizedUserAccessSpec.targetRefs\[0\]: cannot find CRD link .*"vm-gone" not found$/,
    );
    expect(vm.simulator.errors).toEqual([]);
  });
});
