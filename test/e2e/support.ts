/**
 * Shared by the e2e tests and `make demo` (scripts/demo.ts): loading the demo manifests
 * (examples/demo/*.yaml, with ${VAR} placeholders), applying them, watching the
 * VMDistributedCluster, and the continuous writer/reader that prove "no failed and no stale read".
 */
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { GROUP, PLURAL, VERSION, VM_GROUP, VM_KINDS, VM_VERSION } from '../../api/constants';
import type { VMDistributedClusterStatus } from '../../api/types';
import { httpRequest, waitFor } from '../harness/processes';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const DEMO_MANIFESTS_DIR = path.join(REPO_ROOT, 'examples', 'demo');

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; generation?: number; uid?: string; annotations?: Record<string, string>; [k: string]: unknown };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/** Replaces ${NAME} placeholders; an unknown placeholder is an error. */
export function substitute(text: string, vars: Record<string, string>, where = 'template'): string {
  return text.replace(/\$\{([A-Z0-9_]+)\}/g, (_, name: string) => {
    const v = vars[name];
    if (v === undefined) throw new Error(`${where}: no value for placeholder \${${name}}`);
    return v;
  });
}

/** Every object of every *.yaml in `dir` (sorted by file name), placeholders filled in. */
export function loadManifests(dir: string, vars: Record<string, string>): KubeObject[] {
  const out: KubeObject[] = [];
  for (const f of fs.readdirSync(dir).filter((n) => /\.ya?ml$/.test(n)).sort()) {
    const file = path.join(dir, f);
    for (const doc of parseAllDocuments(substitute(fs.readFileSync(file, 'utf8'), vars, file))) {
      if (doc.errors.length) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
      const obj = doc.toJS() as KubeObject | null;
      if (obj) out.push(obj);
    }
  }
  return out;
}

/** The URL-ish placeholder name of a VMCluster: vm-az-a → VM_AZ_A_WRITE_URL. */
export const writeUrlVar = (vmcluster: string) => `${vmcluster.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_WRITE_URL`;

const PLURALS: Record<string, { group: string; version: string; plural: string }> = {
  VMDistributedCluster: { group: GROUP, version: VERSION, plural: PLURAL },
  ...Object.fromEntries(Object.entries(VM_KINDS).map(([k, p]) => [k, { group: VM_GROUP, version: VM_VERSION, plural: p }])),
};

export function resourceOf(kind: string): { group: string; version: string; plural: string } {
  const r = PLURALS[kind];
  if (!r) throw new Error(`unknown kind ${kind}`);
  return r;
}

/** Creates custom objects (in order). */
export async function createObjects(kc: k8s.KubeConfig, objects: KubeObject[]): Promise<void> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  for (const o of objects) {
    const r = resourceOf(o.kind);
    await api.createNamespacedCustomObject({ ...r, namespace: o.metadata.namespace ?? 'default', body: o });
  }
}

export async function getObject(kc: k8s.KubeConfig, kind: string, namespace: string, name: string): Promise<KubeObject> {
  return (await kc.makeApiClient(k8s.CustomObjectsApi).getNamespacedCustomObject({ ...resourceOf(kind), namespace, name })) as KubeObject;
}

/** JSON merge patch of an object (spec or metadata). */
export async function mergePatch(kc: k8s.KubeConfig, kind: string, namespace: string, name: string, body: object): Promise<KubeObject> {
  return (await kc
    .makeApiClient(k8s.CustomObjectsApi)
    .patchNamespacedCustomObject({ ...resourceOf(kind), namespace, name, body }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch))) as KubeObject;
}

export interface VmdcSnapshot {
  at: number;
  generation: number;
  status: VMDistributedClusterStatus;
}

/**
 * Polls a VMDistributedCluster (every `intervalMs`) and calls `onChange` whenever its status
 * changed. Polling, not a watch: every observed state is kept in `history`.
 */
