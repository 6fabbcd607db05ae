// Where vmagent /metrics credentials go, over real HTTP(S): a stand-in kube-apiserver serves the
// EndpointSlices, the Service, its pods and the credentials Secret; each "pod" is a server on
// 127.0.0.1 that records what it was sent, reached at its pod address (POD_IP, TEST-NET-2) through
// podNetworkFetch (kube-apiserver and the worker refuse loopback endpoints). Credentials reach
// only verified pods of the VMAgent (activities/pods/service-pods.ts); a TLS VMAgent is scraped over
// https with the server certificate verified; a redirect is never followed; the scrape timeout
// covers the headers as well as the body.
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { KubeConfig, type V1Endpoint, type V1EndpointSlice, type V1Pod, type V1Service } from '@kubernetes/client-node';
import type { KubeObjects } from '../../kube/custom-objects';
import { podsFromEndpointSlices, type PodEvidence } from '../../activities/pods/service-pods';
import { sliceOwnerProblem, targetRefProblem } from '../../activities/pods/service-ownership';
import { VmagentAuth } from '../../activities/vmagent/auth';
import { vmagentScheme, vmagentWorkloads } from '../../activities/vmagent/service';
import { QueueReader, type QueueReaderDeps } from '../../activities/vmagent/queue';
import type { QueueTarget } from '../../workflows/activity-types';
import { generateKubeCerts } from '../infra/harness/kube';
import { POD_IP, podNetworkFetch } from '../infra/harness/pod-network';
import { controllerSlice, podEndpoint as endpointOf, podObject, selectorLabels, serviceObject } from '../fixtures/pod-objects';
import { SECRET_PAGE, settled } from '../support/vmagent-pages';

/** The real vmagent page, settled (no block in a send-retry backoff). */
const PAGE = settled(SECRET_PAGE);
const U1 = 'http://127.0.0.1:1/api/v1/write';
const NS = 'ns';
const SVC = 'vmagent-va';
const SVC_UID = 'svc-uid';
const TOKEN = 's3cret-token';
const target: QueueTarget = { namespace: NS, vmagentName: 'va', vmclusterName: 'az-a', remoteWriteURL: U1, queueEmptyBytes: 1024 };
const ref = { namespace: NS, service: SVC, uid: SVC_UID };
const SERVICE: V1Service = serviceObject({ namespace: NS, name: SVC, uid: SVC_UID, selector: selectorLabels('vmagent', 'va'), port: 8429 });

/** A slice as the EndpointSlice controller writes it for Service ns/vmagent-va; `endpoints` are one per pod. */
const ownSlice = (name: string, endpoints: V1Endpoint[], port: number): V1EndpointSlice =>
  controllerSlice({ namespace: NS, name, service: SVC, serviceUid: SVC_UID, port, endpoints });
const podEndpoint = (pod: string, address = POD_IP, namespace = NS): V1Endpoint => endpointOf({ pod, ip: address, uid: `uid-${pod}` }, namespace);
/** The VMAgent's pod `name` (of its Deployment), at `ip`. */
const vmagentPod = (name: string, ip = POD_IP): V1Pod =>
  podObject({ namespace: NS, name, uid: `uid-${name}`, ip, labels: selectorLabels('vmagent', 'va'), workload: vmagentWorkloads('va')[0]! });
const evidence = (pods: V1Pod[] = [vmagentPod('vmagent-va-0')]): PodEvidence => ({
  service: SERVICE,
  pods: new Map(pods.map((p) => [p.metadata!.name!, p])),
  workloads: vmagentWorkloads('va'),
});

