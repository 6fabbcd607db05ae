import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_STRATEGY } from '../../api/limits';
import { vmDistributedClusterStatusSchema } from '../../api/status-schema';
import { formatIssues, formatPath, validateSpec, type ValidationIssue } from '../../api/validate';
import type { NormalizedSpec } from '../../api/types';
import { API_VERSION, KIND } from '../../api/constants';
import { exampleObjects, markdownYamlBlocks, minimalRawSpec, ROOT, validRawSpec } from './api-helpers';

type Raw = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function mustValidate(spec: unknown): NormalizedSpec {
  const r = validateSpec(spec);
  if (!r.success) throw new Error(`expected valid, got: ${formatIssues(r.issues)}`);
  return r.spec;
}

function issuesOf(spec: unknown): ValidationIssue[] {
  const r = validateSpec(spec);
  if (r.success) throw new Error('expected the spec to be rejected');
  return r.issues;
}

describe('examples', () => {
  const examples = exampleObjects();

  it('has the expected example files', () => {
    const files = new Set(examples.map(([f]) => f));
    for (const f of ['vmdc-basic.yaml', 'vmdc-full-spec.yaml', 'vmdc-design.yaml', 'vmdc-minimal.yaml']) expect(files).toContain(f);
  });

  it.each(examples)('%s is a valid VMDistributedCluster', (_file, obj) => {
    expect(obj.apiVersion).toBe(API_VERSION);
    expect(obj.kind).toBe(KIND);
    mustValidate(obj.spec);
  });

  it('vmdc-basic has 3 zones, refs with overlays, VMUsers, and the strategy it declares', () => {
    const spec = mustValidate(examples.find(([f]) => f === 'vmdc-basic.yaml')?.[1].spec);
    expect(spec.zones.map((z) => z.name)).toEqual(['az-a', 'az-b', 'az-c']);
    expect(spec.zones.every((z) => z.vmcluster!.spec === undefined && z.vmuser !== undefined)).toBe(true);
    expect(spec.zones[0]?.vmcluster!.overrideSpec).toEqual({ vmstorage: { replicaCount: 3 } });
    expect(spec.vmauth).toEqual({ name: 'vm-global' });
    expect(spec.vmagent).toEqual({ name: 'vm-global' });
    expect(spec.strategy).toEqual({
      order: 'Declared',
      readDrainDelayMs: 45_000,
      queueDrainedForMs: 120_000,
      queueEmptyBytes: 65536,
      pollIntervalMs: 10_000,
      zoneTimeoutMs: 5_400_000,
      pauseBetweenZonesMs: 300_000,
    });
  });

  it('vmdc-full-spec creates every VMCluster, VMUser and the VMAgent from full specs', () => {
    const spec = mustValidate(examples.find(([f]) => f === 'vmdc-full-spec.yaml')?.[1].spec);
    for (const z of spec.zones) {
      expect(z.vmcluster!.spec).toBeDefined();
      expect(z.vmcluster!.overrideSpec).toBeUndefined();
      expect(z.vmuser?.spec).toBeDefined();
    }
    expect(spec.vmagent.spec).toBeDefined();
  });

  it('vmdc-design: empty remoteWriteURL means unset', () => {
    const spec = mustValidate(examples.find(([f]) => f === 'vmdc-design.yaml')?.[1].spec);
    expect(spec.zones.every((z) => !('remoteWriteURL' in z))).toBe(true);
    expect(spec.strategy).toEqual(DEFAULT_STRATEGY);
  });
});

describe('docs/cr-reference.md', () => {
  const blocks = markdownYamlBlocks(readFileSync(join(ROOT, 'docs', 'cr-reference.md'), 'utf8')) as Raw[];

  it('has YAML examples', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(3);
  });

  it('every VMDistributedCluster example validates, every status example matches the status schema', () => {
    let objects = 0;
    let statuses = 0;
    for (const block of blocks) {
      if (block.kind === KIND) {
        objects++;
        mustValidate(block.spec);
      }
      if (block.status !== undefined) {
        statuses++;
        const r = vmDistributedClusterStatusSchema.safeParse(block.status);
        expect(r.error).toBeUndefined();
      }
    }
    expect(objects).toBeGreaterThanOrEqual(2);
    expect(statuses).toBeGreaterThanOrEqual(1);
  });
});

