// The generated CRD on a real kube-apiserver: accepted and Established (its CEL rules within the
// cost budget), serves the examples with the schema's defaults, and rejects on its own (OpenAPI
// schema + CEL) exactly what the zod schema rejects: the bad-spec table of test/fixtures/bad-specs.ts
// and generated near-valid URLs, durations and names get the same verdict from both.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import fc from 'fast-check';
import { parse } from 'yaml';
import { buildCrd, CRD_NAME, CRD_PATH } from '../../api/crd';
import { API_VERSION, GROUP, KIND, PLURAL, SHORT_NAME, VERSION } from '../../api/constants';
import { DURATION_RULES, type StrategyDurationField } from '../../api/limits';
import { formatIssues, validateSpec } from '../../api/validate';
import { parseManifests } from '../../cli/import/manifests';
import { importVMDistributed, pickVMDistributed } from '../../cli/import/vmdistributed';
import {
  BAD_SPECS,
  NAME_FIELDS,
  nearValidDuration,
  nearValidName,
  nearValidURL,
  nestedLists,
  nestedObjects,
  setPath,
  strategyWith,
  toJsonText,
  type BadSpec,
} from '../fixtures/bad-specs';
import { installCRDs, startKube, type KubeCluster } from '../infra/harness/kube';
import { httpRequest, type HttpGetResult } from '../infra/harness/processes';
import { REPO_ROOT } from '../infra/harness/tools';
import { assertProperty } from '../support/property';
import { minimalRawSpec, validRawSpec } from '../unit/api-helpers';

type Raw = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const NS = 'default';
const EXAMPLES = path.join(REPO_ROOT, 'examples');

function validSpec(): Raw {
  return {
    clusterVersion: 'v1.150.0-cluster',
    zones: [
      { name: 'az-a', vmcluster: { name: 'vm-az-a', overrideSpec: { vmstorage: { replicaCount: 3 } } }, vmuser: { name: 'reads-az-a' } },
      { name: 'az-b', vmcluster: { name: 'vm-az-b' }, vmuser: { name: 'reads-az-b' } },
      {
        name: 'az-c',
        vmcluster: { name: 'vm-az-c', spec: { replicationFactor: 1 } },
        remoteWriteURL: 'http://lb.az-c.local:8480/insert/0/prometheus/api/v1/write',
      },
    ],
    vmauth: { name: 'vm-global' },
    vmagent: { name: 'vm-global' },
    strategy: { readDrainDelay: '10s', queueDrainedFor: '30s', pollInterval: '1s', zoneTimeout: '10m' },
  };
}

