// The chaos campaign's control processes (test/infra/chaos/): the pod gateway + the preload that give a
// CHILD process the test bed's pod network (with seeded faults on /metrics pages), and the real
// worker and trigger run as separate processes (`node --import tsx …/main.ts`) that are SIGKILLed
// and started again. Real kube-apiserver (the chart's identities), real Temporal dev server.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { installChartIdentities, type ChartIdentities } from '../infra/harness/chart-identities';
import { startKube, VM_OPERATOR_CRDS, type KubeCluster } from '../infra/harness/kube';
import { allocatePodIP, registerPodPort } from '../infra/harness/pod-network';
import { httpGet } from '../infra/harness/processes';
import { startTemporalDevEnv } from '../infra/harness/temporal';
import { CHART_RELEASE_NAMESPACE, installCrdFiles, REPO_ROOT } from '../e2e/support';
import { FAULT_KINDS, gatewayUrlFor, metricsOf, startPodGateway, type FaultKind, type PodGateway } from '../infra/chaos/pod-gateway';
import {
  buildWorkflowBundle,
  pidAlive,
  POD_NETWORK_PRELOAD,
  processesOf,
  startTriggerProcess,
  startWorkerProcess,
  writePayloadKeysFile,
  type ControlProcess,
} from '../infra/chaos/control-processes';

jest.setTimeout(240_000);

const NS = 'chaos-ctl';
const VMAGENT_POD_PORT = 8429;
/** A vmagent-like /metrics page. */
const PAGE =
  Array.from(
    { length: 40 },
    (_, i) => `vmagent_remotewrite_pending_data_bytes{path="/vmagent-remotewrite-data/persistent-queue/${i}_ABCDEF",url="${i}:secret-url"} ${i * 100}`,
  ).join('\n') + '\n';

interface FetchResult {
  ok: boolean;
  status?: number;
  body?: string;
  error?: string;
  cause?: string;
  name?: string;
  ms: number;
}

// What the child runs: each op fetched in turn (optionally with a client timeout), results as JSON.
const CHILD_SCRIPT = `
const ops = JSON.parse(process.env.OPS);
(async () => {
  const out = [];
  for (const op of ops) {
    const t0 = Date.now();
    try {
      const r = await fetch(op.url, op.timeoutMs ? { signal: AbortSignal.timeout(op.timeoutMs) } : {});
      const body = await r.text();
      out.push({ ok: true, status: r.status, body, ms: Date.now() - t0 });
    } catch (e) {
      out.push({ ok: false, error: String(e), cause: String((e && e.cause) || ''), name: e && e.name, ms: Date.now() - t0 });
    }
  }
  process.stdout.write(JSON.stringify(out));
})();
`;

/** A child node process (the preload, POD_GATEWAY_URL) fetching `ops` in turn. */
function childFetch(gatewayUrl: string, ops: Array<{ url: string; timeoutMs?: number }>): Promise<FetchResult[]> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--require', POD_NETWORK_PRELOAD, '-e', CHILD_SCRIPT],
      { cwd: REPO_ROOT, env: { PATH: process.env.PATH, POD_GATEWAY_URL: gatewayUrl, OPS: JSON.stringify(ops) }, timeout: 60_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`child failed: ${err.message}\n${String(stderr)}`));
        else resolve(JSON.parse(String(stdout)) as FetchResult[]);
      },
    );
  });
}

// The worker's own scrape code in a child (ServicePods captures the global fetch when it is created,
// as createActivities does in worker/main.ts): each pod address scraped in turn.
const SCRAPE_SCRIPT = `
const { ServicePods } = require(${JSON.stringify(path.join(REPO_ROOT, 'activities', 'pods', 'service-pods.ts'))});
const { KubeConfig } = require('@kubernetes/client-node');
const kc = new KubeConfig();
kc.loadFromOptions({ clusters: [{ name: 'n', server: 'https://127.0.0.1:1', skipTLSVerify: true }], users: [{ name: 'n' }], contexts: [{ name: 'n', cluster: 'n', user: 'n' }], currentContext: 'n' });
const pods = new ServicePods({ kubeConfig: kc, scrapeTimeoutMs: 1000 });
(async () => {
  const out = [];
  for (const t of JSON.parse(process.env.TARGETS)) {
    const [address, port] = t.split(':');
    try {
      out.push({ ok: true, body: await pods.scrape({ name: 'p', address, port: Number(port), ready: true }) });
    } catch (e) {
      out.push({ ok: false, error: pods.describeScrapeError(e) });
    }
  }
  process.stdout.write(JSON.stringify(out));
})();
`;