test('the README example validates', () => {
  const blocks = (markdownYamlBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8')) as Raw[]).filter((b) => b?.kind === KIND);
  expect(blocks).toHaveLength(1);
  for (const block of blocks) mustValidate(block.spec);
});

describe('normalization', () => {
  it('applies every default', () => {
    const spec = mustValidate(minimalRawSpec());
    expect(spec).toEqual({
      paused: false,
      clusterVersion: 'v1',
      overrideSpec: {},
      zones: [
        { name: 'a', vmcluster: { name: 'a' } },
        { name: 'b', vmcluster: { name: 'b' } },
      ],
      vmauth: { name: 'x' },
      vmagent: { name: 'x' },
      retainOnDelete: false,
      forceConflicts: false,
      strategy: {
        order: 'Shuffle',
        readDrainDelayMs: 30_000,
        queueDrainedForMs: 60_000,
        queueEmptyBytes: 0,
        pollIntervalMs: 5_000,
        zoneTimeoutMs: 1_800_000,
        pauseBetweenZonesMs: 0,
      },
    });
    expect(DEFAULT_STRATEGY).toEqual(spec.strategy);
  });

  it('applies defaults to the strategy fields left out', () => {
    const raw = validRawSpec();
    raw.strategy = { zoneTimeout: '1h30m' };
    expect(mustValidate(raw).strategy).toEqual({ ...DEFAULT_STRATEGY, zoneTimeoutMs: 5_400_000 });
  });

  it.each([
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['500ms', 500],
    ['0s', 0],
    ['45s', 45_000],
    ['2m30s', 150_000],
    ['1h0m0s', 3_600_000],
    ['1.25s', 1_250],
  ])('parses pauseBetweenZones %s as %d ms', (text, expected) => {
    const raw = validRawSpec();
    (raw.strategy as Raw).pauseBetweenZones = text;
    expect(mustValidate(raw).strategy.pauseBetweenZonesMs).toBe(expected);
  });

  it('keeps exactly one form of each managed object, drops an empty remoteWriteURL, does not alias the input', () => {
    const raw = validRawSpec() as Raw;
    raw.zones[1].remoteWriteURL = '';
    const spec = mustValidate(raw);
    expect(spec.zones[0]?.vmcluster).toEqual({ name: 'vm-az-a', overrideSpec: { vmstorage: { replicaCount: 3 } } });
    expect(spec.zones[1]).toEqual({ name: 'az-b', vmcluster: { name: 'vm-az-b' }, vmuser: { name: 'reads-az-b' } });
    expect(spec.zones[2]?.vmcluster).toEqual({ name: 'vm-az-c', spec: { replicationFactor: 1, vmstorage: { replicaCount: 2 } } });
    expect(spec.zones[2]?.remoteWriteURL).toBe('http://lb.az-c.local:8480/insert/0/prometheus/api/v1/write');
    (spec.zones[0]?.vmcluster!.overrideSpec as Raw).vmstorage.replicaCount = 99;
    expect(raw.zones[0].vmcluster.overrideSpec.vmstorage.replicaCount).toBe(3);
  });

  it('keeps nulls in overlays (they delete fields in a JSON merge patch)', () => {
    const raw = validRawSpec() as Raw;
    raw.overrideSpec = { vmselect: { extraArgs: null } };
    expect(mustValidate(raw).overrideSpec).toEqual({ vmselect: { extraArgs: null } });
  });

  it('turns queueEmptyBytes -0 into 0: a NormalizedSpec survives JSON unchanged', () => {
    // -0 is an integer and not negative, so it is valid; JSON.parse('-0') and YAML `-0` both produce it.
    const raw = validRawSpec() as Raw;
    raw.strategy = JSON.parse('{"queueEmptyBytes": -0}');
    expect(Object.is(raw.strategy.queueEmptyBytes, -0)).toBe(true);
    const spec = mustValidate(raw);
    expect(Object.is(spec.strategy.queueEmptyBytes, 0)).toBe(true);
    expect(JSON.parse(JSON.stringify(spec))).toEqual(spec);
  });

  it('accepts 16 zones and paused: true', () => {
    const raw = validRawSpec() as Raw;
    raw.paused = true;
    raw.zones = Array.from({ length: 16 }, (_, i) => ({ name: `z${i}`, vmcluster: { name: `vm-${i}` } }));
    const spec = mustValidate(raw);
    expect(spec.paused).toBe(true);
    expect(spec.zones).toHaveLength(16);
  });
});

type Mutation = (s: Raw) => void;

/** [description, mutation of validRawSpec(), expected path, expected message fragment] */
const INVALID: [string, Mutation, string, string][] = [
  ['spec is not an object', () => {}, 'spec', 'must be an object'],
  ['clusterVersion missing', (s) => delete s.clusterVersion, 'spec.clusterVersion', 'is required'],
  ['clusterVersion empty', (s) => (s.clusterVersion = ''), 'spec.clusterVersion', 'must not be empty'],
  ['clusterVersion not a tag', (s) => (s.clusterVersion = 'v1.150.0 cluster'), 'spec.clusterVersion', 'must be an image tag'],
  ['clusterVersion a number', (s) => (s.clusterVersion = 1.15), 'spec.clusterVersion', 'must be a string (got number 1.15)'],
  ['paused a string', (s) => (s.paused = 'yes'), 'spec.paused', 'must be a boolean'],
  ['unknown top-level field', (s) => (s.zone = []), 'spec.zone', 'unknown field "zone"'],
  ['global overrideSpec an array', (s) => (s.overrideSpec = []), 'spec.overrideSpec', 'must be an object'],
  ['global overrideSpec a number', (s) => (s.overrideSpec = 7), 'spec.overrideSpec', 'must be an object'],
  ['zones missing', (s) => delete s.zones, 'spec.zones', 'is required'],
  ['zones not a list', (s) => (s.zones = { 'az-a': {} }), 'spec.zones', 'must be an array'],
  ['a single zone', (s) => s.zones.splice(1), 'spec.zones', 'at least 2 zones'],
  ['no zones', (s) => (s.zones = []), 'spec.zones', 'at least 2 zones'],
  [
    'too many zones',
    (s) => (s.zones = Array.from({ length: 17 }, (_, i) => ({ name: `z${i}`, vmcluster: { name: `vm-${i}` } }))),
    'spec.zones',
    'at most 16 zones',
  ],
  ['duplicate zone name', (s) => (s.zones[1].name = 'az-a'), 'spec.zones[1].name', 'zone name "az-a" is used twice (also spec.zones[0].name)'],
  ['zone name uppercase', (s) => (s.zones[0].name = 'AZ-A'), 'spec.zones[0].name', 'DNS-1123 label'],
  ['zone name with a dot', (s) => (s.zones[0].name = 'eu.az-a'), 'spec.zones[0].name', 'DNS-1123 label'],
  ['zone name too long', (s) => (s.zones[0].name = 'a'.repeat(64)), 'spec.zones[0].name', 'at most 63 characters'],
  ['zone name missing', (s) => delete s.zones[2].name, 'spec.zones[2].name', 'is required'],
  ['zone is a string', (s) => (s.zones[1] = 'az-b'), 'spec.zones[1]', 'must be an object'],
  ['unknown zone field', (s) => (s.zones[0].vmclusters = {}), 'spec.zones[0].vmclusters', 'unknown field "vmclusters"'],
  ['vmcluster missing', (s) => delete s.zones[1].vmcluster, 'spec.zones[1]', 'exactly one of vmcluster and vmsingle'],
  ['vmcluster and vmsingle both set', (s) => (s.zones[1].vmsingle = { name: 'single-b' }), 'spec.zones[1]', 'exactly one of vmcluster and vmsingle'],
  ['vmcluster name missing', (s) => delete s.zones[1].vmcluster.name, 'spec.zones[1].vmcluster.name', 'is required'],
  ['vmcluster name invalid', (s) => (s.zones[1].vmcluster.name = 'VM_AZ_B'), 'spec.zones[1].vmcluster.name', 'DNS-1123 subdomain'],
  ['vmcluster name too long', (s) => (s.zones[1].vmcluster.name = 'a'.repeat(254)), 'spec.zones[1].vmcluster.name', 'at most 253'],
  [
    'duplicate VMCluster name',
    (s) => (s.zones[2].vmcluster.name = 'vm-az-a'),
    'spec.zones[2].vmcluster.name',
    'VMCluster name "vm-az-a" is used twice (also spec.zones[0].vmcluster.name)',
  ],
  ['both overrideSpec and spec', (s) => (s.zones[2].vmcluster.overrideSpec = {}), 'spec.zones[2].vmcluster', 'not both'],
  ['zone overrideSpec a string', (s) => (s.zones[0].vmcluster.overrideSpec = 'replicas: 3'), 'spec.zones[0].vmcluster.overrideSpec', 'must be an object'],
  ['full spec an array', (s) => (s.zones[2].vmcluster.spec = [{ replicationFactor: 1 }]), 'spec.zones[2].vmcluster.spec', 'must be an object'],
  ['full spec containing a non-JSON value', (s) => (s.zones[2].vmcluster.spec.x = Number.NaN), 'spec.zones[2].vmcluster.spec.x', 'must be a JSON value'],
  ['overlay containing undefined', (s) => (s.overrideSpec.a = { b: [1, undefined] }), 'spec.overrideSpec.a.b[1]', 'must be a JSON value'],
  ['unknown managed-object field', (s) => (s.zones[0].vmcluster.namespace = 'x'), 'spec.zones[0].vmcluster.namespace', 'unknown field "namespace"'],
  ['duplicate VMUser name', (s) => (s.zones[1].vmuser.name = 'reads-az-a'), 'spec.zones[1].vmuser.name', 'VMUser name "reads-az-a" is used twice'],
  ['vmuser with both forms', (s) => (s.zones[0].vmuser = { name: 'u', spec: {}, overrideSpec: {} }), 'spec.zones[0].vmuser', 'not both'],
  ['vmuser a string', (s) => (s.zones[0].vmuser = 'reads-az-a'), 'spec.zones[0].vmuser', 'must be an object'],
  ['remoteWriteURL not a URL', (s) => (s.zones[2].remoteWriteURL = 'vminsert:8480'), 'spec.zones[2].remoteWriteURL', 'http:// or https:// URL'],
  ['remoteWriteURL ftp', (s) => (s.zones[2].remoteWriteURL = 'ftp://host/x'), 'spec.zones[2].remoteWriteURL', 'http:// or https:// URL'],
  ['remoteWriteURL no host', (s) => (s.zones[2].remoteWriteURL = 'http://'), 'spec.zones[2].remoteWriteURL', 'http:// or https:// URL'],
  [
    'duplicate remoteWriteURL',
    (s) => (s.zones[0].remoteWriteURL = s.zones[2].remoteWriteURL),
    'spec.zones[2].remoteWriteURL',
    'is used twice (also spec.zones[0].remoteWriteURL)',
  ],
  ['vmauth missing', (s) => delete s.vmauth, 'spec.vmauth', 'is required'],
  ['vmauth adopt without spec', (s) => (s.vmauth.adopt = true), 'spec.vmauth', 'adopt applies to the full-spec form only'],
  ['vmauth name empty', (s) => (s.vmauth.name = ''), 'spec.vmauth.name', 'must not be empty'],
  ['vmagent missing', (s) => delete s.vmagent, 'spec.vmagent', 'is required'],
  ['vmagent both forms', (s) => (s.vmagent = { name: 'a', overrideSpec: {}, spec: {} }), 'spec.vmagent', 'not both'],
  ['vmagent a list', (s) => (s.vmagent = [{ name: 'a' }]), 'spec.vmagent', 'must be an object'],
  ['strategy a string', (s) => (s.strategy = 'fast'), 'spec.strategy', 'must be an object'],
  ['unknown strategy field', (s) => (s.strategy.maxUnavailable = 1), 'spec.strategy.maxUnavailable', 'unknown field "maxUnavailable"'],
  ['order unknown', (s) => (s.strategy.order = 'Random'), 'spec.strategy.order', 'must be one of "Shuffle", "Declared"'],
  ['order lowercase', (s) => (s.strategy.order = 'shuffle'), 'spec.strategy.order', 'must be one of'],
  ['duration a bare number', (s) => (s.strategy.readDrainDelay = 30), 'spec.strategy.readDrainDelay', 'must be a duration like 30s'],
  ['duration a bare numeric string', (s) => (s.strategy.readDrainDelay = '30'), 'spec.strategy.readDrainDelay', 'must be a duration like 30s'],
  ['duration zero without unit', (s) => (s.strategy.pauseBetweenZones = '0'), 'spec.strategy.pauseBetweenZones', 'must be a duration like 30s'],
  ['duration negative', (s) => (s.strategy.readDrainDelay = '-5s'), 'spec.strategy.readDrainDelay', 'must be a duration like 30s'],
  ['duration in days', (s) => (s.strategy.zoneTimeout = '1d'), 'spec.strategy.zoneTimeout', 'must be a duration like 30s'],
  ['duration with spaces', (s) => (s.strategy.zoneTimeout = '1h 30m'), 'spec.strategy.zoneTimeout', 'must be a duration like 30s'],
  ['duration sub-millisecond', (s) => (s.strategy.readDrainDelay = '1.0005s'), 'spec.strategy.readDrainDelay', 'whole number of milliseconds'],
  ['duration too long a string', (s) => (s.strategy.readDrainDelay = '1s'.repeat(20)), 'spec.strategy.readDrainDelay', 'at most 32 characters'],
  ['readDrainDelay above 1h', (s) => (s.strategy.readDrainDelay = '2h'), 'spec.strategy.readDrainDelay', 'must be between 0s and 1h (got 2h)'],
  ['queueDrainedFor zero', (s) => (s.strategy.queueDrainedFor = '0s'), 'spec.strategy.queueDrainedFor', 'must be between 1s and 6h'],
  ['queueDrainedFor above 6h', (s) => (s.strategy.queueDrainedFor = '7h'), 'spec.strategy.queueDrainedFor', 'must be between 1s and 6h'],
  ['pollInterval zero', (s) => (s.strategy.pollInterval = '0s'), 'spec.strategy.pollInterval', 'must be between 100ms and 5m'],
  ['pollInterval 10ms', (s) => (s.strategy.pollInterval = '10ms'), 'spec.strategy.pollInterval', 'must be between 100ms and 5m'],
  ['zoneTimeout zero', (s) => (s.strategy.zoneTimeout = '0s'), 'spec.strategy.zoneTimeout', 'must be between 1s and 24h'],
  ['zoneTimeout above 24h', (s) => (s.strategy.zoneTimeout = '25h'), 'spec.strategy.zoneTimeout', 'must be between 1s and 24h'],
  ['pauseBetweenZones above 24h', (s) => (s.strategy.pauseBetweenZones = '168h'), 'spec.strategy.pauseBetweenZones', 'must be between 0s and 24h'],
  [
    'pollInterval longer than queueDrainedFor',
    (s) => (s.strategy.pollInterval = '1m'),
    'spec.strategy.pollInterval',
    'must not be longer than strategy.queueDrainedFor (1m > 30s)',
  ],
  [
    'pollInterval longer than the default queueDrainedFor',
    (s) => {
      s.strategy = { pollInterval: '2m' };
    },
    'spec.strategy.pollInterval',
    '(2m > 1m (default))',
  ],
  [
    'zoneTimeout not longer than queueDrainedFor',
    (s) => (s.strategy.zoneTimeout = '30s'),
    'spec.strategy.zoneTimeout',
    'must be longer than strategy.queueDrainedFor',
  ],
  [
    'queueDrainedFor longer than the default zoneTimeout',
    (s) => {
      s.strategy = { queueDrainedFor: '1h' };
    },
    'spec.strategy.zoneTimeout',
    'must be longer than strategy.queueDrainedFor (30m (default) <= 1h)',
  ],
  [
    'zoneTimeout not longer than readDrainDelay',
    (s) => {
      s.strategy = { readDrainDelay: '1h', queueDrainedFor: '1m', zoneTimeout: '1h' };
    },
    'spec.strategy.zoneTimeout',
    'must be longer than strategy.readDrainDelay',
  ],
  ['queueEmptyBytes negative', (s) => (s.strategy.queueEmptyBytes = -1), 'spec.strategy.queueEmptyBytes', 'must not be negative'],
  ['queueEmptyBytes fractional', (s) => (s.strategy.queueEmptyBytes = 1.5), 'spec.strategy.queueEmptyBytes', 'whole number of bytes'],
  ['queueEmptyBytes a quantity string', (s) => (s.strategy.queueEmptyBytes = '1Mi'), 'spec.strategy.queueEmptyBytes', 'must be a number'],
  ['queueEmptyBytes above 1 GiB', (s) => (s.strategy.queueEmptyBytes = 2 ** 31), 'spec.strategy.queueEmptyBytes', 'at most 1073741824'],
];

describe('rejects invalid specs', () => {
  it('has at least 30 distinct cases', () => {
    expect(new Set(INVALID.map(([d]) => d)).size).toBe(INVALID.length);
    expect(INVALID.length).toBeGreaterThanOrEqual(30);
  });

  it.each(INVALID)('%s', (description, mutate, path, fragment) => {
    let spec: unknown = validRawSpec();
    if (description === 'spec is not an object') spec = 'clusterVersion: v1';
    else mutate(spec as Raw);
    const issues = issuesOf(spec);
    const atPath = issues.filter((i) => i.path === path);
    if (!atPath.some((i) => i.message.includes(fragment))) {
      throw new Error(`expected an issue at ${path} containing ${JSON.stringify(fragment)}, got:\n${JSON.stringify(issues, null, 2)}`);
    }
    // Each case breaks one thing: no unrelated field is reported.
    for (const i of issues) expect(i.path.startsWith(path.replace(/\[\d+\]$/, '').replace(/\.[^.[]+$/, '')) || i.path === path).toBe(true);
    expect(formatIssues(issues)).toContain(path);
  });

  it('reports every problem at once', () => {
    const s = validRawSpec() as Raw;
    s.zones[1].name = 'az-a';
    s.zones[2].vmcluster.name = 'Bad Name';
    s.strategy.pollInterval = 'soon';
    delete s.vmauth;
    const paths = issuesOf(s).map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['spec.zones[1].name', 'spec.zones[2].vmcluster.name', 'spec.strategy.pollInterval', 'spec.vmauth']));
  });
});

