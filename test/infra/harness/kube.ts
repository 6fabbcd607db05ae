/**
 * A real Kubernetes API on loopback: etcd + kube-apiserver, optionally kube-controller-manager
 * running only the garbage collector (no other controller, no scheduler, no kubelet: nothing
 * creates pods or EndpointSlices; tests create them by hand).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import type * as https from 'node:https';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { freePort } from './ports';
import { harnessTempDir, httpGet, httpReady, httpRequest, startProcess, waitFor, type ManagedProcess } from './processes';
import { toolPath } from './tools';

export interface KubeCerts {
  dir: string;
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  saKey: string;
  saPub: string;
  adminCert: string;
  adminKey: string;
}

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { code?: string; stderr?: Buffer };
    if (e.code === 'ENOENT') throw new Error('openssl not found on PATH: it is needed to generate the test cluster certificates (apt-get install openssl)');
    throw new Error(`openssl ${args.join(' ')} failed: ${e.stderr?.toString() ?? String(err)}`);
  }
}

/** Generates a CA, a serving cert (SAN 127.0.0.1, localhost, the service IP), a service-account key pair and an admin client cert (CN=admin, O=system:masters) with the openssl CLI (EC P-256 keys). */
export function generateKubeCerts(dir: string): KubeCerts {
  fs.mkdirSync(dir, { recursive: true });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '3650', '-subj', '/CN=vmrollout-test-ca'], dir);
  fs.writeFileSync(
    path.join(dir, 'server.ext'),
    'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n',
  );
  openssl(['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=kube-apiserver'], dir);
  openssl(
    [
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
      '3650',
      '-extfile',
      'server.ext',
    ],
    dir,
  );
  fs.writeFileSync(path.join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature,keyEncipherment\n');
  openssl(['req', ...ec, '-keyout', 'admin.key', '-out', 'admin.csr', '-subj', '/O=system:masters/CN=admin'], dir);
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'admin.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'admin.crt',
      '-days',
      '3650',
      '-extfile',
      'client.ext',
    ],
    dir,
  );
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', 'sa.key'], dir);
  openssl(['pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);
  const p = (f: string) => path.join(dir, f);
  return {
    dir,
    caCert: p('ca.crt'),
    caKey: p('ca.key'),
    serverCert: p('server.crt'),
    serverKey: p('server.key'),
    saKey: p('sa.key'),
    saPub: p('sa.pub'),
    adminCert: p('admin.crt'),
    adminKey: p('admin.key'),
  };
}

export interface EtcdHandle {
  url: string;
  dataDir: string;
  process: ManagedProcess;
  stop(): Promise<void>;
}

/** Starts etcd on loopback with a temp data dir; ready when /health reports true. */
export async function startEtcd(opts: { dataDir?: string; logDir?: string } = {}): Promise<EtcdHandle> {
  const clientPort = await freePort();
  const peerPort = await freePort();
  const dataDir = opts.dataDir ?? harnessTempDir('etcd-data');
  const url = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const proc = await startProcess({
    name: 'etcd',
    command: toolPath('etcd'),
    args: [
      '--name=default',
      `--data-dir=${dataDir}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=default=${peer}`,
      '--unsafe-no-fsync',
      '--log-level=warn',
    ],
    logDir: opts.logDir,
    ready: httpReady(`${url}/health`, { bodyMatches: /"health":\s*"true"/ }),
    readyTimeoutMs: 30_000,
  });
  return { url, dataDir, process: proc, stop: () => proc.stop() };
}

export interface KubeCluster {
  /** https://127.0.0.1:<port> */
  server: string;
  kubeconfigPath: string;
  kubeConfig: k8s.KubeConfig;
  certs: KubeCerts;
  etcd: EtcdHandle;
  apiserver: ManagedProcess;
  /**
   * kube-controller-manager running only the garbage collector (`garbageCollector: true`).
   * The collector discovers resources at start, then only every 30 s (a constant in
   * kube-controller-manager, no flag): `restart()` it (0.3 s) after installing CRDs so that it
   * watches them at once; otherwise their objects are still collected, but up to 30 s late.
   */
  controllerManager?: ManagedProcess;
  /**
   * With `audit`: the kube-apiserver's audit log (JSON lines, one audit.k8s.io/v1 Event per line,
   * written in blocking mode: no event is dropped, each is written as its request completes). See
   * test/infra/chaos/audit-log.ts to read it.
   */
  auditLogPath?: string;
  /** Stops kube-controller-manager, kube-apiserver, then etcd. */
  stop(): Promise<void>;
}

export interface StartKubeOptions {
  /** Extra kube-apiserver flags. */
  extraArgs?: string[];
  /** Directory for certs, kubeconfig, etcd data and logs; default: a fresh temp dir. */
  dir?: string;
  readyTimeoutMs?: number;
  /** Also run kube-controller-manager's garbage collector: deleting an owner deletes the objects whose ownerReferences name it. */
  garbageCollector?: boolean;
  /**
   * Write an audit log (`auditLogPath`): `true` = DEFAULT_AUDIT_POLICY, or `{ policy }` with an
   * audit.k8s.io/v1 Policy as YAML. Default: no audit log.
   */
  audit?: boolean | { policy: string };
}

/**
 * The audit policy of `audit: true`: every write (create, update, patch, delete, deletecollection)
 * to vmrollout.io and operator.victoriametrics.com objects (all resources and subresources, status
 * included), EndpointSlices and pods with request and response bodies; Secret writes at Metadata
 * level (who, what, when: never their data); nothing else (reads, watches, events, leases), so the
 * log stays small. Only the ResponseComplete stage (and Panic) is logged.
 */
export const DEFAULT_AUDIT_POLICY = [
  'apiVersion: audit.k8s.io/v1',
  'kind: Policy',
  'omitStages: [RequestReceived]',
  'rules:',
  // First match wins: Secrets before anything that could log their bodies.
  '- level: Metadata',
  '  verbs: [create, update, patch, delete, deletecollection]',
  '  resources:',
  '  - group: ""',
  '    resources: [secrets]',
  '- level: RequestResponse',
  '  verbs: [create, update, patch, delete, deletecollection]',
  '  resources:',
  // An empty resources list means every resource and subresource of the group.
  '  - group: vmrollout.io',
  '  - group: operator.victoriametrics.com',
  '  - group: discovery.k8s.io',
  '    resources: [endpointslices]',
  '  - group: ""',
  '    resources: [pods, pods/status]',
  '- level: None',
  '',
].join('\n');

/** kube-apiserver flags for an audit log at `dir`/audit.log with `policy` (written to `dir`/audit-policy.yaml). */
function auditArgs(dir: string, policy: string): { args: string[]; auditLogPath: string } {
  const policyPath = path.join(dir, 'audit-policy.yaml');
  fs.writeFileSync(policyPath, policy);
  const auditLogPath = path.join(dir, 'audit.log');
  return {
    auditLogPath,
    args: [
      `--audit-policy-file=${policyPath}`,
      `--audit-log-path=${auditLogPath}`,
      '--audit-log-format=json',
      // Synchronous (no buffer that drops events under load): each event is written as its request completes.
      '--audit-log-mode=blocking',
      // MB before rotation (0 would mean lumberjack's default, 100 MB): a test never rotates.
      '--audit-log-maxsize=100000',
    ],
  };
}

/** Starts etcd + kube-apiserver (RBAC, admin client cert), waits for /readyz and the `default` namespace, writes a kubeconfig; with `garbageCollector`, then the garbage collector. */
export async function startKube(opts: StartKubeOptions = {}): Promise<KubeCluster> {
  const apiserverBin = toolPath('kube-apiserver');
  toolPath('etcd');
  if (opts.garbageCollector) toolPath('kube-controller-manager');
  const dir = opts.dir ?? harnessTempDir('kube');
  const certs = generateKubeCerts(path.join(dir, 'pki'));
  const audit = opts.audit ? auditArgs(dir, opts.audit === true ? DEFAULT_AUDIT_POLICY : opts.audit.policy) : undefined;
  const etcd = await startEtcd({ dataDir: path.join(dir, 'etcd'), logDir: dir });
  let apiserver: ManagedProcess | undefined;
  let controllerManager: ManagedProcess | undefined;
  try {
    const port = await freePort();
    const server = `https://127.0.0.1:${port}`;
    const ca = fs.readFileSync(certs.caCert);
    const cert = fs.readFileSync(certs.adminCert);
    const key = fs.readFileSync(certs.adminKey);
    apiserver = await startProcess({
      name: 'kube-apiserver',
      command: apiserverBin,
      args: [
        `--etcd-servers=${etcd.url}`,
        `--secure-port=${port}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--tls-cert-file=${certs.serverCert}`,
        `--tls-private-key-file=${certs.serverKey}`,
        `--client-ca-file=${certs.caCert}`,
        '--authorization-mode=RBAC',
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        `--service-account-key-file=${certs.saPub}`,
        `--service-account-signing-key-file=${certs.saKey}`,
        '--service-cluster-ip-range=10.0.0.0/24',
        `--cert-dir=${path.join(dir, 'apiserver-certs')}`,
        '--enable-priority-and-fairness=false',
        '--profiling=false',
        '--v=0',
        ...(audit?.args ?? []),
        ...(opts.extraArgs ?? []),
      ],
      logDir: dir,
      ready: httpReady(`${server}/readyz`, { ca, cert, key }),
      readyTimeoutMs: opts.readyTimeoutMs ?? 90_000,
    });
    const kubeconfigPath = path.join(dir, 'kubeconfig');
    fs.writeFileSync(kubeconfigPath, renderKubeconfig(server, ca, cert, key));
    const kubeConfig = new k8s.KubeConfig();
    kubeConfig.loadFromFile(kubeconfigPath);
    const ap = apiserver;
    // The bootstrap controller creates the `default` namespace shortly after /readyz.
    await waitFor(async () => (await httpGet(`${server}/api/v1/namespaces/default`, { ca, cert, key })).status === 200, {
      timeoutMs: 30_000,
      description: 'namespace "default" to exist',
      diagnostics: () => ap.logTail(),
    });
    if (opts.garbageCollector) controllerManager = await startGarbageCollector(dir, kubeconfigPath, certs, { ca, cert, key }, opts.readyTimeoutMs ?? 90_000);
    return {
      server,
      kubeconfigPath,
      kubeConfig,
      certs,
      etcd,
      apiserver,
      controllerManager,
      ...(audit ? { auditLogPath: audit.auditLogPath } : {}),
      async stop() {
        await controllerManager?.stop();
        await ap.stop();
        await etcd.stop();
      },
    };
  } catch (err) {
    await controllerManager?.stop();
    await apiserver?.stop();
    await etcd.stop();
    throw err;
  }
}

const GARBAGE_COLLECTOR = 'garbage-collector-controller';

/** kube-controller-manager with only the garbage collector, as the admin of `kubeconfigPath`, serving on a free loopback port. */
async function startGarbageCollector(
  dir: string,
  kubeconfigPath: string,
  certs: KubeCerts,
  admin: { ca: Buffer; cert: Buffer; key: Buffer },
  readyTimeoutMs: number,
): Promise<ManagedProcess> {
  const port = await freePort();
  return startProcess({
    name: 'kube-controller-manager',
    command: toolPath('kube-controller-manager'),
    args: [
      `--kubeconfig=${kubeconfigPath}`,
      `--controllers=${GARBAGE_COLLECTOR}`,
      '--leader-elect=false',
      // No serviceaccount-token controller mints per-controller tokens here.
      '--use-service-account-credentials=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${port}`,
      `--tls-cert-file=${certs.serverCert}`,
      `--tls-private-key-file=${certs.serverKey}`,
      // Authenticates the admin client cert (system:masters, always authorized) for the readiness check.
      `--client-ca-file=${certs.caCert}`,
      '--profiling=false',
      // Logs each discovery change and each deletion of the garbage collector.
      '--v=2',
    ],
    logDir: dir,
    // Served once the collector has started; it watches every discovered resource a moment later
    // (0.1 s here) and holds deletions until then. /healthz answers before any controller runs.
    ready: httpReady(`https://127.0.0.1:${port}/debug/controllers/${GARBAGE_COLLECTOR}/graph`, admin),
    readyTimeoutMs,
  });
}

/** A kubeconfig YAML (context `vmrollout-test`, user `admin`) with embedded certs. */
export function renderKubeconfig(server: string, ca: Buffer, cert: Buffer, key: Buffer): string {
  const b64 = (b: Buffer) => b.toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: vmrollout-test',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${b64(ca)}`,
    'users:',
    '- name: admin',
    '  user:',
    `    client-certificate-data: ${b64(cert)}`,
    `    client-key-data: ${b64(key)}`,
    'contexts:',
    '- name: vmrollout-test',
    '  context:',
    '    cluster: vmrollout-test',
    '    user: admin',
    '    namespace: default',
    'current-context: vmrollout-test',
    '',
  ].join('\n');
}