export function watchVmdc(
  kc: k8s.KubeConfig,
  namespace: string,
  name: string,
  onChange: (snap: VmdcSnapshot, prev: VmdcSnapshot | undefined) => void = () => {},
  intervalMs = 100,
): { history: VmdcSnapshot[]; latest(): VmdcSnapshot | undefined; stop(): void } {
  const history: VmdcSnapshot[] = [];
  let last = '';
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    try {
      const o = await getObject(kc, 'VMDistributedCluster', namespace, name);
      const status = (o.status ?? {}) as VMDistributedClusterStatus;
      const key = JSON.stringify({ g: o.metadata.generation, s: { ...status, conditions: undefined } });
      if (key !== last) {
        last = key;
        const snap = { at: Date.now(), generation: o.metadata.generation ?? 0, status };
        const prev = history[history.length - 1];
        history.push(snap);
        onChange(snap, prev);
      }
    } catch {
      /* not there yet, or a transient error */
    }
    if (!stopped) timer = setTimeout(() => void tick(), intervalMs);
  };
  void tick();
  return {
    history,
    latest: () => history[history.length - 1],
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}

// ---------------------------------------------------------------------------------------
// writer / reader

export interface ReadRecord {
  at: number;
  /** route used: 'unauthorized' or the bearer token */
  route: string;
  status: number;
  /** age of the newest sample seen, ms (undefined when the read failed or was empty) */
  ageMs?: number;
  error?: string;
}

/**
 * A read is stale when its newest sample is older than this. A healthy read through vmagent and a
 * zone is at most ~5-6 s old on this stack (vmagent flush 200 ms + the zone's ~2 s pending-rows
 * flush, under load; measured p99 ~5 s, max 5.9 s at load average 11 on 2 cores): 9 s leaves
 * margin. Zones are kept down longer than this during an upgrade (e2e 15 s, demo 12 s), so a zone
 * serving reads before its backlog is delivered and searchable shows up as stale.
 */
export const STALE_AFTER_MS = 9_000;

export interface TrafficOptions {
  /** vmagent base URL (writes go to /api/v1/import/prometheus) */
  vmagentURL: string;
  /** vmauth base URL (reads) */
  vmauthURL: string;
  series?: string;
  writeIntervalMs?: number;
  readIntervalMs?: number;
  /** A read is stale when its newest sample is older than this. Default STALE_AFTER_MS. */
  staleAfterMs?: number;
  /** Extra routes: bearer tokens of VMUsers to read through as well. */
  bearerTokens?: string[];
}

/**
 * Writes one fresh sample every writeIntervalMs to vmagent (value = write time in ms, so a
 * reader knows how fresh what it got is), and reads the series through vmauth every
 * readIntervalMs on every route. A read fails when the answer is not 200 or has no sample;
 * it is stale when the newest sample is older than staleAfterMs.
 */