function childScrape(gatewayUrl: string, targets: string[]): Promise<Array<{ ok: boolean; body?: string; error?: string }>> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--require', POD_NETWORK_PRELOAD, '--import', 'tsx', '-e', SCRAPE_SCRIPT],
      { cwd: REPO_ROOT, env: { PATH: process.env.PATH, POD_GATEWAY_URL: gatewayUrl, TARGETS: JSON.stringify(targets) }, timeout: 60_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`child failed: ${err.message}\n${String(stderr)}`));
        else resolve(JSON.parse(String(stdout)) as Array<{ ok: boolean; body?: string; error?: string }>);
      },
    );
  });
}

/** A pod's process: /metrics serves `page()`, /echo answers the request line and Host. */
async function startPodServer(page: () => string): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if ((req.url ?? '').split('?')[0] === '/metrics') res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(page());
    else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ url: req.url, host: req.headers.host, method: req.method }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

describe('pod gateway + preload (a child process reaches the pods)', () => {
  let gw: PodGateway;
  let pod: Awaited<ReturnType<typeof startPodServer>>;
  let pod2: Awaited<ReturnType<typeof startPodServer>> | undefined;
  let podIP: string;
  let otherIP: string;
  let target: string;
  const unregister: Array<() => void> = [];

  beforeAll(async () => {
    pod = await startPodServer(() => PAGE);
    podIP = allocatePodIP();
    otherIP = allocatePodIP();
    target = `${podIP}:${VMAGENT_POD_PORT}`;
    unregister.push(registerPodPort(podIP, VMAGENT_POD_PORT, pod.port));
    unregister.push(registerPodPort(otherIP, VMAGENT_POD_PORT, pod.port)); // another pod's /metrics (not the vmagent's)
    gw = await startPodGateway({ eligible: metricsOf(target) });
  });
  afterAll(async () => {
    unregister.forEach((u) => u());
    await gw?.close();
    await pod?.close();
    await pod2?.close();
  });

  it('maps a pod URL to the gateway, and leaves any other URL alone', () => {
    expect(gatewayUrlFor('http://127.0.0.1:9/', `http://${podIP}:8429/metrics?a=1&b=2`)).toBe(`http://127.0.0.1:9/${podIP}:8429/metrics?a=1&b=2`);
    expect(gatewayUrlFor('http://127.0.0.1:9', `http://${podIP}/x`)).toBe(`http://127.0.0.1:9/${podIP}:80/x`);
    expect(gatewayUrlFor('http://127.0.0.1:9', 'http://127.0.0.1:1234/metrics')).toBe('http://127.0.0.1:1234/metrics');
    expect(gatewayUrlFor('http://127.0.0.1:9', 'https://10.0.0.1/metrics')).toBe('https://10.0.0.1/metrics');
  });

  it('a child fetches a pod page through the gateway; path, query and Host are kept; other URLs go direct', async () => {
    const before = gw.requests.length;
    const [page, echo, direct] = await childFetch(gw.url, [
      { url: `http://${target}/metrics` },
      { url: `http://${target}/some/path?x=1&y=two` },
      { url: `http://127.0.0.1:${pod.port}/metrics` },
    ]);
    expect(page).toMatchObject({ ok: true, status: 200, body: PAGE });
    expect(JSON.parse(echo!.body!)).toEqual({ url: '/some/path?x=1&y=two', host: target, method: 'GET' });
    expect(direct).toMatchObject({ ok: true, status: 200, body: PAGE });
    // only the two pod requests went through the gateway, logged with target, path and status
    const logged = gw.requests.slice(before);
    expect(logged.map((e) => [e.target, e.path, e.status, e.fault])).toEqual([
      [target, '/metrics', 200, undefined],
      [target, '/some/path?x=1&y=two', 200, undefined],
    ]);
    expect(logged.every((e) => e.upstream === `127.0.0.1:${pod.port}` && typeof e.at === 'number')).toBe(true);
  });

  it("an unmapped pod address makes the child's fetch throw, as a refused connection does; the registry is read per request", async () => {
    const before = gw.requests.length;
    const [unmapped, unregisteredPort] = await childFetch(gw.url, [{ url: 'http://198.51.100.250:8429/metrics' }, { url: `http://${podIP}:9999/metrics` }]);
    for (const r of [unmapped!, unregisteredPort!]) {
      expect(r.ok).toBe(false);
      expect(r.name).toBe('TypeError');
      expect(r.error).toMatch(/fetch failed/);
    }
    expect(gw.requests.slice(before).map((e) => [e.target, e.status, /connection refused/.test(e.error ?? '')])).toEqual([
      ['198.51.100.250:8429', undefined, true],
      [`${podIP}:9999`, undefined, true],
    ]);

    // on a kept-alive connection to the gateway too: page, refused, page
    const [a, refused, b] = await childFetch(gw.url, [
      { url: `http://${target}/metrics` },
      { url: 'http://198.51.100.250:8429/metrics' },
      { url: `http://${target}/metrics` },
    ]);
    expect([a!.body === PAGE, refused!.ok, refused!.name, b!.body === PAGE]).toEqual([true, false, 'TypeError', true]);

    // The pod "restarts" behind another loopback port: the child sees the new process at once.
    pod2 = await startPodServer(() => '# the restarted pod\nup 1\n');
    const undo = registerPodPort(podIP, VMAGENT_POD_PORT, pod2.port);
    const [restarted] = await childFetch(gw.url, [{ url: `http://${target}/metrics` }]);
    expect(restarted).toMatchObject({ ok: true, status: 200, body: '# the restarted pod\nup 1\n' });
    undo();
    // ... and gone (its mapping removed): refused
    const [gone] = await childFetch(gw.url, [{ url: `http://${target}/metrics` }]);
    expect(gone).toMatchObject({ ok: false, name: 'TypeError' });
    unregister.push(registerPodPort(podIP, VMAGENT_POD_PORT, pod.port));
    // a registered port whose process is down: refused too
    await pod2.close();
    const undo2 = registerPodPort(podIP, VMAGENT_POD_PORT, pod2.port);
    const [down] = await childFetch(gw.url, [{ url: `http://${target}/metrics` }]);
    expect(down).toMatchObject({ ok: false, name: 'TypeError' });
    undo2();
    pod2 = undefined;
    unregister.push(registerPodPort(podIP, VMAGENT_POD_PORT, pod.port));
  });

  /** Runs `n` requests of the vmagent page with a client timeout; returns results and the kinds injected. */
  const faultRun = async (seed: number, n: number): Promise<{ results: FetchResult[]; kinds: FaultKind[] }> => {
    gw.setFaults({ seed, rate: 1, kinds: [...FAULT_KINDS], timeoutHoldMs: 20_000 });
    const results = await childFetch(
      gw.url,
      Array.from({ length: n }, () => ({ url: `http://${target}/metrics`, timeoutMs: 1500 })),
    );
    return { results, kinds: [...gw.faultKinds] };
  };

  it('rate 1: every eligible request gets a seeded fault of each kind; the same seed gives the same kinds', async () => {
    const n = 9;
    const first = await faultRun(7, n);
    expect(first.kinds).toHaveLength(n);
    expect(new Set(first.kinds)).toEqual(new Set(FAULT_KINDS)); // seed 7 draws each kind within 9 requests
    first.results.forEach((r, i) => {
      const kind = first.kinds[i]!;
      if (kind === 'timeout') {
        expect(r).toMatchObject({ ok: false });
        expect(r.name).toMatch(/TimeoutError|AbortError/);
        expect(r.ms).toBeGreaterThanOrEqual(1400);
      } else if (kind === 'truncated') {
        expect(r).toMatchObject({ ok: true, status: 200 });
        expect(r.body!.length).toBeLessThan(PAGE.length * 0.71);
        expect(r.body!.length).toBeGreaterThanOrEqual(Math.floor(PAGE.length * 0.3));
        expect(PAGE.startsWith(r.body!)).toBe(true);
      } else {
        expect(r).toMatchObject({ ok: true, status: 200 });
        expect(r.body).not.toBe(PAGE);
        expect(r.body).not.toMatch(/vmagent_remotewrite/);
        expect(
          r
            .body!.split('\n')
            .filter((l) => l !== '')
            .every((l) => !/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? -?[0-9.eE+-]+$/.test(l)),
        ).toBe(true);
      }
    });
    // the log names each fault
    const faulted = gw.requests.filter((e) => e.fault).slice(-n);
    expect(faulted.map((e) => e.fault)).toEqual(first.kinds);
    expect(faulted.filter((e) => e.fault === 'timeout').every((e) => e.status === undefined)).toBe(true);

    const again = await faultRun(7, n);
    expect(again.kinds).toEqual(first.kinds);
    // the same cut points too (the truncated bodies are equal)
    const truncatedBodies = (run: typeof first) => run.results.filter((_, i) => run.kinds[i] === 'truncated').map((r) => r.body);
    expect(truncatedBodies(again)).toEqual(truncatedBodies(first));
    const other = await faultRun(8, n);
    expect(other.kinds).not.toEqual(first.kinds);
  });

  it('a timeout fault the client does not abort: held, then the socket is destroyed (fetch throws)', async () => {
    gw.setFaults({ seed: 1, rate: 1, kinds: ['timeout'], timeoutHoldMs: 800 });
    const [r] = await childFetch(gw.url, [{ url: `http://${target}/metrics` }]);
    expect(r).toMatchObject({ ok: false, name: 'TypeError' });
    expect(r!.ms).toBeGreaterThanOrEqual(700);
    expect(gw.requests[gw.requests.length - 1]).toMatchObject({ fault: 'timeout', error: expect.stringMatching(/held 800 ms/) });
  });

  it("the worker's scrape code in a child process reads the pod through the gateway; faults surface as scrape errors", async () => {
    gw.setFaults({ seed: 11, rate: 1, kinds: ['timeout'], maxFaults: 1, timeoutHoldMs: 10_000 });
    const [timedOut, page, unmapped] = await childScrape(gw.url, [target, target, '198.51.100.250:8429']);
    expect(timedOut).toEqual({ ok: false, error: 'scrape error: no complete answer within 1000 ms' });
    expect(page).toEqual({ ok: true, body: PAGE });
    expect(unmapped!.ok).toBe(false);
    expect(unmapped!.error).toMatch(/^scrape error: .*fetch failed/);
    gw.setFaults(undefined);
  });

  it('only eligible requests get faults; maxFaults caps them; rate 0 and disabled leave everything untouched', async () => {
    gw.setFaults({ seed: 3, rate: 1, kinds: ['garbage'] });
    const [otherPod, echo, vmagent] = await childFetch(gw.url, [
      { url: `http://${otherIP}:${VMAGENT_POD_PORT}/metrics` },
      { url: `http://${target}/echo` },
      { url: `http://${target}/metrics` },
    ]);
    expect(otherPod).toMatchObject({ ok: true, status: 200, body: PAGE });
    expect(JSON.parse(echo!.body!)).toMatchObject({ url: '/echo' });
    expect(vmagent!.body).not.toBe(PAGE);
    expect(gw.faultKinds).toEqual(['garbage']);

    gw.setFaults({ seed: 3, rate: 1, kinds: ['truncated'], maxFaults: 2 });
    const capped = await childFetch(
      gw.url,
      Array.from({ length: 4 }, () => ({ url: `http://${target}/metrics` })),
    );
    expect(capped.map((r) => r.body === PAGE)).toEqual([false, false, true, true]);
    expect(gw.faultsInjected).toBe(2);

    // negative controls: rate 0, and faults switched off
    gw.setFaults({ seed: 7, rate: 0, kinds: [...FAULT_KINDS] });
    const untouched = await childFetch(
      gw.url,
      Array.from({ length: 6 }, () => ({ url: `http://${target}/metrics`, timeoutMs: 5000 })),
    );
    expect(untouched.every((r) => r.ok && r.status === 200 && r.body === PAGE)).toBe(true);
    expect(gw.faultsInjected).toBe(0);
    gw.setFaults({ seed: 7, rate: 1, kinds: [...FAULT_KINDS] });
    gw.setFaultsEnabled(false);
    const off = await childFetch(
      gw.url,
      Array.from({ length: 3 }, () => ({ url: `http://${target}/metrics`, timeoutMs: 5000 })),
    );
    expect(off.every((r) => r.ok && r.body === PAGE)).toBe(true);
    expect(gw.faultsInjected).toBe(0);
    gw.setFaults(undefined);
  });
});