describe('formatIssues', () => {
  it('formats one issue', () => {
    expect(formatIssues([{ path: 'spec.zones', message: 'must list at least 2 zones' }])).toBe('invalid spec: spec.zones: must list at least 2 zones');
  });

  it('formats several issues on one line and bounds the length', () => {
    const many = Array.from({ length: 40 }, (_, i) => ({ path: `spec.zones[${i}].name`, message: `bad\nname ${'x'.repeat(50)}` }));
    const line = formatIssues(many);
    expect(line).toMatch(/^invalid spec \(40 problems\): spec\.zones\[0\]\.name: bad name/);
    expect(line).not.toContain('\n');
    expect(line.length).toBeLessThanOrEqual(1000);
  });

  it('formats paths', () => {
    expect(formatPath(['zones', 1, 'vmcluster', 'name'])).toBe('spec.zones[1].vmcluster.name');
    expect(formatPath(['overrideSpec', 'a b', 0])).toBe('spec.overrideSpec["a b"][0]');
    expect(formatPath([])).toBe('spec');
  });
});

describe('durations are parsed once per validation', () => {
  // Counts the calls of api/duration's exported parseDuration that api/validate makes: a fresh copy
  // of api/validate is loaded against a pass-through jest.fn (behaviour unchanged), in this test only.
  function parseCounts(spec: unknown): Map<unknown, number> {
    const counts = new Map<unknown, number>();
    jest.isolateModules(() => {
      const duration = jest.requireActual<typeof import('../../api/duration')>('../../api/duration');
      const parse = jest.fn(duration.parseDuration);
      jest.doMock('../../api/duration', () => ({ ...duration, parseDuration: parse }));
      try {
        // requireActual: the real api/validate (never mocked), whose own imports see the mock above.
        const validate = jest.requireActual<typeof import('../../api/validate')>('../../api/validate');
        parse.mockClear(); // the built-in rules are parsed when the module loads
        validate.validateSpec(spec);
        for (const [arg] of parse.mock.calls) counts.set(arg, (counts.get(arg) ?? 0) + 1);
      } finally {
        jest.dontMock('../../api/duration');
      }
    });
    return counts;
  }

  const strategy = { readDrainDelay: '10s', queueDrainedFor: '30s', pollInterval: '1s', zoneTimeout: '10m', pauseBetweenZones: '2m' };

  it('a valid spec: each duration string once', () => {
    const counts = parseCounts({ ...validRawSpec(), strategy });
    expect(Object.fromEntries(counts)).toEqual({ '10s': 1, '30s': 1, '1s': 1, '10m': 1, '2m': 1 });
  });

  it('a spec rejected elsewhere and by a cross-field rule: each duration string once', () => {
    const raw = { ...validRawSpec(), zones: [], strategy: { ...strategy, pollInterval: '1m' } };
    expect(issuesOf(raw).map((i) => i.path)).toEqual(['spec.zones', 'spec.strategy.pollInterval']);
    expect(Object.fromEntries(parseCounts(raw))).toEqual({ '10s': 1, '30s': 1, '1m': 1, '10m': 1, '2m': 1 });
  });

  it('defaults: at most once each', () => {
    const counts = parseCounts(minimalRawSpec());
    for (const n of counts.values()) expect(n).toBe(1);
  });
});