export function startTraffic(opts: TrafficOptions) {
  const series = opts.series ?? 'vmrollout_e2e_heartbeat';
  const staleAfterMs = opts.staleAfterMs ?? STALE_AFTER_MS;
  const reads: ReadRecord[] = [];
  const writeErrors: string[] = [];
  let writes = 0;
  let stopped = false;
  const loops: Promise<void>[] = [];
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  loops.push(
    (async () => {
      while (!stopped) {
        const now = Date.now();
        try {
          const r = await httpRequest('POST', `${opts.vmagentURL}/api/v1/import/prometheus`, {
            body: `${series}{source="e2e"} ${now} ${now}\n`,
            headers: { 'content-type': 'text/plain' },
            // vmagent answers an import at once (it only queues); 5 s covers a CPU-starved test machine.
            timeoutMs: 5000,
          });
          if (r.status >= 300) writeErrors.push(`${now}: HTTP ${r.status}: ${r.body.slice(0, 200)}`);
          else writes++;
        } catch (err) {
          writeErrors.push(`${now}: ${String(err)}`);
        }
        await sleep(opts.writeIntervalMs ?? 200);
      }
    })(),
  );

  const routes: Array<{ name: string; headers?: Record<string, string> }> = [
    { name: 'unauthorized' },
    ...(opts.bearerTokens ?? []).map((t) => ({ name: t, headers: { authorization: `Bearer ${t}` } })),
  ];
  for (const route of routes) {
    loops.push(
      (async () => {
        while (!stopped) {
          const at = Date.now();
          try {
            const r = await httpRequest('GET', `${opts.vmauthURL}/api/v1/query?query=${encodeURIComponent(`max(${series})`)}`, {
              headers: route.headers,
              timeoutMs: 3000,
            });
            if (r.status !== 200) reads.push({ at, route: route.name, status: r.status, error: r.body.slice(0, 300) });
            else {
              const body = JSON.parse(r.body) as { data?: { result?: Array<{ value: [number, string] }> } };
              const v = body.data?.result?.[0]?.value?.[1];
              if (v === undefined) reads.push({ at, route: route.name, status: 200, error: 'empty result' });
              else reads.push({ at, route: route.name, status: 200, ageMs: at - Number(v) });
            }
          } catch (err) {
            reads.push({ at, route: route.name, status: 0, error: String(err) });
          }
          await sleep(opts.readIntervalMs ?? 100);
        }
      })(),
    );
  }

  return {
    reads,
    writeErrors,
    get writes() {
      return writes;
    },
    failed: (from = 0, to = Infinity) => reads.filter((r) => r.at >= from && r.at <= to && r.error !== undefined),
    stale: (from = 0, to = Infinity) => reads.filter((r) => r.at >= from && r.at <= to && r.ageMs !== undefined && r.ageMs > staleAfterMs),
    /** Resolves once the last `n` reads of every route were fresh and successful. */
    async waitHealthy(timeoutMs = 30_000, n = 5): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const ok = routes.every((rt) => {
          const mine = reads.filter((r) => r.route === rt.name).slice(-n);
          return mine.length === n && mine.every((r) => r.error === undefined && (r.ageMs ?? Infinity) <= staleAfterMs);
        });
        if (ok) return;
        if (Date.now() > deadline) {
          throw new Error(`reads through vmauth not healthy after ${timeoutMs} ms; last reads: ${JSON.stringify(reads.slice(-6))}; write errors: ${writeErrors.slice(-3).join(' | ')}`);
        }
        await sleep(200);
      }
    },
    async stop(): Promise<void> {
      stopped = true;
      await Promise.all(loops);
    },
  };
}
export type Traffic = ReturnType<typeof startTraffic>;