/** A CRD in wire form (keys as in YAML, e.g. `x-kubernetes-preserve-unknown-fields`). */
export type CRD = k8s.V1CustomResourceDefinition;

/** Reads CRDs from YAML files (multi-document) or directories of them; other kinds are ignored. */
export function loadCRDs(...files: string[]): CRD[] {
  const out: CRD[] = [];
  for (const f of files) {
    if (fs.statSync(f).isDirectory()) {
      out.push(
        ...loadCRDs(
          ...fs
            .readdirSync(f)
            .filter((n) => /\.ya?ml$/.test(n))
            .sort()
            .map((n) => path.join(f, n)),
        ),
      );
      continue;
    }
    for (const doc of parseAllDocuments(fs.readFileSync(f, 'utf8'))) {
      if (doc.errors.length) throw new Error(`${f}: ${doc.errors.map((e) => e.message).join('; ')}`);
      const obj = doc.toJS() as CRD | null;
      if (obj && obj.kind === 'CustomResourceDefinition') out.push(obj);
    }
  }
  return out;
}

/**
 * Raw JSON request to the API server of `kc`'s current context. Used for CRDs because the typed
 * client's serializer drops wire-format keys such as `x-kubernetes-preserve-unknown-fields`
 * from plain objects.
 */
export async function kubeRequest(kc: k8s.KubeConfig, method: string, apiPath: string, body?: unknown): Promise<{ status: number; body: string }> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeRequest: kubeconfig has no current cluster');
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const headers: Record<string, string> = { accept: 'application/json' };
  for (const [k, v] of Object.entries(opts.headers ?? {})) if (typeof v === 'string') headers[k] = v;
  if (body !== undefined) headers['content-type'] = 'application/json';
  return httpRequest(method, `${cluster.server}${apiPath}`, {
    ca: opts.ca as string | Buffer | undefined,
    cert: opts.cert as string | Buffer | undefined,
    key: opts.key as string | Buffer | undefined,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    timeoutMs: 15_000,
  });
}

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/**
 * Creates (or replaces) CRDs and waits until each is Established and its resource is served.
 * `crds`: YAML file paths / directories, and/or CRD objects in wire form (as parsed from YAML/JSON).
 */