describe('which endpoints are the VMAgent’s pods (pure)', () => {
  const slice = ownSlice('vmagent-va-abc', [podEndpoint('vmagent-va-0')], 8429);
  const edit = (f: (s: V1EndpointSlice) => void): V1EndpointSlice => {
    const s = structuredClone(slice);
    f(s);
    return s;
  };

  it("the controller's slice of the Service, listing its Pod at its address, is the Service's", () => {
    expect(sliceOwnerProblem(slice, ref)).toBeUndefined();
    expect(targetRefProblem(slice.endpoints[0]!, NS)).toBeUndefined();
    expect(podsFromEndpointSlices([slice], NS, evidence())).toEqual([{ name: 'vmagent-va-0', address: POD_IP, port: 8429, ready: true }]);
  });

  it.each<[string, (s: V1EndpointSlice) => void, RegExp]>([
    ['in another namespace', (s) => (s.metadata!.namespace = 'other'), /is not in namespace ns/],
    [
      'labelled for another service',
      (s) => (s.metadata!.labels!['kubernetes.io/service-name'] = 'vmagent-x'),
      /is not labelled kubernetes.io\/service-name=vmagent-va/,
    ],
    [
      'managed by another controller',
      (s) => (s.metadata!.labels!['endpointslice.kubernetes.io/managed-by'] = 'endpointslicemirroring-controller.k8s.io'),
      /is managed by "endpointslicemirroring-controller.k8s.io", not endpointslice-controller.k8s.io/,
    ],
    ['without a managed-by label', (s) => delete s.metadata!.labels!['endpointslice.kubernetes.io/managed-by'], /is managed by no controller/],
    ['without owner', (s) => delete s.metadata!.ownerReferences, /is controlled by nothing, not Service vmagent-va/],
    ['owned, but not as controller', (s) => (s.metadata!.ownerReferences![0]!.controller = false), /is controlled by nothing/],
    [
      'controlled by another Service',
      (s) => (s.metadata!.ownerReferences![0]!.name = 'vmagent-x'),
      /is controlled by Service vmagent-x \(v1, uid svc-uid\), not Service vmagent-va/,
    ],
    [
      'controlled by a Service of that name, but another uid (a forged or stale owner)',
      (s) => (s.metadata!.ownerReferences![0]!.uid = 'forged'),
      /is controlled by Service vmagent-va \(v1, uid forged\), not Service vmagent-va \(uid svc-uid\)/,
    ],
    [
      'controlled by an Endpoints object of that name (a mirrored slice)',
      (s) => (s.metadata!.ownerReferences![0]!.kind = 'Endpoints'),
      /is controlled by Endpoints vmagent-va/,
    ],
    [
      'controlled by a custom kind named Service',
      (s) => (s.metadata!.ownerReferences![0]!.apiVersion = 'example.com/v1'),
      /is controlled by Service vmagent-va \(example.com\/v1/,
    ],
  ])('a slice %s is not', (_what, change, message) => {
    const s = edit(change);
    expect(sliceOwnerProblem(s, ref)).toMatch(message);
    const [pod] = podsFromEndpointSlices([s], NS, evidence());
    expect(pod).toMatchObject({ unverified: true, problem: expect.stringMatching(/^not verified as the workload's pod, not scraped: EndpointSlice /) });
    // Negative control: unverified (the test switch verifyPods: false), the same slice is scraped.
    expect(podsFromEndpointSlices([s], NS)[0]!.problem).toBeUndefined();
  });

  it.each<[string, V1Endpoint, RegExp]>([
    ['a Pod of another namespace', podEndpoint('vmagent-va-0', POD_IP, 'other'), /targetRef is Pod other\/vmagent-va-0, not a Pod in namespace ns/],
    ['a Node', { addresses: ['10.0.0.1'], targetRef: { kind: 'Node', name: 'n1' } }, /targetRef is Node \?\/n1/],
    ['nothing', { addresses: ['10.0.0.1'] }, /no targetRef/],
  ])('an endpoint naming %s is not', (_what, ep, message) => {
    expect(targetRefProblem(ep, NS)).toMatch(message);
    expect(podsFromEndpointSlices([ownSlice('s', [ep], 8429)], NS, evidence())[0]!.problem).toMatch(
      /^not verified as the workload's pod, not scraped: endpoint/,
    );
  });

  it("a foreign slice naming the Service's pod never displaces the controller's view of it", () => {
    const foreign = edit((s) => {
      delete s.metadata!.ownerReferences;
      s.endpoints[0]!.addresses = ['203.0.113.7'];
    });
    for (const order of [
      [foreign, slice],
      [slice, foreign],
    ]) {
      expect(podsFromEndpointSlices(order, NS, evidence())).toEqual([{ name: 'vmagent-va-0', address: POD_IP, port: 8429, ready: true }]);
    }
  });
});

describe('the scheme of a VMAgent (pure)', () => {
  it.each<[unknown, string]>([
    [undefined, 'http'],
    [{}, 'http'],
    [{ tls: 'false' }, 'http'],
    [{ tls: '0' }, 'http'],
    [{ tls: '' }, 'http'],
    [{ tls: 'true' }, 'https'],
    [{ tls: 'TRUE' }, 'https'],
    [{ tls: ' true ' }, 'https'],
    [{ tls: 'true,false' }, 'https'],
    [{ tls: 'false,true' }, 'http'],
    // vmagent serves TLS for these; the operator (== "true" only) would say http.
    [{ tls: '1' }, 'https'],
    [{ tls: 't' }, 'https'],
  ])('extraArgs %j → %s', (extraArgs, scheme) => {
    expect(vmagentScheme(extraArgs)).toEqual({ ok: true, scheme });
  });
  it('a value that is no boolean is a problem, not a guess', () => {
    expect(vmagentScheme({ tls: 'yes' })).toEqual({ ok: false, message: 'spec.extraArgs.tls "yes" is not a boolean: cannot tell whether its pods serve TLS' });
    expect(vmagentScheme({ tls: true })).toEqual({ ok: false, message: 'spec.extraArgs.tls is not a string (true)' });
  });
});

// ---------------------------------------------------------------------------------------------
// Over the network

interface Recorder {
  port: number;
  /** Every request received: its path and Authorization header. */
  requests: Array<{ url: string; authorization?: string }>;
  stop: () => Promise<void>;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;
const servePage: Handler = (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end(PAGE);
};

async function listen(server: http.Server | https.Server, handler: Handler): Promise<Recorder> {
  const requests: Recorder['requests'] = [];
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    requests.push({ url: req.url ?? '', authorization: req.headers.authorization });
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const rec: Recorder = {
    port: (server.address() as AddressInfo).port,
    requests,
    stop: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  started.push(rec);
  return rec;
}
const pod = (handler: Handler = servePage) => listen(http.createServer(), handler);

let started: Recorder[] = [];
afterEach(async () => {
  await Promise.all(started.map((s) => s.stop()));
  started = [];
});

interface World {
  slices: V1EndpointSlice[];
  /** The pods the Service's selector selects (default: pod vmagent-va-0 at POD_IP). */
  pods?: V1Pod[];
  /** Default SERVICE; null: there is none. */
  service?: V1Service | null;
}

/** The API server stand-in: the EndpointSlice list, the Service, its pods (whatever the test puts there) and the credentials Secret. */
async function apiServer(world: World): Promise<{ kc: KubeConfig; selectors: string[] }> {
  const selectors: string[] = [];
  const pods = world.pods ?? [vmagentPod('vmagent-va-0')];
  const service = world.service === undefined ? SERVICE : world.service;
  const api = await listen(http.createServer(), (req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const json = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (u.pathname === `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`) {
      selectors.push(u.searchParams.get('labelSelector') ?? '');
      return json(200, { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSliceList', metadata: {}, items: world.slices });
    }
    if (u.pathname === `/api/v1/namespaces/${NS}/services/${SVC}` && service) return json(200, service);
    if (u.pathname === `/api/v1/namespaces/${NS}/pods`) {
      selectors.push(`pods: ${u.searchParams.get('labelSelector') ?? ''}`);
      return json(200, { apiVersion: 'v1', kind: 'PodList', metadata: {}, items: pods });
    }
    if (u.pathname === `/api/v1/namespaces/${NS}/secrets/creds`) {
      return json(200, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'creds', namespace: NS },
        data: { token: Buffer.from(TOKEN).toString('base64') },
      });
    }
    json(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound' });
  });
  const kc = new KubeConfig();
  kc.loadFromOptions({
    // The client refuses plain http unless told to skip TLS verification (there is no TLS to verify).
    clusters: [{ name: 'c', server: `http://127.0.0.1:${api.port}`, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return { kc, selectors };
}

async function reader(
  world: V1EndpointSlice[] | World,
  opts: { extraArgs?: Record<string, string>; credentials?: boolean } & Omit<Partial<QueueReaderDeps>, 'auth'> = {},
) {
  const { extraArgs, credentials = true, ...deps } = opts;
  const { kc, selectors } = await apiServer(Array.isArray(world) ? { slices: world } : world);
  const kube = {
    get: async () => ({ metadata: { name: 'va', namespace: NS }, spec: { remoteWrite: [{ url: U1 }], ...(extraArgs ? { extraArgs } : {}) } }),
  } as unknown as KubeObjects;
  const r = new QueueReader({
    kube,
    kubeConfig: kc,
    fetch: podNetworkFetch,
    ...(credentials ? { auth: new VmagentAuth(kc, { secretName: 'creds' }) } : {}),
    ...deps,
  });
  return { r, selectors };
}

describe('credentials reach only the pods of the VMAgent’s own Service', () => {
  it("the controller's slice: the pod gets the token, the page is read", async () => {
    const p = await pod();
    const { r, selectors } = await reader([ownSlice('vmagent-va-abc', [podEndpoint('vmagent-va-0')], p.port)]);
    expect(await r.sample(target)).toMatchObject({ drained: true, totalPods: 1, unreadablePods: 0 });
    // The slices of the Service, and its pods by the Service's own selector (what the EndpointSlice controller selects).
    expect(selectors.sort()).toEqual([
      'kubernetes.io/service-name=vmagent-va',
      'pods: app.kubernetes.io/name=vmagent,app.kubernetes.io/instance=va,app.kubernetes.io/component=monitoring,managed-by=vm-operator',
    ]);
    expect(p.requests).toEqual([{ url: '/metrics', authorization: `Bearer ${TOKEN}` }]);
  });

  it('a foreign slice (same label, no Service owner) and an endpoint of another namespace get no request at all, and the queue is not drained', async () => {
    const [own, foreign, otherNs] = await Promise.all([pod(), pod(), pod()]);
    const foreignSlice = ownSlice('vmagent-va-evil', [podEndpoint('evil-0')], foreign.port);
    delete foreignSlice.metadata!.ownerReferences;
    const { r } = await reader([
      ownSlice('vmagent-va-abc', [podEndpoint('vmagent-va-0')], own.port),
      foreignSlice,
      ownSlice('vmagent-va-def', [podEndpoint('elsewhere-0', POD_IP, 'other')], otherNs.port),
    ]);
    const sample = await r.sample(target);
    expect(sample).toMatchObject({ drained: false, totalPods: 3, unreadablePods: 2 });
    expect(sample.message).toContain(
      "vmagent pod evil-0: not verified as the workload's pod, not scraped: EndpointSlice ns/vmagent-va-evil is controlled by nothing, not Service vmagent-va (uid svc-uid)",
    );
    expect(sample.message).toContain(
      "vmagent pod elsewhere-0: not verified as the workload's pod, not scraped: endpoint's targetRef is Pod other/elsewhere-0, not a Pod in namespace ns",
    );
    expect(own.requests).toEqual([{ url: '/metrics', authorization: `Bearer ${TOKEN}` }]);
    expect(foreign.requests).toEqual([]);
    expect(otherNs.requests).toEqual([]);
  });

  it('without credentials configured the pods are verified all the same (a foreign slice is not drained), and no Authorization header is sent', async () => {
    const [own, foreign] = await Promise.all([pod(), pod()]);
    const hand = ownSlice('vmagent-va-hand', [podEndpoint('vmagent-va-9')], foreign.port);
    delete hand.metadata!.ownerReferences;
    const { r } = await reader([ownSlice('vmagent-va-abc', [podEndpoint('vmagent-va-0')], own.port), hand], { credentials: false });
    expect(await r.sample(target)).toMatchObject({ drained: false, totalPods: 2, unreadablePods: 1 });
    expect(own.requests).toEqual([{ url: '/metrics', authorization: undefined }]);
    expect(foreign.requests).toEqual([]);
  });

  it('no Service: no endpoint is verified, none is scraped', async () => {
    const p = await pod();
    const { r } = await reader({ slices: [ownSlice('vmagent-va-abc', [podEndpoint('vmagent-va-0')], p.port)], service: null });
    const sample = await r.sample(target);
    expect(sample).toMatchObject({ drained: false, unreadablePods: 1 });
    expect(sample.message).toContain('Service ns/vmagent-va not found');
    expect(p.requests).toEqual([]);
  });
});

describe('a redirect is never followed', () => {
  it.each([
    ['to another host', (other: number) => `http://localhost:${other}/metrics`],
    ['to the same pod', () => '/other/metrics'],
  ])('302 %s: a read problem naming the status, no second request', async (_what, location) => {
    const elsewhere = await pod();
    const p = await pod((_req, res) => {
      res.writeHead(302, { location: location(elsewhere.port) });
      res.end('moved');
    });
    const { r } = await reader([ownSlice('vmagent-va-abc', [podEndpoint('vmagent-va-0')], p.port)]);
    const sample = await r.sample(target);
    expect(sample).toMatchObject({ drained: false, unreadablePods: 1 });
    expect(sample.message).toContain(`vmagent pod vmagent-va-0: scrape error: HTTP 302 from http://${POD_IP}:${p.port}/metrics (a redirect: not followed)`);
    expect(p.requests).toHaveLength(1);
    expect(elsewhere.requests).toEqual([]);
  });
});

describe('the scrape timeout covers the headers', () => {
  it('a pod that accepts the request and never answers is a scrape error in time', async () => {
    const p = await pod(() => {}); // never a status line
    const { r } = await reader([ownSlice('vmagent-va-abc', [podEndpoint('vmagent-va-0')], p.port)], { scrapeTimeoutMs: 300 });
    const t0 = Date.now();
    const sample = await r.sample(target);
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect(sample.message).toContain('vmagent pod vmagent-va-0: scrape error: no complete answer within 300 ms');
  });
});

describe('a TLS VMAgent is scraped over https, its certificate verified', () => {
  it('extraArgs.tls "true": the https URL, with the credentials; without it: http', async () => {
    const urls: string[] = [];
    const recordingFetch: typeof fetch = async (input, init) => {
      urls.push(`${String(input)} ${new Headers(init?.headers).get('authorization')}`);
      return new Response(PAGE, { status: 200 });
    };
    const world = { slices: [ownSlice('vmagent-va-abc', [podEndpoint('vmagent-va-0', '10.1.2.3')], 8429)], pods: [vmagentPod('vmagent-va-0', '10.1.2.3')] };
    expect(await (await reader(world, { extraArgs: { tls: 'true' }, fetch: recordingFetch })).r.sample(target)).toMatchObject({ drained: true });
    expect(await (await reader(world, { fetch: recordingFetch })).r.sample(target)).toMatchObject({ drained: true });
    expect(urls).toEqual([`https://10.1.2.3:8429/metrics Bearer ${TOKEN}`, `http://10.1.2.3:8429/metrics Bearer ${TOKEN}`]);
  });

  it('extraArgs.tls that is no boolean: no pod is scraped', async () => {
    const p = await pod();
    const { r } = await reader([ownSlice('vmagent-va-abc', [podEndpoint('vmagent-va-0')], p.port)], { extraArgs: { tls: 'yes' } });
    expect(await r.sample(target)).toMatchObject({
      drained: false,
      message: 'VMAgent va: spec.extraArgs.tls "yes" is not a boolean: cannot tell whether its pods serve TLS',
    });
    expect(p.requests).toEqual([]);
  });

  it('a certificate from a CA the worker does not trust: the handshake fails, no request (and no credentials) is sent', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vmrollout-tls-'));
    try {
      const certs = generateKubeCerts(dir); // a CA, and a serving certificate for 127.0.0.1 it signed
      const p = await listen(https.createServer({ cert: fs.readFileSync(certs.serverCert), key: fs.readFileSync(certs.serverKey) }), servePage);
      // Control: the server answers whoever trusts its CA.
      const status = await new Promise<number | undefined>((resolve, reject) => {
        https
          .get(`https://127.0.0.1:${p.port}/metrics`, { ca: fs.readFileSync(certs.caCert) }, (res) => (res.resume(), resolve(res.statusCode)))
          .on('error', reject);
      });
      expect(status).toBe(200);
      p.requests.length = 0;

      const { r } = await reader([ownSlice('vmagent-va-abc', [podEndpoint('vmagent-va-0')], p.port)], { extraArgs: { tls: 'true' } });
      const sample = await r.sample(target);
      expect(sample).toMatchObject({ drained: false, unreadablePods: 1 });
      expect(sample.message).toContain('vmagent pod vmagent-va-0: scrape error: TypeError: fetch failed');
      // Why (jest's realm hides the cause from describeError's `instanceof Error`): the same fetch
      // refuses the certificate.
      const err: unknown = await fetch(`https://127.0.0.1:${p.port}/metrics`).catch((e: unknown) => e);
      expect((err as { cause?: { code?: string } }).cause?.code).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
      expect(p.requests).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