/** A raw JSON request to the API server with the kubeconfig's credentials (no client-side serializer involved). */
export async function kubeRaw(kc: k8s.KubeConfig, method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: string }> {
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('kubeconfig has no current cluster');
  return new Promise((resolve, reject) => {
    const req = https.request(new URL(urlPath, server), { ...opts, method, agent: false, headers: { ...(opts.headers ?? {}), 'content-type': 'application/json' }, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${urlPath}: timeout`)));
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/**
 * Installs the CRDs of YAML files/directories and waits until each is Established and served.
 * Sent as raw JSON: through the typed client the `x-kubernetes-*` keys of the schema are lost
 * (the serializer only knows the camelCase names, and under jest even those come out wrong), so
 * `x-kubernetes-preserve-unknown-fields` is dropped and the API server prunes spec and status.
 */
export async function installCrdFiles(kc: k8s.KubeConfig, ...files: string[]): Promise<void> {
  const crds: Array<{ kind?: string; metadata: { name: string }; spec: { group: string; names: { plural: string }; versions: Array<{ name: string; served?: boolean }> } }> = [];
  for (const f of files) {
    const list = fs.statSync(f).isDirectory() ? fs.readdirSync(f).filter((n) => /\.ya?ml$/.test(n)).sort().map((n) => path.join(f, n)) : [f];
    for (const file of list) {
      for (const doc of parseAllDocuments(fs.readFileSync(file, 'utf8'))) {
        const o = doc.toJS() as (typeof crds)[number] | null;
        if (o?.kind === 'CustomResourceDefinition') crds.push(o);
      }
    }
  }
  const base = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  for (const crd of crds) {
    const r = await kubeRaw(kc, 'POST', base, crd);
    if (r.status === 409) {
      const cur = JSON.parse((await kubeRaw(kc, 'GET', `${base}/${crd.metadata.name}`)).body) as { metadata: { resourceVersion: string } };
      const u = await kubeRaw(kc, 'PUT', `${base}/${crd.metadata.name}`, { ...crd, metadata: { ...crd.metadata, resourceVersion: cur.metadata.resourceVersion } });
      if (u.status >= 300) throw new Error(`replace CRD ${crd.metadata.name}: HTTP ${u.status}: ${u.body}`);
    } else if (r.status >= 300) throw new Error(`create CRD ${crd.metadata.name}: HTTP ${r.status}: ${r.body}`);
  }
  for (const crd of crds) {
    await waitFor(
      async () => {
        const r = await kubeRaw(kc, 'GET', `${base}/${crd.metadata.name}`);
        const conds = (JSON.parse(r.body) as { status?: { conditions?: Array<{ type: string; status: string }> } }).status?.conditions ?? [];
        if (!conds.some((c) => c.type === 'Established' && c.status === 'True')) return false;
        const v = crd.spec.versions.find((x) => x.served)?.name ?? crd.spec.versions[0]!.name;
        return (await kubeRaw(kc, 'GET', `/apis/${crd.spec.group}/${v}/${crd.spec.names.plural}`)).status === 200;
      },
      { timeoutMs: 30_000, description: `CRD ${crd.metadata.name} to be Established and served` },
    );
  }
}

// ---------------------------------------------------------------------------------------
// per-zone probe (evidence for the e2e assertions and for diagnosing stale reads)

export interface ZoneProbeRecord {
  at: number;
  zone: string;
  /** age of the zone's newest sample of the series, read straight from the zone (not through vmauth) */
  ageMs?: number;
  /** vmagent_remotewrite_pending_data_bytes of this zone's remote write (vmagent's own /metrics) */
  pendingBytes?: number;
  error?: string;
}

/**
 * Every `intervalMs`, reads each zone directly (newest sample of `series`) and vmagent's pending
 * bytes per remote write (`url="<i+1>:secret-url"`, i = index in `zones`). Loopback only.
 */
export function startZoneProbe(opts: { zones: Record<string, string>; vmagentURL: string; series: string; intervalMs?: number }) {
  const records: ZoneProbeRecord[] = [];
  let stopped = false;
  const names = Object.keys(opts.zones);
  const loop = (async () => {
    while (!stopped) {
      const at = Date.now();
      let metrics = '';
      try {
        metrics = (await httpRequest('GET', `${opts.vmagentURL}/metrics`, { timeoutMs: 2000 })).body;
      } catch {
        /* pending unknown this round */
      }
      await Promise.all(
        names.map(async (zone, i) => {
          const rec: ZoneProbeRecord = { at, zone };
          const m = new RegExp(`^vmagent_remotewrite_pending_data_bytes\\{[^}]*url="${i + 1}:[^"]*"[^}]*\\} (\\S+)$`, 'm').exec(metrics);
          if (m) rec.pendingBytes = Number(m[1]);
          try {
            const r = await httpRequest('GET', `${opts.zones[zone]}/api/v1/query?query=${encodeURIComponent(`max(${opts.series})`)}`, { timeoutMs: 1000 });
            const v = (JSON.parse(r.body) as { data?: { result?: Array<{ value: [number, string] }> } }).data?.result?.[0]?.value?.[1];
            if (v !== undefined) rec.ageMs = at - Number(v);
            else rec.error = 'empty result';
          } catch (err) {
            rec.error = String(err);
          }
          records.push(rec);
        }),
      );
      await new Promise((r) => setTimeout(r, opts.intervalMs ?? 500));
    }
  })();
  return {
    records,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
export type ZoneProbe = ReturnType<typeof startZoneProbe>;
