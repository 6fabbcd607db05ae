import { waitFor } from '../infra/harness/processes';
import {
  httpPost,
  metricValue,
  startVictoriaMetrics,
  startVmagent,
  startVmauth,
  vmQuery,
  type VmagentHandle,
  type VmauthHandle,
  type VmProcessHandle,
} from '../infra/harness/vm';

describe('vmagent -> VictoriaMetrics (real processes)', () => {
  let vm: VmProcessHandle | undefined;
  let agent: VmagentHandle | undefined;
  beforeAll(async () => {
    vm = await startVictoriaMetrics();
    agent = await startVmagent({ remoteWriteUrls: [`${vm.url}/api/v1/write`], extraArgs: ['-remoteWrite.flushInterval=100ms'] });
  }, 60_000);
  afterAll(async () => {
    await agent?.stop();
    await vm?.stop();
  });

  it('remote-writes pushed samples that can be queried back, and exposes its queue metrics', async () => {
    const r = await httpPost(`${agent!.url}/api/v1/import/prometheus`, 'smoke_test_metric{zone="a"} 42\n');
    expect(r.status).toBe(204);
    const result = await waitFor(
      async () => {
        const res = await vmQuery(vm!.url, 'smoke_test_metric{zone="a"}');
        return res.length > 0 ? res : undefined;
      },
      { timeoutMs: 20_000, description: 'smoke_test_metric to be queryable in VictoriaMetrics', diagnostics: () => agent!.process.logTail() },
    );
    expect(result[0]!.value[1]).toBe('42');

    const metrics = await agent!.metricsText();
    expect(metricValue(metrics, 'vmagent_remotewrite_pending_data_bytes')).toBeDefined();
  }, 30_000);

  it('restart() keeps the port and the data', async () => {
    const { port } = vm!;
    const oldPid = vm!.pid;
    await vm!.restart();
    expect(vm!.port).toBe(port);
    expect(vm!.pid).not.toBe(oldPid);
    const res = await vmQuery(vm!.url, 'smoke_test_metric{zone="a"}');
    expect(res[0]?.value[1]).toBe('42');
  }, 30_000);
});

describe('vmauth (real process) reloads its config', () => {
  let a: VmProcessHandle | undefined;
  let b: VmProcessHandle | undefined;
  let auth: VmauthHandle | undefined;
  const routeTo = (backend: string) => ({ unauthorized_user: { url_map: [{ src_paths: ['/api/v1/.*'], url_prefix: backend }] } });

  beforeAll(async () => {
    [a, b] = await Promise.all([startVictoriaMetrics({ name: 'vm-a' }), startVictoriaMetrics({ name: 'vm-b' })]);
    // Each backend holds a different value for the same series.
    await httpPost(`${a.url}/api/v1/import/prometheus`, 'which_backend 1\n');
    await httpPost(`${b.url}/api/v1/import/prometheus`, 'which_backend 2\n');
    for (const vm of [a, b]) {
      await waitFor(async () => (await vmQuery(vm.url, 'which_backend')).length > 0, { timeoutMs: 20_000, description: `which_backend in ${vm.url}` });
    }
    auth = await startVmauth({ config: routeTo(a.url) });
  }, 60_000);
  afterAll(async () => {
    await auth?.stop();
    await a?.stop();
    await b?.stop();
  });

  it('routes to backend A, then to backend B after a reload', async () => {
    const viaAuth = async () => (await vmQuery(auth!.url, 'which_backend'))[0]?.value[1];
    expect(await viaAuth()).toBe('1');
    await auth!.updateConfig(routeTo(b!.url));
    expect(await viaAuth()).toBe('2');
  }, 30_000);
});