describe('the worker and the trigger as SIGKILL-able, restartable processes', () => {
  let kube: KubeCluster;
  let temporal: TestWorkflowEnvironment;
  let identities: ChartIdentities;
  let keysFile: string;
  let gw: PodGateway;
  const procs: ControlProcess[] = [];

  beforeAll(async () => {
    gw = await startPodGateway();
    keysFile = writePayloadKeysFile().path;
    const [k, t] = await Promise.all([startKube(), startTemporalDevEnv(), buildWorkflowBundle()]);
    kube = k;
    temporal = t;
    await installCrdFiles(kube.kubeConfig, VM_OPERATOR_CRDS, path.join(REPO_ROOT, 'charts', 'vmrollout', 'crds'));
    identities = await installChartIdentities(kube.kubeConfig, {
      releaseNamespace: CHART_RELEASE_NAMESPACE,
      values: [`watchNamespaces={${NS}}`, `createNamespaces={${NS}}`, `vmauths={${NS}/vm-global}`],
    });
  }, 240_000);

  afterAll(async () => {
    for (const p of procs) await p.stop().catch(() => {});
    await gw?.close();
    await temporal?.teardown();
    await kube?.stop();
  }, 120_000);

  /** What the worker and the trigger are both started with. */
  const processOptions = (kubeConfig: KubeConfig) => ({
    kubeConfig,
    temporalAddress: temporal.address,
    temporalNamespace: temporal.namespace ?? 'default',
    taskQueue: 'chaos-ctl',
    payloadKeysFile: keysFile,
    createNamespaces: [NS],
  });

  /** SIGKILL, nothing of the incarnation left, started again after a pause, ready again. */
  async function killAndRestart(p: ControlProcess): Promise<void> {
    const pid = p.pid;
    expect(p.startups).toHaveLength(1);
    expect(p.startups[0]).toMatchObject({ pid, readyAt: expect.any(Number) });
    expect((await httpGet(`${p.baseUrl}/readyz`)).status).toBe(200);

    const exit = await p.kill();
    expect(exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(p.running).toBe(false);
    expect(pidAlive(pid)).toBe(false);
    expect(processesOf(pid)).toEqual([]); // no child, nothing of its process group
    await expect(httpGet(`${p.baseUrl}/readyz`, { timeoutMs: 1000 })).rejects.toThrow();
    expect(p.kills).toEqual([expect.objectContaining({ pid, signal: 'SIGKILL', exitedAt: expect.any(Number) })]);

    await p.restartAfter(300);
    expect(p.running).toBe(true);
    expect(p.pid).not.toBe(pid);
    await p.ready;
    expect(p.startups).toHaveLength(2);
    expect(p.startups[1]).toMatchObject({ pid: p.pid, readyAt: expect.any(Number) });
    expect(p.startups[1]!.startedAt).toBeGreaterThanOrEqual(p.kills[0]!.at + 300);
    expect((await httpGet(`${p.baseUrl}/readyz`)).status).toBe(200);
    // both incarnations wrote to the one log
    expect(p.logs.filter((l) => l.startsWith('=== ') && l.includes(' start: '))).toHaveLength(2);
  }

  it('the worker: ready, SIGKILLed (nothing survives), restarted, ready again', async () => {
    const w = await startWorkerProcess({ ...processOptions(identities.worker), podGatewayUrl: gw.url, extraEnv: { WORKER_INSTANCE: 'w1' } });
    procs.push(w);
    expect(w.env).toMatchObject({ POD_GATEWAY_URL: gw.url, TEMPORAL_PAYLOAD_KEYS_FILE: keysFile, WORKER_INSTANCE: 'w1', TASK_QUEUE: 'chaos-ctl' });
    expect(w.env.WORKFLOW_BUNDLE).toMatch(/workflow-bundle\.js$/);
    // one node process, the preload loaded before the entry
    expect(fs.readFileSync(`/proc/${w.pid}/cmdline`, 'utf8').split('\0').filter(Boolean)).toEqual([
      process.execPath,
      '--require',
      POD_NETWORK_PRELOAD,
      '--import',
      'tsx',
      path.join(REPO_ROOT, 'worker', 'main.ts'),
    ]);
    // its own families on /metrics
    expect((await httpGet(w.metricsUrl)).body).toMatch(/vmrollout_/);
    expect(w.logs.join('\n')).toMatch(/vmrollout worker: task queue chaos-ctl/);
    expect(w.logs.join('\n')).not.toMatch(/plaintext/); // the payload keys file is read
    await killAndRestart(w);
    await w.stop();
    expect(w.running).toBe(false);
  });

  it('the trigger: ready, SIGKILLed (nothing survives), restarted, ready again', async () => {
    const t = await startTriggerProcess({ ...processOptions(identities.trigger), watchNamespaces: [NS], logLevel: 'debug' });
    procs.push(t);
    expect(t.logs.join('\n')).toMatch(/trigger started/);
    await killAndRestart(t);
    await t.stop();
  });
});
