import type * as http from 'node:http';
import * as https from 'node:https';
import * as k8s from '@kubernetes/client-node';
import { FAULT_KINDS, startKubeFaultProxy, type FaultKind, type KubeFaultProxy } from '../infra/chaos/kube-fault-proxy';
import { serviceAccountToken, tokenKubeConfig } from '../infra/harness/chart-identities';
import { startKube, type KubeCluster } from '../infra/harness/kube';
import { waitFor } from '../infra/harness/processes';

const NS = 'default';
const SA = 'chaos-tester';

interface RawResult {
  status?: number;
  headers?: http.IncomingHttpHeaders;
  body?: string;
  error?: string;
}

/**
 * One request with `kc`'s credentials, seeing the exact status and headers (the typed client hides
 * them), giving up after `timeoutMs`; `headersOnly` resolves on the response head (for watches).
 */
async function raw(
  kc: k8s.KubeConfig,
  method: string,
  path: string,
  o: { body?: unknown; timeoutMs?: number; headersOnly?: boolean; contentType?: string } = {},
): Promise<RawResult> {
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const agent = opts.agent as https.Agent | undefined;
  const body = o.body === undefined ? undefined : JSON.stringify(o.body);
  const headers: http.OutgoingHttpHeaders = { ...(opts.headers as http.OutgoingHttpHeaders | undefined), accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = o.contentType ?? 'application/json';
  try {
    return await new Promise<RawResult>((resolve) => {
      const req = https.request(
        `${kc.getCurrentCluster()!.server}${path}`,
        { ...opts, method, headers, signal: AbortSignal.timeout(o.timeoutMs ?? 5_000) },
        (res) => {
          if (o.headersOnly && res.statusCode === 200) {
            resolve({ status: res.statusCode, headers: res.headers });
            req.destroy();
            return;
          }
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', (err) => resolve({ error: err.message }));
        },
      );
      req.on('error', (err) => resolve({ error: `${err.name}: ${err.message}` }));
      req.end(body);
    });
  } finally {
    agent?.destroy();
  }
}

function configMap(name: string): k8s.V1ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: name } };
}

const exists = (core: k8s.CoreV1Api, name: string) =>
  core.readNamespacedConfigMap({ name, namespace: NS }).then(
    () => true,
    (err: unknown) => {
      if ((err as { code?: number }).code === 404) return false;
      throw err;
    },
  );