export async function installCRDs(kc: k8s.KubeConfig, crds: string | CRD | Array<string | CRD>, timeoutMs = 30_000): Promise<CRD[]> {
  const list = (Array.isArray(crds) ? crds : [crds]).flatMap((c) => (typeof c === 'string' ? loadCRDs(c) : [c]));
  if (list.length === 0) throw new Error('installCRDs: no CustomResourceDefinition found in the input');
  for (const crd of list) {
    const name = crd.metadata?.name;
    if (!name) throw new Error('installCRDs: a CRD has no metadata.name');
    const body = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', ...crd };
    let r = await kubeRequest(kc, 'POST', CRD_PATH, body);
    if (r.status === 409) {
      const existing = JSON.parse((await kubeRequest(kc, 'GET', `${CRD_PATH}/${name}`)).body) as CRD;
      r = await kubeRequest(kc, 'PUT', `${CRD_PATH}/${name}`, { ...body, metadata: { ...crd.metadata, resourceVersion: existing.metadata?.resourceVersion } });
    }
    if (r.status >= 300) throw new Error(`installCRDs: ${name}: HTTP ${r.status}: ${r.body}`);
  }
  for (const crd of list) {
    const name = crd.metadata!.name!;
    await waitFor(
      async () => {
        const r = await kubeRequest(kc, 'GET', `${CRD_PATH}/${name}`);
        const got = JSON.parse(r.body) as CRD;
        return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
      },
      { timeoutMs, description: `CRD ${name} to be Established` },
    );
    // Established can precede the resource being served by the handler; list once to be sure.
    const version = crd.spec.versions.find((v) => v.served)?.name ?? crd.spec.versions[0]!.name;
    await waitFor(async () => (await kubeRequest(kc, 'GET', `/apis/${crd.spec.group}/${version}/${crd.spec.names.plural}`)).status === 200, {
      timeoutMs,
      description: `resource ${crd.spec.names.plural}.${crd.spec.group}/${version} to be served`,
    });
  }
  return list;
}

/** Path of the test CRDs for the VictoriaMetrics operator kinds (VMCluster, VMAuth, VMUser, VMAgent). */
export const VM_OPERATOR_CRDS = path.resolve(__dirname, '..', '..', 'fixtures', 'crds', 'vm-operator-crds.yaml');

/** A KubeConfig whose API server answers nothing (port 1): for a worker that must start but runs no activity. */
export function unreachableKubeConfig(): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'none', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
    users: [{ name: 'none' }],
    contexts: [{ name: 'none', cluster: 'none', user: 'none' }],
    currentContext: 'none',
  });
  return kc;
}
