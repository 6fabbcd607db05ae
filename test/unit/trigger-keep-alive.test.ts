// One keep-alive agent per KubeConfig for the trigger's Kubernetes calls (trigger/keep-alive.ts),
// against a local mTLS https server that counts the TLS connections it accepts: client-node 1.x
// alone opens one per request; on the shared agent, sequential requests (API clients, KubeOps, the
// fetch path the Watch uses) all go over one connection, with the CA and client certificate of the
// KubeConfig. Also the cache key: per cluster and per agent options' content.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { agentKey, defaultKubeConfig, withKeepAliveAgent } from '../../kube/keep-alive';
import { createKubeOps } from '../../trigger/kube';

interface Certs {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

/** A CA, a serving cert for 127.0.0.1 and a client cert, with the openssl CLI (EC P-256). */
function generateCerts(dir: string): Certs {
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=keep-alive-test-ca']);
  fs.writeFileSync(path.join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  run(['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=apiserver']);
  run([
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.crt',
    '-days',
    '2',
    '-extfile',
    'server.ext',
  ]);
  fs.writeFileSync(path.join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  run(['req', ...ec, '-keyout', 'client.key', '-out', 'client.csr', '-subj', '/CN=trigger']);
  run([
    'x509',
    '-req',
    '-in',
    'client.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'client.crt',
    '-days',
    '2',
    '-extfile',
    'client.ext',
  ]);
  const read = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8');
  return { ca: read('ca.crt'), serverCert: read('server.crt'), serverKey: read('server.key'), clientCert: read('client.crt'), clientKey: read('client.key') };
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

let dir: string;
let certs: Certs;
let server: https.Server;
let url: string;
/** TLS connections accepted, and how many of them presented a client certificate the CA signed. */
let connections = 0;
let authorized = 0;
let requests = 0;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trigger-keep-alive-'));
  certs = generateCerts(dir);
  // Every GET answers with a VMDistributedCluster-shaped object: enough for CoreV1Api and KubeOps.get.
  server = https.createServer({ key: certs.serverKey, cert: certs.serverCert, ca: certs.ca, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    requests++;
    req.resume();
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns', namespace: 'ns', uid: 'u', resourceVersion: '1' } }));
  });
  server.on('secureConnection', (socket) => {
    connections++;
    if (socket.authorized) authorized++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  fs.rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  connections = authorized = requests = 0;
});

/** A KubeConfig for the local server: its CA, a client certificate (data, or files). */
function kubeConfig(opts: { server?: string; files?: boolean } = {}): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  const user: k8s.User = opts.files
    ? { name: 'trigger', certFile: path.join(dir, 'client.crt'), keyFile: path.join(dir, 'client.key') }
    : { name: 'trigger', certData: b64(certs.clientCert), keyData: b64(certs.clientKey) };
  kc.loadFromOptions({
    clusters: [{ name: 'local', server: opts.server ?? url, caData: b64(certs.ca), skipTLSVerify: false }],
    users: [user],
    contexts: [{ name: 'local', cluster: 'local', user: 'trigger' }],
    currentContext: 'local',
  });
  return kc;
}

async function sequentialReads(kc: k8s.KubeConfig, n: number): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  for (let i = 0; i < n; i++) await core.readNamespace({ name: 'ns' });
}

/** A GET on the fetch path (applyToHTTPSOptions: what the Watch uses), with the agent it hands out. */
async function fetchPathGet(kc: k8s.KubeConfig): Promise<https.Agent> {
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  await new Promise<void>((resolve, reject) => {
    https
      .get(`${url}/api/v1/namespaces/ns`, opts, (res) => {
        res.resume();
        res.on('end', resolve);
      })
      .on('error', reject);
  });
  return opts.agent as https.Agent;
}

describe('withKeepAliveAgent', () => {
  it('control: client-node 1.x alone opens a new TLS connection per request (if this fails, client-node changed: see trigger/keep-alive.ts)', async () => {
    await sequentialReads(kubeConfig(), 4);
    expect(requests).toBe(4);
    expect(connections).toBe(4);
  });

  it('sequential requests of the API clients, of KubeOps and of the fetch path share ONE connection, with the client certificate', async () => {
    const kc = withKeepAliveAgent(kubeConfig());
    await sequentialReads(kc, 5);
    const kube = createKubeOps(kc, 'test');
    for (let i = 0; i < 3; i++) expect(await kube.get('ns', 'c1')).toMatchObject({ metadata: { name: 'ns' } });
    await fetchPathGet(kc);
    expect(requests).toBe(9);
    expect(connections).toBe(1);
    expect(authorized).toBe(1);
  });

  it('concurrent requests open what they need at once, and the next ones reuse those connections', async () => {
    const kc = withKeepAliveAgent(kubeConfig());
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await Promise.all(Array.from({ length: 5 }, () => core.readNamespace({ name: 'ns' })));
    const opened = connections;
    expect(opened).toBeGreaterThanOrEqual(1);
    expect(opened).toBeLessThanOrEqual(5);
    await Promise.all(Array.from({ length: 5 }, () => core.readNamespace({ name: 'ns' })));
    await sequentialReads(kc, 5);
    expect(requests).toBe(15);
    expect(connections).toBe(opened);
  });

  it('hands out the same agent to every request of one cluster (also with the certificate in files), and is idempotent', async () => {
    const kc = kubeConfig({ files: true });
    expect(withKeepAliveAgent(withKeepAliveAgent(kc))).toBe(kc);
    const a = await fetchPathGet(kc);
    const b = await fetchPathGet(kc);
    expect(a).toBe(b);
    expect((a as https.Agent & { keepAlive?: boolean }).keepAlive).toBe(true);
    expect(connections).toBe(1);
    expect(authorized).toBe(1);
  });

  it('another KubeConfig gets its own agent (one per KubeConfig)', async () => {
    const a = await fetchPathGet(withKeepAliveAgent(kubeConfig()));
    const b = await fetchPathGet(withKeepAliveAgent(kubeConfig()));
    expect(a).not.toBe(b);
  });

  it('keeps a few agents per KubeConfig: the least recently used beyond 4 (a rotated CA, other contexts) is retired', async () => {
    const kc = new k8s.KubeConfig();
    const names = ['c0', 'c1', 'c2', 'c3', 'c4'];
    kc.loadFromOptions({
      clusters: names.map((n, i) => ({ name: n, server: `https://127.0.0.${i + 10}:6443`, caData: b64(certs.ca), skipTLSVerify: false })),
      users: [{ name: 'u', token: 't' }],
      contexts: names.map((n) => ({ name: n, cluster: n, user: 'u' })),
      currentContext: 'c0',
    });
    withKeepAliveAgent(kc);
    const agentOf = async (context: string) => {
      kc.setCurrentContext(context);
      const o: https.RequestOptions = {};
      await kc.applyToHTTPSOptions(o);
      return o.agent as https.Agent;
    };
    const fakeSocket = { setKeepAlive: () => undefined, unref: () => undefined, setTimeout: () => undefined, timeout: 0 } as unknown as Socket;
    const c0 = await agentOf('c0');
    for (const n of ['c1', 'c2', 'c3']) await agentOf(n);
    expect(await agentOf('c0')).toBe(c0); // 4 agents: every one kept (c0 now the most recently used)
    const c1 = await agentOf('c1');
    await agentOf('c4'); // a 5th: the least recently used (c2's) is retired
    expect(await agentOf('c0')).toBe(c0);
    expect(await agentOf('c1')).toBe(c1);
    expect(c0.keepSocketAlive(fakeSocket)).toBe(true);
    await agentOf('c2'); // c2 again: a new agent, and c3's (now the least recently used) is retired
    const c3 = await agentOf('c3');
    expect(c3.keepSocketAlive(fakeSocket)).toBe(true);
    // A retired agent keeps no socket once its request ends (in-flight requests finish).
    const retired = await (async () => {
      const kc2 = withKeepAliveAgent(kubeConfig());
      const old = await fetchPathGet(kc2);
      // Four other servers for the current cluster (what a rotation looks like to the cache).
      for (let i = 0; i < 4; i++) {
        kc2.clusters[0] = { ...kc2.clusters[0]!, server: `https://127.0.0.${20 + i}:6443` };
        const o: https.RequestOptions = {};
        await kc2.applyToHTTPSOptions(o);
      }
      return old;
    })();
    expect(retired.keepSocketAlive(fakeSocket)).toBe(false);
    const idle = Object.values(retired.freeSockets).flat();
    expect(idle.every((socket) => socket?.destroyed)).toBe(true);
  });

  it('defaultKubeConfig (what the trigger uses without one given) is on the keep-alive agent', async () => {
    const file = path.join(dir, 'kubeconfig');
    fs.writeFileSync(file, kubeConfig().exportConfig());
    const saved = process.env.KUBECONFIG;
    process.env.KUBECONFIG = file;
    try {
      await sequentialReads(defaultKubeConfig(), 4);
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
    expect(requests).toBe(4);
    expect(connections).toBe(1);
  });
});

describe('agentKey: what one cached agent stands for', () => {
  const cluster = { name: 'c', server: 'https://10.0.0.1', skipTLSVerify: false };
  const opts = { ca: Buffer.from('CA-1'), cert: Buffer.from('CERT'), key: Buffer.from('KEY'), rejectUnauthorized: undefined };

  it('the same cluster and the same options (by content, not identity) → the same key', () => {
    expect(agentKey(cluster, opts)).toBe(agentKey({ ...cluster }, { ...opts, ca: Buffer.from('CA-1') }));
  });

  it('another cluster, a rotated CA or client certificate, other TLS settings → another key', () => {
    const k = agentKey(cluster, opts);
    expect(agentKey({ ...cluster, server: 'https://10.0.0.2' }, opts)).not.toBe(k);
    expect(agentKey({ ...cluster, name: 'other' }, opts)).not.toBe(k);
    expect(agentKey({ ...cluster, skipTLSVerify: true }, opts)).not.toBe(k);
    expect(agentKey(cluster, { ...opts, ca: Buffer.from('CA-2') })).not.toBe(k);
    expect(agentKey(cluster, { ...opts, cert: Buffer.from('CERT-2') })).not.toBe(k);
    expect(agentKey(cluster, { ...opts, rejectUnauthorized: false })).not.toBe(k);
    expect(agentKey(cluster, { ...opts, servername: 'kubernetes' })).not.toBe(k);
  });

  it('never holds key material in clear', () => {
    expect(agentKey(cluster, opts)).not.toMatch(/KEY|CERT|CA-1/);
  });

  it('not cached: a proxy, no cluster, or options it cannot fingerprint', () => {
    expect(agentKey({ ...cluster, proxyUrl: 'http://proxy:3128' }, opts)).toBeUndefined();
    expect(agentKey(null, opts)).toBeUndefined();
    expect(agentKey(cluster, { ...opts, checkServerIdentity: () => undefined })).toBeUndefined();
  });

  it("a proxied cluster gets client-node's own agent per request, as before", async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'p', server: 'https://10.0.0.1', proxyUrl: 'http://127.0.0.1:1', skipTLSVerify: false }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'p', cluster: 'p', user: 'u' }],
      currentContext: 'p',
    });
    withKeepAliveAgent(kc);
    const a: https.RequestOptions = {};
    const b: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(a);
    await kc.applyToHTTPSOptions(b);
    expect(a.agent).toBeDefined();
    expect(a.agent).not.toBe(b.agent);
  });
});