/** [case, mutation, fragment expected in the API server's 422 message] */
const SERVER_REJECTS: [string, (s: Raw) => void, string | RegExp][] = [
  ['clusterVersion missing', (s) => delete s.clusterVersion, 'spec.clusterVersion: Required value'],
  ['clusterVersion not a tag', (s) => (s.clusterVersion = 'v1 cluster'), 'spec.clusterVersion'],
  ['a single zone', (s) => s.zones.splice(1), /spec\.zones: Invalid value: .*at least 2 items/],
  ['17 zones', (s) => (s.zones = Array.from({ length: 17 }, (_, i) => ({ name: `z${i}`, vmcluster: { name: `vm-${i}` } }))), 'spec.zones: Too many'],
  ['duplicate zone name', (s) => (s.zones[1].name = 'az-a'), /spec\.zones\[1\]: Duplicate value/],
  ['zone name uppercase', (s) => (s.zones[0].name = 'AZ-A'), 'spec.zones[0].name'],
  ['zone name too long', (s) => (s.zones[0].name = 'a'.repeat(64)), 'spec.zones[0].name: Too long'],
  ['vmcluster missing', (s) => delete s.zones[1].vmcluster, 'spec.zones[1]: Invalid value: "object": exactly one of vmcluster and vmsingle must be set'],
  ['vmcluster name invalid', (s) => (s.zones[1].vmcluster.name = 'VM_B'), 'spec.zones[1].vmcluster.name'],
  ['duplicate VMCluster name', (s) => (s.zones[2].vmcluster.name = 'vm-az-a'), 'every zone must have its own VMCluster'],
  ['duplicate VMUser name', (s) => (s.zones[1].vmuser.name = 'reads-az-a'), 'vmuser.name must be unique across zones'],
  ['duplicate remoteWriteURL', (s) => (s.zones[0].remoteWriteURL = s.zones[2].remoteWriteURL), 'remoteWriteURL must be unique across zones'],
  ['vmcluster with overrideSpec and spec', (s) => (s.zones[2].vmcluster.overrideSpec = {}), /spec\.zones\[2\]\.vmcluster: Invalid value: .*not both/],
  ['vmagent with overrideSpec and spec', (s) => (s.vmagent = { name: 'a', overrideSpec: {}, spec: {} }), /spec\.vmagent: Invalid value: .*not both/],
  ['overlay an array', (s) => (s.zones[0].vmcluster.overrideSpec = [1]), 'spec.zones[0].vmcluster.overrideSpec'],
  ['global overlay a string', (s) => (s.overrideSpec = 'x'), 'spec.overrideSpec'],
  ['remoteWriteURL ftp', (s) => (s.zones[2].remoteWriteURL = 'ftp://host/x'), 'spec.zones[2].remoteWriteURL'],
  ['remoteWriteURL no scheme', (s) => (s.zones[2].remoteWriteURL = 'vminsert:8480'), 'spec.zones[2].remoteWriteURL'],
  ['vmauth missing', (s) => delete s.vmauth, 'spec.vmauth: Required value'],
  ['vmagent missing', (s) => delete s.vmagent, 'spec.vmagent: Required value'],
  ['order unknown', (s) => (s.strategy.order = 'Random'), 'spec.strategy.order: Unsupported value'],
  ['duration bare number string', (s) => (s.strategy.readDrainDelay = '30'), 'spec.strategy.readDrainDelay'],
  ['duration a number', (s) => (s.strategy.readDrainDelay = 30), 'spec.strategy.readDrainDelay'],
  ['duration negative', (s) => (s.strategy.readDrainDelay = '-1s'), 'spec.strategy.readDrainDelay'],
  ['duration in days', (s) => (s.strategy.zoneTimeout = '1d'), 'spec.strategy.zoneTimeout'],
  ['readDrainDelay above 1h', (s) => (s.strategy.readDrainDelay = '2h'), 'must be between 0s and 1h'],
  ['queueDrainedFor zero', (s) => (s.strategy.queueDrainedFor = '0s'), 'must be between 1s and 6h'],
  ['pollInterval 10ms', (s) => (s.strategy.pollInterval = '10ms'), 'must be between 100ms and 5m'],
  ['zoneTimeout above 24h', (s) => (s.strategy.zoneTimeout = '25h'), 'must be between 1s and 24h'],
  ['pauseBetweenZones a week', (s) => (s.strategy.pauseBetweenZones = '168h'), 'must be between 0s and 24h'],
  [
    'pollInterval longer than queueDrainedFor',
    (s) => (s.strategy.pollInterval = '1m'),
    /spec\.strategy\.pollInterval: .*must not be longer than queueDrainedFor/,
  ],
  [
    'queueDrainedFor longer than the default zoneTimeout',
    (s) => (s.strategy = { queueDrainedFor: '1h' }),
    /spec\.strategy\.zoneTimeout: .*longer than queueDrainedFor/,
  ],
  [
    'zoneTimeout not longer than readDrainDelay',
    (s) => (s.strategy = { readDrainDelay: '1h', zoneTimeout: '1h' }),
    /spec\.strategy\.zoneTimeout: .*longer than readDrainDelay/,
  ],
  ['queueEmptyBytes negative', (s) => (s.strategy.queueEmptyBytes = -1), 'spec.strategy.queueEmptyBytes'],
  ['queueEmptyBytes above 1 GiB', (s) => (s.strategy.queueEmptyBytes = 2 ** 31), 'spec.strategy.queueEmptyBytes'],
  ['queueEmptyBytes a quantity', (s) => (s.strategy.queueEmptyBytes = '1Mi'), 'spec.strategy.queueEmptyBytes'],
  ['paused a string', (s) => (s.paused = 'yes'), 'spec.paused'],
];