describe('kube fault proxy (real kube-apiserver)', () => {
  let kube: KubeCluster;
  /** As the ServiceAccount chaos-tester (cluster-admin), directly to the apiserver. */
  let tokenKc: k8s.KubeConfig;
  let direct: k8s.CoreV1Api;
  const proxies: KubeFaultProxy[] = [];
  const start = async (o: Omit<Parameters<typeof startKubeFaultProxy>[0], 'kube'>) => {
    const p = await startKubeFaultProxy({ kube, ...o });
    proxies.push(p);
    return p;
  };

  beforeAll(async () => {
    kube = await startKube();
    const core = kube.kubeConfig.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace: NS, body: { metadata: { name: SA } } });
    await kube.kubeConfig.makeApiClient(k8s.RbacAuthorizationV1Api).createClusterRoleBinding({
      body: {
        metadata: { name: SA },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ kind: 'ServiceAccount', name: SA, namespace: NS }],
      },
    });
    tokenKc = tokenKubeConfig(kube.kubeConfig, SA, await serviceAccountToken(kube.kubeConfig, NS, SA), NS);
    direct = tokenKc.makeApiClient(k8s.CoreV1Api);
    await waitFor(() => direct.listNamespace().then(() => true), { timeoutMs: 15_000, description: 'RBAC to grant chaos-tester cluster-admin' });
  }, 180_000);
  afterAll(async () => {
    for (const p of proxies) await p.stop();
    await kube?.stop();
  });

  it('with rate 0 forwards everything: list, create/get/patch/delete, a watch; bearer and admin cert identities', async () => {
    const proxy = await start({ seed: 1, rate: 0 });
    const pkc = proxy.kubeConfigFor(tokenKc);
    expect(pkc.getCurrentCluster()!.server).toBe(proxy.url);
    expect(pkc.getCurrentUser()!.token).toBe(tokenKc.getCurrentUser()!.token);
    const core = pkc.makeApiClient(k8s.CoreV1Api);

    const nss = await core.listNamespace();
    expect(nss.items.map((n) => n.metadata?.name)).toContain('default');
    await core.createNamespacedConfigMap({ namespace: NS, body: configMap('rate0') });
    expect((await core.readNamespacedConfigMap({ name: 'rate0', namespace: NS })).data).toEqual({ k: 'rate0' });
    await core.patchNamespacedConfigMap(
      { name: 'rate0', namespace: NS, body: { data: { k: 'patched' } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    expect((await direct.readNamespacedConfigMap({ name: 'rate0', namespace: NS })).data).toEqual({ k: 'patched' });

    const added: string[] = [];
    let doneErr: unknown = 'not called';
    const ctl = await new k8s.Watch(pkc).watch(
      `/api/v1/namespaces/${NS}/configmaps`,
      {},
      (type, obj: k8s.V1ConfigMap) => {
        if (type === 'ADDED') added.push(obj.metadata!.name!);
      },
      (err) => (doneErr = err),
    );
    await core.createNamespacedConfigMap({ namespace: NS, body: configMap('rate0-watched') });
    await waitFor(() => added.includes('rate0-watched'), { timeoutMs: 10_000, description: 'ADDED rate0-watched through the proxy' });
    expect(doneErr).toBe('not called');
    ctl.abort();
    await core.deleteNamespacedConfigMap({ name: 'rate0', namespace: NS });
    expect(await exists(direct, 'rate0')).toBe(false);

    // The harness admin authenticates with a client cert: the proxy forwards it as such.
    const admin = proxy.kubeConfigFor(kube.kubeConfig).makeApiClient(k8s.CoreV1Api);
    expect((await admin.readNamespace({ name: 'default' })).metadata?.name).toBe('default');

    const log = proxy.log;
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
    expect(log.every((e) => e.forwarded && e.fault === undefined)).toBe(true);
    expect(Object.values(proxy.faultCounts()).every((n) => n === 0)).toBe(true);
    const summary = log.map((e) => `${e.method} ${e.path.split('?')[0]} ${e.watch ? 'watch' : ''} ${e.user}`);
    expect(summary).toEqual([
      'GET /api/v1/namespaces  chaos-tester',
      'POST /api/v1/namespaces/default/configmaps  chaos-tester',
      'GET /api/v1/namespaces/default/configmaps/rate0  chaos-tester',
      'PATCH /api/v1/namespaces/default/configmaps/rate0  chaos-tester',
      'GET /api/v1/namespaces/default/configmaps watch chaos-tester',
      'POST /api/v1/namespaces/default/configmaps  chaos-tester',
      'DELETE /api/v1/namespaces/default/configmaps/rate0  chaos-tester',
      'GET /api/v1/namespaces/default  cert:admin',
    ]);
    expect(log.filter((e) => !e.watch).map((e) => e.status)).toEqual([200, 201, 200, 200, 201, 200, 200]);
    expect(log[4]!.status).toBe(200);
    expect(log[4]!.path).toMatch(/[?&]watch=true/);
    expect(JSON.parse(log[1]!.requestBody!)).toMatchObject({ metadata: { name: 'rate0' } });
    expect(JSON.parse(log[3]!.requestBody!)).toEqual({ data: { k: 'patched' } });
    expect(log.filter((e) => e.method === 'GET').every((e) => e.requestBody === undefined)).toBe(true);
  }, 60_000);

  it('with rate 1 injects every applicable kind, 409 only on writes, and replays by seed', async () => {
    const run = async (seed: number, tag: string) => {
      const proxy = await start({ seed, rate: 1, timeoutHoldMs: 200 });
      const pkc = proxy.kubeConfigFor(tokenKc);
      const results: RawResult[] = [];
      const cms = `/api/v1/namespaces/${NS}/configmaps`;
      for (let i = 0; i < 60; i++) {
        const name = `${tag}-${i % 7}`;
        let r: RawResult;
        if (i % 5 === 4) r = await raw(pkc, 'GET', `${cms}?watch=1`, { headersOnly: true, timeoutMs: 2_000 });
        else if (i % 3 === 0) {
          const w = (i / 3) % 4;
          if (w === 0) r = await raw(pkc, 'POST', cms, { body: configMap(name) });
          else if (w === 1) r = await raw(pkc, 'PATCH', `${cms}/${name}`, { body: { data: { i: String(i) } }, contentType: 'application/merge-patch+json' });
          else if (w === 2) r = await raw(pkc, 'PUT', `${cms}/${name}`, { body: configMap(name) });
          else r = await raw(pkc, 'DELETE', `${cms}/${name}`);
        } else r = await raw(pkc, 'GET', i % 2 ? cms : `${cms}/${name}`);
        results.push(r);
      }
      await proxy.stop();
      return { proxy, results, kinds: proxy.log.map((e) => e.fault) };
    };

    const a = await run(42, 'seed42a');
    const { proxy, results } = a;
    expect(proxy.log).toHaveLength(60);
    expect(a.kinds.every((k) => k !== undefined)).toBe(true);
    const seen = new Set(a.kinds);
    expect([...seen].sort()).toEqual([...FAULT_KINDS].sort());
    const counts = proxy.faultCounts();
    for (const k of FAULT_KINDS) expect(counts[k]).toBe(a.kinds.filter((x) => x === k).length);

    proxy.log.forEach((e, i) => {
      const r = results[i]!;
      const write = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(e.method);
      const ctx = `request ${e.seq} ${e.method} ${e.path} fault ${e.fault}: ${JSON.stringify(r)}`;
      if (e.fault === '409') expect(write).toBe(true);
      if (e.fault === 'drop-watch') expect(e.watch).toBe(true);
      switch (e.fault) {
        case '5xx':
        case '409':
        case '429': {
          expect({ ctx, status: r.status }).toEqual({ ctx, status: e.status });
          expect(e.forwarded).toBe(false);
          const s = JSON.parse(r.body!) as { kind: string; status: string; reason: string; code: number; message: string };
          const reason = { 500: 'InternalError', 503: 'ServiceUnavailable', 409: 'Conflict', 429: 'TooManyRequests' }[r.status!];
          expect(s).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'injected fault', code: r.status, reason });
          if (e.fault === '5xx') expect([500, 503]).toContain(r.status);
          else expect(r.status).toBe(Number(e.fault));
          if (e.fault === '429') expect(r.headers!['retry-after']).toBe('1');
          break;
        }
        case 'timeout':
          expect({ ctx, error: r.error !== undefined, status: e.status, forwarded: e.forwarded }).toEqual({
            ctx,
            error: true,
            status: undefined,
            forwarded: true,
          });
          break;
        case 'drop-watch':
          expect({ ctx, status: r.status, forwarded: e.forwarded }).toEqual({ ctx, status: 200, forwarded: true });
          break;
      }
    });
    expect(new Set(proxy.log.filter((e) => e.fault === '5xx').map((e) => e.status))).toEqual(new Set([500, 503]));

    const b = await run(42, 'seed42b');
    expect(b.kinds).toEqual(a.kinds);
    const c = await run(43, 'seed43');
    expect(c.kinds).not.toEqual(a.kinds);
  }, 120_000);

  it('timeout on a write: the write lands, the client gets no answer; stop() frees held sockets', async () => {
    const proxy = await start({ seed: 7, rate: 1, kinds: ['timeout'], timeoutHoldMs: 1_000 });
    const core = proxy.kubeConfigFor(tokenKc).makeApiClient(k8s.CoreV1Api);
    const t0 = Date.now();
    await expect(core.createNamespacedConfigMap({ namespace: NS, body: configMap('timeout-landed') })).rejects.toThrow();
    const held = Date.now() - t0;
    expect(held).toBeGreaterThanOrEqual(900);
    expect(held).toBeLessThan(5_000);
    expect(await exists(direct, 'timeout-landed')).toBe(true);
    expect(proxy.log[0]).toMatchObject({ method: 'POST', fault: 'timeout', forwarded: true, upstreamStatus: 201 });
    expect(proxy.log[0]!.status).toBeUndefined();

    // The client gives up first (a long hold): the write still lands.
    const longHold = await start({ seed: 7, rate: 1, kinds: ['timeout'], timeoutHoldMs: 60_000 });
    const lkc = longHold.kubeConfigFor(tokenKc);
    const aborted = await raw(lkc, 'POST', `/api/v1/namespaces/${NS}/configmaps`, { body: configMap('timeout-aborted'), timeoutMs: 500 });
    expect(aborted.error).toMatch(/Timeout|Abort/);
    await waitFor(() => exists(direct, 'timeout-aborted'), { timeoutMs: 5_000, description: 'timeout-aborted to land' });
    await waitFor(() => longHold.log[0]!.upstreamStatus === 201, { timeoutMs: 5_000, description: 'the upstream answer to the aborted write' });

    // A held request that nobody aborts: stop() must not wait for the hold.
    const pending = raw(lkc, 'GET', `/api/v1/namespaces/${NS}/configmaps`, { timeoutMs: 30_000 });
    await waitFor(() => longHold.log.length === 2, { timeoutMs: 5_000, description: 'the second request to arrive' });
    const s0 = Date.now();
    await longHold.stop();
    expect((await pending).error).toBeDefined();
    expect(Date.now() - s0).toBeLessThan(2_000);
  }, 60_000);

  it('drop-watch: the watch streams, then ends within ~6 s', async () => {
    await direct.createNamespacedConfigMap({ namespace: NS, body: configMap('drop-watch-seen') });
    const proxy = await start({ seed: 3, rate: 1, kinds: ['drop-watch'] });
    const pkc = proxy.kubeConfigFor(tokenKc);
    const added: string[] = [];
    const t0 = Date.now();
    const done = new Promise<number>((resolve) => {
      void new k8s.Watch(pkc).watch(
        `/api/v1/namespaces/${NS}/configmaps`,
        {},
        (type, obj: k8s.V1ConfigMap) => {
          if (type === 'ADDED') added.push(obj.metadata!.name!);
        },
        () => resolve(Date.now() - t0),
      );
    });
    let timer: NodeJS.Timeout | undefined;
    const elapsed = await Promise.race([done, new Promise<number>((r) => (timer = setTimeout(() => r(-1), 8_000)))]);
    clearTimeout(timer);
    expect(elapsed).toBeGreaterThanOrEqual(400);
    expect(elapsed).toBeLessThan(6_500);
    // Streamed normally before the cut: the initial list as ADDED events.
    expect(added).toContain('drop-watch-seen');
    expect(proxy.log[0]).toMatchObject({ watch: true, fault: 'drop-watch', forwarded: true, upstreamStatus: 200 });
    expect(proxy.log[0]!.status).toBeUndefined();
  }, 30_000);

  it('maxFaults bounds the count; enabled=false passes everything', async () => {
    const proxy = await start({ seed: 11, rate: 1, maxFaults: 3, kinds: ['5xx', '429'] as FaultKind[] });
    const pkc = proxy.kubeConfigFor(tokenKc);
    const statuses: Array<number | undefined> = [];
    for (let i = 0; i < 10; i++) statuses.push((await raw(pkc, 'GET', `/api/v1/namespaces/${NS}`)).status);
    expect(statuses.filter((s) => s !== 200)).toHaveLength(3);
    expect(statuses.slice(3)).toEqual(Array(7).fill(200));
    const counts = proxy.faultCounts();
    expect(counts['5xx'] + counts['429']).toBe(3);
    expect(proxy.log.filter((e) => e.fault).length).toBe(3);

    const off = await start({ seed: 11, rate: 1, enabled: false });
    const okc = off.kubeConfigFor(tokenKc);
    expect((await raw(okc, 'GET', `/api/v1/namespaces/${NS}`)).status).toBe(200);
    off.enabled = true;
    expect((await raw(okc, 'GET', `/api/v1/namespaces/${NS}`, { timeoutMs: 500 })).status).not.toBe(200);
    expect(off.log.map((e) => e.fault !== undefined)).toEqual([false, true]);
  }, 60_000);
});