describe('VMDistributedCluster CRD on a real kube-apiserver', () => {
  let kube: KubeCluster;
  let tls: { ca: Buffer; cert: Buffer; key: Buffer };
  let objects: k8s.CustomObjectsApi;
  let counter = 0;

  beforeAll(async () => {
    kube = await startKube();
    tls = { ca: fs.readFileSync(kube.certs.caCert), cert: fs.readFileSync(kube.certs.adminCert), key: fs.readFileSync(kube.certs.adminKey) };
    objects = kube.kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  }, 180_000);

  afterAll(async () => {
    await kube?.stop();
  });

  function request(method: string, p: string, body?: unknown, contentType = 'application/json'): Promise<HttpGetResult> {
    return httpRequest(method, `${kube.server}${p}`, {
      ...tls,
      headers: { 'Content-Type': contentType, Accept: 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      timeoutMs: 15_000,
    });
  }

  const collection = `/apis/${GROUP}/${VERSION}/namespaces/${NS}/${PLURAL}`;

  function create(spec: unknown, query = ''): Promise<HttpGetResult> {
    return request('POST', `${collection}${query}`, { apiVersion: API_VERSION, kind: KIND, metadata: { name: `obj-${++counter}` }, spec });
  }

  /** A create that stores nothing (dryRun), with any nesting (the body is written without recursion). */
  function tryCreate(spec: unknown, fieldValidation: 'Strict' | 'Warn' = 'Strict', dryRun = true): Promise<HttpGetResult> {
    const body = toJsonText({ apiVersion: API_VERSION, kind: KIND, metadata: { name: `obj-${++counter}` }, spec });
    return httpRequest('POST', `${kube.server}${collection}?fieldValidation=${fieldValidation}${dryRun ? '&dryRun=All' : ''}`, {
      ...tls,
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body,
      timeoutMs: 30_000,
    });
  }

  interface StatusBody {
    message?: string;
    details?: { causes?: { field?: string; message?: string }[] };
  }
  const statusOf = (res: HttpGetResult): StatusBody => {
    try {
      return JSON.parse(res.body) as StatusBody;
    } catch {
      return { message: res.body };
    }
  };

  it('the generated CRD is accepted and Established, exactly as generated', async () => {
    // The committed file, not buildCrd(): that is what the chart installs.
    const crds = await installCRDs(kube.kubeConfig, path.join(REPO_ROOT, CRD_PATH), 30_000);
    expect(crds.map((c) => c.metadata?.name)).toEqual([CRD_NAME]);
    const raw = await request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`);
    const served = JSON.parse(raw.body) as Raw;
    // Nothing was lost on the way (defaults, enums, x-kubernetes-* extensions, CEL rules).
    expect(served.spec.versions).toEqual(buildCrd().spec.versions);
    expect(served.spec.names).toEqual(buildCrd().spec.names);
    const got = await kube.kubeConfig.makeApiClient(k8s.ApiextensionsV1Api).readCustomResourceDefinition({ name: CRD_NAME });
    const conditions = Object.fromEntries((got.status?.conditions ?? []).map((c) => [c.type, c.status]));
    expect(conditions).toMatchObject({ Established: 'True', NamesAccepted: 'True' });
    expect(conditions.NonStructuralSchema).toBeUndefined();
    expect(got.status?.acceptedNames?.shortNames).toEqual([SHORT_NAME]);
  }, 60_000);

  it.each(
    fs
      .readdirSync(EXAMPLES)
      .filter((f) => f.endsWith('.yaml'))
      .sort(),
  )('accepts examples/%s', async (file) => {
    const obj = parse(fs.readFileSync(path.join(EXAMPLES, file), 'utf8')) as Raw;
    const res = await request('POST', `${collection}?fieldValidation=Strict`, { ...obj, metadata: { name: `ex-${file.replace(/\.yaml$/, '')}` } });
    expect([res.status, res.body]).toEqual([201, expect.any(String)]);
    // What the server stored (with its defaults) normalizes exactly like the file does.
    const stored = JSON.parse(res.body) as Raw;
    const fromServer = validateSpec(stored.spec);
    const fromFile = validateSpec(obj.spec);
    expect(fromServer).toEqual(fromFile);
    expect(fromServer.success).toBe(true);
  });

  // kubectl vmdc import round-trips the VM operator's own VMDistributed examples into objects the
  // API server takes as they are (test/fixtures/vmdistributed/; the VMSingle one is not convertible).
  const VMD_FIXTURES = path.join(REPO_ROOT, 'test/fixtures/vmdistributed');
  it.each(
    fs
      .readdirSync(VMD_FIXTURES)
      // The operator's examples (a chart's values files live beside them: import --chart-values).
      .filter((f) => f.endsWith('.yaml') && f !== 'vmdistributed-vmsingle.yaml')
      .filter((f) =>
        parseManifests(fs.readFileSync(path.join(VMD_FIXTURES, f), 'utf8')).some(
          (d) => typeof d === 'object' && d !== null && !Array.isArray(d) && d.kind === 'VMDistributed',
        ),
      )
      .sort()
      .flatMap((f) => [`${f} adopt`, `${f} reference`]),
  )('accepts kubectl vmdc import of %s', async (name) => {
    const [file, mode] = name.split(' ') as [string, 'adopt' | 'reference'];
    const picked = pickVMDistributed(parseManifests(fs.readFileSync(path.join(VMD_FIXTURES, file), 'utf8')));
    if ('problem' in picked) throw new Error(picked.problem.why);
    const r = importVMDistributed(picked.doc, { mode, namespace: NS, clusterVersion: 'v1.150.0-cluster' });
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    const obj = JSON.parse(JSON.stringify(r.manifest)) as Raw;
    obj.metadata.name = `import-${++counter}`;
    const res = await request('POST', `${collection}?fieldValidation=Strict`, obj);
    expect([res.status, res.body]).toEqual([201, expect.any(String)]);
    const stored = JSON.parse(res.body) as Raw;
    expect(validateSpec(stored.spec)).toEqual(validateSpec(obj.spec));
    expect(stored.spec.zones).toEqual(obj.spec.zones);
    expect(stored.spec.vmauth).toEqual(obj.spec.vmauth);
  });

  it('applies the schema defaults on the server', async () => {
    const res = await create(minimalRawSpec({ strategy: { zoneTimeout: '1h30m' } }));
    expect(res.status).toBe(201);
    const spec = (JSON.parse(res.body) as Raw).spec as Raw;
    expect(spec.paused).toBe(false);
    expect(spec.overrideSpec).toEqual({});
    expect(spec.strategy).toEqual({
      order: 'Shuffle',
      readDrainDelay: '30s',
      queueDrainedFor: '1m',
      queueEmptyBytes: 0,
      pollInterval: '5s',
      zoneTimeout: '1h30m',
      pauseBetweenZones: '0s',
      gates: [],
      queueHeadroom: 'Enforce',
      expectedDowntime: '0s',
      dataCompleteness: 'Enforce',
      dryRun: false,
    });
    // A canary written as {}: its bake and analysis defaulted by the server as by validateSpec.
    const withCanary = await create(minimalRawSpec({ strategy: { canary: {} } }));
    const canary = ((JSON.parse(withCanary.body) as Raw).spec as Raw).strategy.canary;
    expect(canary).toEqual({
      bake: '5m',
      analysis: { interval: '30s', tenant: '0', queries: [], recentQueries: 5, maxLatencyRatio: 2, tolerance: 0.01, maxIngestionLag: '30s' },
    });
    const local = validateSpec(minimalRawSpec({ strategy: { canary } }));
    expect(local.success && local.spec.strategy.canary).toEqual({
      bakeMs: 300_000,
      analysis: { intervalMs: 30_000, tenant: '0', queries: [], recentQueries: 5, maxLatencyRatio: 2, tolerance: 0.01, maxIngestionLagMs: 30_000 },
    });
    const noStrategy = await create({ ...(JSON.parse(res.body) as Raw).spec, strategy: undefined });
    expect((JSON.parse(noStrategy.body) as Raw).spec.strategy).toMatchObject({ order: 'Shuffle', zoneTimeout: '30m', pollInterval: '5s' });
  });

  it.each(SERVER_REJECTS)('rejects: %s', async (_name, mutate, fragment) => {
    const spec = validSpec();
    mutate(spec);
    // The zod schema rejects it too (the two must agree).
    const local = validateSpec(spec);
    expect(local.success).toBe(false);
    const res = await create(spec);
    const message = res.status === 422 ? ((JSON.parse(res.body) as { message?: string }).message ?? '') : res.body;
    if (res.status !== 422 || !(typeof fragment === 'string' ? message.includes(fragment) : fragment.test(message))) {
      throw new Error(
        `expected 422 containing ${String(fragment)}, got ${res.status}: ${message}\n(local: ${local.success ? '' : formatIssues(local.issues)})`,
      );
    }
  });

  it.each(BAD_SPECS.map((c) => [c.name, c] as const))('rejects bad spec: %s', async (_name, c: BadSpec) => {
    const spec = validRawSpec();
    c.mutate(spec);
    const local = validateSpec(spec);
    expect(local.success).toBe(false);
    const res = await tryCreate(spec, c.server.fieldValidation);
    const body = statusOf(res);
    const message = body.message ?? '';
    const causes = body.details?.causes ?? [];
    const want = c.server;
    const ok =
      res.status === want.status &&
      (want.path === undefined
        ? message.includes(want.message)
        : message.includes(want.path) &&
          (causes.length > 0 ? causes.some((x) => x.field === want.path && (x.message ?? '').includes(want.message)) : message.includes(want.message)));
    if (!ok) {
      throw new Error(
        `expected ${want.status} naming ${want.path ?? '(no field)'} with ${JSON.stringify(want.message)}, got ${res.status}: ${message.slice(0, 1500)}\n` +
          `causes: ${JSON.stringify(causes).slice(0, 1500)}\n(local: ${local.success ? '' : formatIssues(local.issues)})`,
      );
    }
    if (c.secret !== undefined) expect(res.body).not.toContain(c.secret);
  });

  describe('parity with validateSpec on generated near-valid values', () => {
    /**
     * The values of a property, collected through assertProperty (its seeds, FC_SEED replays one) and
     * then sent to the API server: a property cannot wait for a request.
     */
    function generated<T>(arb: fc.Arbitrary<T>, numRuns: number): T[] {
      const out: T[] = [];
      assertProperty(
        fc.property(arb, (v) => {
          out.push(v);
        }),
        { numRuns },
      );
      return out;
    }

    async function disagreements(specs: { label: string; spec: Record<string, unknown> }[]): Promise<string[]> {
      const bad: string[] = [];
      for (const { label, spec } of specs) {
        const local = validateSpec(spec);
        const res = await tryCreate(spec);
        if (res.status !== 201 && res.status !== 422 && res.status !== 400) throw new Error(`${label}: HTTP ${res.status} ${res.body.slice(0, 500)}`);
        if (local.success !== (res.status === 201)) {
          bad.push(
            `${label}: validateSpec ${local.success ? 'accepts' : `refuses (${formatIssues(local.issues)})`}, ` +
              `the API server ${res.status === 201 ? 'accepts' : `refuses (${(statusOf(res).message ?? '').slice(0, 400)})`}`,
          );
        }
      }
      return bad;
    }

    it('remoteWriteURLs', async () => {
      const urls = generated(nearValidURL, 40);
      const specs = urls.map((url) => {
        const spec = validRawSpec();
        setPath(spec, ['zones', 2, 'remoteWriteURL'], url);
        return { label: `remoteWriteURL ${JSON.stringify(url)}`, spec };
      });
      // The duplicates of the issue: both equal once normalized.
      for (const [a, b] of [
        ['http://LB.example.com:80/x', 'http://lb.example.com/x'],
        ['https://lb.example.com:443', 'https://lb.example.com/'],
        ['http://u:p@lb:8480/x', 'http://u:p@LB:8480/x'],
        ['http://lb/x', 'http://lb/x/'],
        ['http://u:p@lb/x', 'http://lb/x'],
      ]) {
        const spec = validRawSpec();
        setPath(spec, ['zones', 0, 'remoteWriteURL'], a);
        setPath(spec, ['zones', 2, 'remoteWriteURL'], b);
        specs.push({ label: `remoteWriteURLs ${a} and ${b}`, spec });
      }
      expect(await disagreements(specs)).toEqual([]);
    }, 180_000);

    it('durations, in every strategy field (with the cross-field rules)', async () => {
      const fields = Object.keys(DURATION_RULES) as StrategyDurationField[];
      const values = generated(fc.tuple(fc.constantFrom(...fields), nearValidDuration), 40);
      const specs = values.map(([field, d]) => ({ label: `${field} ${JSON.stringify(d)}`, spec: { ...validRawSpec(), strategy: strategyWith(field, d) } }));
      for (const d of ['100.5ms', '1m0.0000001s', '0.00002750000000h', '0.0000275h', '1.0000000001s', '24h0.001s', '1h0.0005s']) {
        specs.push({ label: `pauseBetweenZones ${d}`, spec: { ...validRawSpec(), strategy: { pauseBetweenZones: d } } });
      }
      expect(await disagreements(specs)).toEqual([]);
    }, 180_000);

    it('names and derived-name limits', async () => {
      const values = generated(fc.tuple(fc.constantFrom(...NAME_FIELDS), nearValidName), 40);
      const specs = values.map(([field, name]) => {
        const spec = validRawSpec();
        setPath(spec, field, name);
        return { label: `${field.join('.')} ${JSON.stringify(name)}`, spec };
      });
      expect(await disagreements(specs)).toEqual([]);
    }, 180_000);
  });

  describe('JSON nesting: vmrollout accepts up to 1000 levels from the root, the API server up to 10000, nothing deeper', () => {
    const deepOverlay = (depth: number) => ({ ...validRawSpec(), overrideSpec: nestedObjects(depth) });
    const deepZoneSpec = (depth: number) => {
      const spec = validRawSpec() as Raw;
      spec.zones[2].vmcluster.spec = { list: nestedLists(depth) };
      return spec;
    };

    it.each([
      ['objects in spec.overrideSpec (level 3)', deepOverlay, 998, 9998],
      ['lists in spec.zones[2].vmcluster.spec.list (level 7)', deepZoneSpec, 994, 9994],
    ] as const)(
      '%s',
      async (_what, build, ours, server) => {
        for (const [depth, schemaOk, serverOk] of [
          [ours, true, true],
          [ours + 1, false, true],
          [server, false, true],
          [server + 1, false, false],
        ] as const) {
          expect([depth, validateSpec(build(depth)).success]).toEqual([depth, schemaOk]);
          const res = await tryCreate(build(depth));
          expect([depth, res.status]).toEqual([depth, serverOk ? 201 : 400]);
        }
      },
      120_000,
    );

    it('an object stored at the limit can be listed, watched and deleted (free-form values are atomic for managedFields)', async () => {
      // Without x-kubernetes-map-type: atomic, managedFields mirror the overlay 4 levels deeper than
      // the object: the API server stores such an object (answering 500) and then fails every LIST
      // and watch of the resource until it is deleted from etcd.
      const res = await tryCreate(deepOverlay(9998), 'Strict', false);
      expect(res.status).toBe(201);
      const stored = JSON.parse(res.body) as Raw; // V8's JSON.parse does not recurse
      const name = stored.metadata.name as string;
      // The overlay is one field for server-side apply: no entries below it.
      expect(stored.metadata.managedFields[0].fieldsV1['f:spec']['f:overrideSpec']).toEqual({});
      const list = await request('GET', collection);
      expect(list.status).toBe(200);
      const del = await request('DELETE', `${collection}/${name}`);
      expect(del.status).toBe(200);
      expect((await request('GET', collection)).status).toBe(200);
    }, 120_000);
  });

  it('the valid base spec is accepted (the rejections above are not false positives)', async () => {
    expect(validateSpec(validSpec()).success).toBe(true);
    expect((await create(validSpec())).status).toBe(201);
  });

  it('rejects unknown fields with fieldValidation=Strict and prunes them otherwise', async () => {
    const spec = { ...validSpec(), zone: [] };
    expect(validateSpec(spec).success).toBe(false);
    const strict = await create(spec, '?fieldValidation=Strict');
    expect(strict.status).toBe(400);
    expect((JSON.parse(strict.body) as { message: string }).message).toContain('unknown field "spec.zone"');
    const lax = await create(spec, '?fieldValidation=Ignore');
    expect(lax.status).toBe(201);
    expect((JSON.parse(lax.body) as Raw).spec.zone).toBeUndefined();
  });

  it('keeps free-form specs and overlays, nulls included', async () => {
    const spec = validSpec();
    spec.overrideSpec = { vmselect: { extraArgs: null, replicaCount: 2 }, list: [1, { a: 'b' }] };
    const res = await create(spec);
    expect(res.status).toBe(201);
    const stored = (JSON.parse(res.body) as Raw).spec as Raw;
    expect(stored.overrideSpec).toEqual(spec.overrideSpec);
    expect(stored.zones[2].vmcluster.spec).toEqual({ replicationFactor: 1 });
  });

  it('status subresource: status is written separately, and the printer columns show it', async () => {
    const name = 'with-status';
    const created = await request('POST', collection, { apiVersion: API_VERSION, kind: KIND, metadata: { name }, spec: validSpec() });
    expect(created.status).toBe(201);
    const status = {
      observedGeneration: 1,
      phase: 'Progressing',
      currentZone: 'az-b',
      zonesOutOfRotation: ['az-b'],
      workflow: { id: `vmdc/${NS}/${name}/g1-abcdef12`, runId: 'r1' },
      zones: [
        { name: 'az-a', phase: 'Done', vmclusterGeneration: 3, startedAt: '2025-01-01T10:00:00Z', finishedAt: '2025-01-01T10:05:00Z' },
        { name: 'az-b', phase: 'WaitingForQueue', message: '412 KiB pending' },
      ],
      conditions: [
        { type: 'Valid', status: 'True', reason: 'Valid', message: 'spec is valid', lastTransitionTime: '2025-01-01T10:00:00Z', observedGeneration: 1 },
      ],
    };
    await objects.patchNamespacedCustomObjectStatus(
      { group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, name, body: { status } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    // A status written through the main resource is ignored.
    const specPatch = await request('PATCH', `${collection}/${name}`, { status: { phase: 'Failed' } }, 'application/merge-patch+json');
    expect(specPatch.status).toBe(200);
    const got = (await objects.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NS, plural: PLURAL, name })) as Raw;
    expect(got.status).toEqual(status);

    // An invalid status is rejected by the schema.
    const badStatus = await request('PATCH', `${collection}/${name}/status`, { status: { phase: 'Exploded' } }, 'application/merge-patch+json');
    expect(badStatus.status).toBe(422);

    const table = await httpRequest('GET', `${kube.server}${collection}/${name}`, {
      ...tls,
      headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    });
    const t = JSON.parse(table.body) as { columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] };
    expect(t.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Phase', 'Zone', 'Version', 'Age']);
    expect(t.rows[0]?.cells.slice(0, 4)).toEqual([name, 'Progressing', 'az-b', 'v1.150.0-cluster']);
  });
});
