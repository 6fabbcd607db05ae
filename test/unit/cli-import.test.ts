// kubectl vmdc import: the VM operator's own VMDistributed examples (test/fixtures/vmdistributed/,
// copied from its repository) converted, each result valid and each field where the operator's
// behaviour puts it; what cannot be mapped reported; hostile files refused. The last block runs the
// plugin itself.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { validateSpec } from '../../api/validate';
import { EXIT } from '../../cli/exit-codes';
import { InputError, MAX_INPUT_BYTES, MAX_INPUT_DEPTH, parseManifests } from '../../cli/import/manifests';
import { importVMDistributed, pickVMDistributed, SINGLE_NOT_IMPORTED, type ImportOptions, type ImportResult } from '../../cli/import/vmdistributed';

const REPO = path.resolve(__dirname, '../..');
const FIXTURES = path.join(REPO, 'test/fixtures/vmdistributed');
const OPTS: ImportOptions = { mode: 'adopt', namespace: 'monitoring', clusterVersion: 'v1.150.0-cluster' };

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

function fixture(name: string): Any {
  const picked = pickVMDistributed(parseManifests(readFileSync(path.join(FIXTURES, name), 'utf8')));
  if ('problem' in picked) throw new Error(picked.problem.why);
  return picked.doc;
}

/** A plain copy (the converter's objects have null prototypes; toEqual compares them alike, this is for reading). */
const plain = (v: unknown): Any => JSON.parse(JSON.stringify(v));

function converted(input: unknown, opts: Partial<ImportOptions> = {}): { manifest: Any; notes: string[] } {
  const r = importVMDistributed(plain(input), { ...OPTS, ...opts });
  if (!r.ok) throw new Error(`not converted: ${JSON.stringify(r.problems)}`);
  return { manifest: plain(r.manifest), notes: r.notes.map((n) => `${n.path}: ${n.why}`) };
}

function problems(r: ImportResult): string[] {
  return r.ok ? [] : r.problems.map((p) => `${p.path}: ${p.why}`);
}

const CONVERTIBLE = [
  'operator_v1alpha1_vmdistributed.yaml',
  'vmdistributed-migrate-from-chart.yaml',
  'vmdistributed-overrides-common.yaml',
  'vmdistributed-overrides-version.yaml',
  'vmdistributed-overrides.yaml',
  'vmdistributed-paused.yaml',
  'vmdistributed-timeouts.yaml',
  'vmdistributed-unauthorized.yaml',
  'vmdistributed-vmagent.yaml',
  'vmdistributed-vmauth.yaml',
  'vmdistributed-with-auth.yaml',
];

/** The operator's own rendering of a zone's VMCluster spec: zoneCommon (%ZONE% replaced), then the zone's, merged. */
function operatorClusterSpec(cr: Any, zone: Any): Any {
  const common = JSON.parse(
    JSON.stringify(cr.spec.zoneCommon?.vmcluster?.spec ?? {})
      .split('%ZONE%')
      .join(zone.name),
  );
  const mergeDeep = (a: Any, b: Any): Any => {
    for (const [k, v] of Object.entries(b)) a[k] = v && typeof v === 'object' && !Array.isArray(v) && a[k] && typeof a[k] === 'object' ? mergeDeep(a[k], v) : v;
    return a;
  };
  const out = mergeDeep(common, zone.vmcluster?.spec ?? {});
  delete out.clusterVersion;
  return out;
}

function expectedClusterName(cr: Any, zone: Any): string {
  return zone.vmcluster?.name ?? (cr.spec.zoneCommon?.vmcluster?.name ?? '').split('%ZONE%').join(zone.name) ?? `${cr.metadata.name}-${zone.name}`;
}

describe("the operator's examples", () => {
  it.each(CONVERTIBLE)('%s: adopt mode maps every zone, the VMAuth and the VMAgent, and the result validates', (file) => {
    const cr = fixture(file);
    const { manifest } = converted(cr);
    expect(manifest).toMatchObject({
      apiVersion: 'vmrollout.io/v1alpha1',
      kind: 'VMDistributedCluster',
      metadata: { name: cr.metadata.name, namespace: 'monitoring' },
    });
    expect(validateSpec(manifest.spec).success).toBe(true);
    const spec = manifest.spec;
    expect(spec.zones.map((z: Any) => z.name)).toEqual(cr.spec.zones.map((z: Any) => z.name));
    cr.spec.zones.forEach((zone: Any, i: number) => {
      const name = expectedClusterName(cr, zone) || `${cr.metadata.name}-${zone.name}`;
      expect(spec.zones[i].vmcluster).toEqual({ name, spec: operatorClusterSpec(cr, zone), adopt: true });
    });
    expect(spec.vmauth.name).toBe(cr.spec.vmauth?.name ?? cr.metadata.name);
    expect(spec.vmauth.adopt).toBe(true);
    expect(spec.vmauth.spec.waitForConfigReload).toBe(true);
    // Adopting implies retainOnDelete, whatever spec.retain said.
    expect(spec.retainOnDelete).toBe(true);
    expect(spec.overrideSpec).toBeUndefined();
  });

  it.each(CONVERTIBLE)("%s: reference mode keeps zoneCommon as the global overrideSpec and each zone's spec as its overlay", (file) => {
    const cr = fixture(file);
    const { manifest } = converted(cr, { mode: 'reference' });
    expect(validateSpec(manifest.spec).success).toBe(true);
    const common = { ...(cr.spec.zoneCommon?.vmcluster?.spec ?? {}) };
    delete common.clusterVersion;
    expect(manifest.spec.overrideSpec).toEqual(Object.keys(common).length > 0 ? common : undefined);
    cr.spec.zones.forEach((zone: Any, i: number) => {
      const vmc = manifest.spec.zones[i].vmcluster;
      expect(vmc.adopt).toBeUndefined();
      expect(vmc.spec).toBeUndefined();
      expect(vmc.overrideSpec).toEqual(zone.vmcluster?.spec);
    });
    // References are never deleted with the VMDistributedCluster: retainOnDelete only mirrors spec.retain.
    expect(manifest.spec.retainOnDelete).toBeUndefined();
  });

  it('names objects as the operator does: explicit name, the zoneCommon template with %ZONE%, else <VMDistributed>-<zone>', () => {
    const fromTemplate = converted(fixture('vmdistributed-migrate-from-chart.yaml')).manifest.spec;
    expect(fromTemplate.zones.map((z: Any) => z.vmcluster.name)).toEqual(['vmcluster-zone-eu-1', 'vmcluster-zone-us-1']);
    expect(fromTemplate.vmagent.name).toBe('vmagent-zone-eu-1');
    const byDefault = converted(fixture('vmdistributed-vmauth.yaml')).manifest.spec;
    expect(byDefault.zones.map((z: Any) => z.vmcluster.name)).toEqual(['sample-vmauth-us-east-1', 'sample-vmauth-us-west-2', 'sample-vmauth-eu-west-1']);
    expect(byDefault.vmagent.name).toBe('sample-vmauth-us-east-1');
    const explicit = converted(fixture('operator_v1alpha1_vmdistributed.yaml')).manifest.spec;
    expect(explicit.zones.map((z: Any) => z.vmcluster.name)).toEqual(['vmcluster-us-east-1', 'vmcluster-us-west-2', 'vmcluster-eu-west-1']);
    expect(explicit.vmauth.name).toBe('vmauth-sample');
  });

  it('zone overrides win over zoneCommon (the operator merges the zone last)', () => {
    const spec = converted(fixture('vmdistributed-overrides.yaml')).manifest.spec;
    expect(spec.zones.map((z: Any) => z.vmcluster.spec.vmselect.replicaCount)).toEqual([3, 4, 2]);
    expect(spec.zones[0].vmcluster.spec.vmstorage).toEqual({ replicaCount: 1 });
    const ver = converted(fixture('vmdistributed-overrides-version.yaml')).manifest.spec;
    expect(ver.zones.map((z: Any) => z.vmcluster.spec.vmselect.image.tag)).toEqual(['v1.90.0', 'v1.90.0', 'v1.111.0']);
  });

  it('readyTimeout and updatePause become strategy.zoneTimeout and pauseBetweenZones', () => {
    expect(converted(fixture('vmdistributed-timeouts.yaml')).manifest.spec.strategy).toEqual({ zoneTimeout: '10m', pauseBetweenZones: '1m' });
    expect(converted(fixture('vmdistributed-overrides.yaml')).manifest.spec.strategy).toBeUndefined();
  });

  it("the VMAuth's {name: read} route becomes a VMCluster/vmselect route to every zone; {name: write} stays", () => {
    const { manifest, notes } = converted(fixture('vmdistributed-unauthorized.yaml'));
    expect(manifest.spec.vmauth.spec.unauthorizedUserAccessSpec.targetRefs).toEqual([
      {
        crd: {
          kind: 'VMCluster/vmselect',
          name: '',
          namespace: '',
          objects: [
            { name: 'vmcluster-us-east-1', namespace: 'monitoring' },
            { name: 'vmcluster-us-west-2', namespace: 'monitoring' },
          ],
        },
        paths: ['/flags', '/metrics', '/select/.+', '/admin/tenants'],
        load_balancing_policy: 'first_available',
        retry_status_codes: [500, 502, 503],
      },
      { name: 'write' },
    ]);
    expect(notes.join('\n')).toContain('{name: write} kept');
    // Without such a route nothing vmrollout can switch carries reads: said, not hidden.
    expect(converted(fixture('vmdistributed-with-auth.yaml')).notes.join('\n')).toMatch(/unauthorizedUserAccessSpec: no \{name: read\} route to convert/);
  });

  it("the clusterVersion the zones declare is the spec's; without one, or with several, --cluster-version is required", () => {
    const common = fixture('vmdistributed-overrides-common.yaml');
    const r = converted(common, { clusterVersion: undefined }).manifest.spec;
    expect(r.clusterVersion).toBe('v1.90.0');
    expect(r.zones[0].vmcluster.spec.clusterVersion).toBeUndefined();
    expect(problems(importVMDistributed(fixture('vmdistributed-overrides.yaml'), { ...OPTS, clusterVersion: undefined }))).toEqual([
      expect.stringMatching(/^spec\.zoneCommon\.vmcluster\.spec\.clusterVersion: no zone declares a clusterVersion: pass --cluster-version/),
    ]);
    const mixed = plain(common);
    mixed.spec.zones[2].vmcluster = { spec: { clusterVersion: 'v1.91.0' } };
    expect(problems(importVMDistributed(mixed, { ...OPTS, clusterVersion: undefined }))).toEqual([
      expect.stringContaining('the zones run different clusterVersions (v1.90.0: us-east-1, us-west-2; v1.91.0: eu-west-1)'),
    ]);
    const forced = converted(mixed, { clusterVersion: 'v1.150.0-cluster' });
    expect(forced.manifest.spec.clusterVersion).toBe('v1.150.0-cluster');
    expect(forced.notes.join('\n')).toContain('zones eu-west-1 declare clusterVersion v1.91.0: the first rollout moves them to v1.150.0-cluster');
  });
});

describe('what is not mapped is reported', () => {
  it('remoteWrite, paused, fields the type does not have; every zone VMAgent is mapped (the first as spec.vmagent, the others as zones[].vmagent)', () => {
    const c = converted(fixture('vmdistributed-overrides-common.yaml'));
    const notes = c.notes.join('\n');
    expect(notes).not.toContain('vmagent: VMAgent');
    expect(c.manifest.spec.vmagent.name).toBe('sample-override-common-us-east-1');
    expect(c.manifest.spec.zones.map((z: Any) => z.vmagent?.name)).toEqual([undefined, 'sample-override-common-us-west-2', 'sample-override-common-eu-west-1']);
    expect(notes).toContain('spec.zoneCommon.remoteWrite: not mapped');
    expect(converted(fixture('vmdistributed-paused.yaml')).notes.join('\n')).toContain('spec.paused: not carried over');
    // The stale sample's top-level vmagent (removed from the type before v0.70).
    expect(converted(fixture('operator_v1alpha1_vmdistributed.yaml')).notes.join('\n')).toContain(
      "spec.vmagent: not a field of the operator's VMDistributed (v0.74.1): not mapped",
    );
  });

  it('trafficMode write-only and maintenance are kept (maintenance noted: vminsert not scaled); read-only is refused', () => {
    const cr = plain(fixture('vmdistributed-overrides.yaml'));
    cr.spec.zones[0].trafficMode = 'write-only';
    cr.spec.zones[1].trafficMode = 'maintenance';
    cr.spec.zones[2].trafficMode = 'read-write';
    const c = converted(cr);
    expect(c.manifest.spec.zones.map((z: Any) => z.trafficMode)).toEqual(['write-only', 'maintenance', undefined]);
    expect(c.notes.filter((n) => n.includes('trafficMode'))).toEqual([
      expect.stringMatching(/^spec\.zones\[1\]\.trafficMode: kept: .* its vminsert is not scaled to 0/),
    ]);
    cr.spec.zones[1].trafficMode = 'read-only';
    expect(problems(importVMDistributed(cr, OPTS))).toEqual([expect.stringMatching(/^spec\.zones\[1\]\.trafficMode: read-only is not supported/)]);
  });

  it('VMSingle backends and a disabled VMAuth are not convertible', () => {
    const single = pickVMDistributed(parseManifests(readFileSync(path.join(FIXTURES, 'vmdistributed-vmsingle.yaml'), 'utf8')));
    if ('problem' in single) throw new Error('no VMDistributed');
    expect(single.notes).toEqual([{ path: '(document 1)', why: 'a VMSingle: not converted' }]);
    expect(problems(importVMDistributed(single.doc, OPTS))).toEqual([`spec.backendType: "VMSingle": ${SINGLE_NOT_IMPORTED}`]);
    const off = plain(fixture('vmdistributed-overrides.yaml'));
    off.spec.vmauth.enabled = false;
    expect(problems(importVMDistributed(off, OPTS))).toEqual([expect.stringMatching(/^spec\.vmauth\.enabled: false/)]);
  });

  it('a result the VMDistributedCluster schema refuses fails with its problems (validateSpec ran)', () => {
    const cr = plain(fixture('vmdistributed-timeouts.yaml'));
    cr.spec.zoneCommon.readyTimeout = '30s'; // not longer than the default queueDrainedFor (1m) nor readDrainDelay (30s)
    expect(problems(importVMDistributed(cr, OPTS))).toEqual([
      expect.stringMatching(/^spec\.strategy\.zoneTimeout: the converted spec is not valid: must be longer than strategy\.queueDrainedFor/),
      expect.stringMatching(/^spec\.strategy\.zoneTimeout: the converted spec is not valid: must be longer than strategy\.readDrainDelay/),
    ]);
    const one = plain(fixture('vmdistributed-overrides.yaml'));
    one.spec.zones = one.spec.zones.slice(0, 1);
    expect(problems(importVMDistributed(one, OPTS))).toEqual([
      expect.stringContaining('spec.zones: the converted spec is not valid: must list at least 2 zones'),
    ]);
  });
});

describe('retain, adopt and retainOnDelete', () => {
  const cr = (): Any => plain(fixture('vmdistributed-overrides.yaml'));
  it('adopt mode keeps retainOnDelete: true even when spec.retain is false; only the explicit option turns it off, and says what that means', () => {
    const input = cr();
    input.spec.retain = false;
    expect(converted(input).manifest.spec.retainOnDelete).toBe(true);
    const off = converted(input, { retainOnDelete: false });
    expect(off.manifest.spec.retainOnDelete).toBeUndefined();
    expect(off.notes.join('\n')).toContain('deleting the VMDistributedCluster deletes the adopted VMClusters and their volumes');
  });
  it('reference mode mirrors spec.retain', () => {
    const input = cr();
    input.spec.retain = true;
    expect(converted(input, { mode: 'reference' }).manifest.spec.retainOnDelete).toBe(true);
  });
});

describe("the operator's rendering", () => {
  it('%ZONE% is replaced in the zoneCommon spec; in reference mode such a spec is rendered into each zone instead of the global overlay', () => {
    const input = plain(fixture('vmdistributed-overrides.yaml'));
    input.spec.zoneCommon.vmcluster.spec.vmstorage.storage = { volumeClaimTemplate: { spec: { storageClassName: 'gp3-%ZONE%' } } };
    const adopt = converted(input).manifest.spec;
    expect(adopt.zones.map((z: Any) => z.vmcluster.spec.vmstorage.storage.volumeClaimTemplate.spec.storageClassName)).toEqual([
      'gp3-us-east-1',
      'gp3-us-west-2',
      'gp3-eu-west-1',
    ]);
    const ref = converted(input, { mode: 'reference' }).manifest.spec;
    expect(ref.overrideSpec).toBeUndefined();
    expect(ref.zones[1].vmcluster.overrideSpec.vmstorage.storage.volumeClaimTemplate.spec.storageClassName).toBe('gp3-us-west-2');
    expect(ref.zones[1].vmcluster.overrideSpec.vmselect.replicaCount).toBe(4);
  });

  it("spec.license goes where the operator defaults it: into zoneCommon's and the VMAuth's specs when they have none", () => {
    const input = plain(fixture('vmdistributed-overrides.yaml'));
    input.spec.license = { keyRef: { name: 'vm-license', key: 'key' } };
    input.spec.zones[0].vmcluster.spec.license = { key: 'zone-own' };
    const spec = converted(input).manifest.spec;
    // The operator defaults zoneCommon's license, then merges the zone's into it (maps merge).
    expect(spec.zones.map((z: Any) => z.vmcluster.spec.license)).toEqual([{ ...input.spec.license, key: 'zone-own' }, input.spec.license, input.spec.license]);
    input.spec.zoneCommon.vmcluster.spec.license = { key: 'common-own' };
    expect(converted(input).manifest.spec.zones[1].vmcluster.spec.license).toEqual({ key: 'common-own' });
    expect(spec.vmauth.spec.license).toEqual(input.spec.license);
    expect(spec.vmagent.overrideSpec.license).toEqual(input.spec.license);
  });
});

describe('hostile input', () => {
  const TEXT = readFileSync(path.join(FIXTURES, 'vmdistributed-overrides.yaml'), 'utf8');

  it('a file over the cap is refused; one just under it is read', () => {
    expect(() => parseManifests(TEXT + '#'.repeat(MAX_INPUT_BYTES))).toThrow(new InputError(`input is larger than ${MAX_INPUT_BYTES} bytes`));
    const padded = TEXT + '\n#' + 'x'.repeat(MAX_INPUT_BYTES - Buffer.byteLength(TEXT) - 3) + '\n';
    expect(Buffer.byteLength(padded)).toBe(MAX_INPUT_BYTES);
    expect(parseManifests(padded)).toHaveLength(1);
  });

  it('YAML aliases are refused (a billion laughs), anchors alone are not', () => {
    const laughs = 'a: &a ["lol","lol"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n';
    expect(() => parseManifests(laughs)).toThrow(/YAML aliases \(\*a\) are refused/);
    expect(parseManifests('a: &a [1]\n')).toEqual([{ a: [1] }]);
  });

  it('tags outside the core schema, duplicate keys and deep nesting are refused', () => {
    expect(() => parseManifests('a: !!binary aGVsbG8=\n')).toThrow(InputError);
    expect(() => parseManifests('a: !custom x\n')).toThrow(InputError);
    expect(() => parseManifests('a: 1\na: 2\n')).toThrow(InputError);
    expect(() => parseManifests(`${'['.repeat(MAX_INPUT_DEPTH + 1)}${']'.repeat(MAX_INPUT_DEPTH + 1)}`)).toThrow(/nested more than 100 levels deep/);
    expect(() => parseManifests(`${'['.repeat(MAX_INPUT_DEPTH - 1)}${']'.repeat(MAX_INPUT_DEPTH - 1)}`)).not.toThrow();
    expect(() => parseManifests(`a: ${'['.repeat(200_000)}`)).toThrow(InputError);
  });

  it('__proto__, constructor and prototype are keys like any other: carried into the spec, no prototype touched', () => {
    const text = TEXT.replace(
      '      spec:\n        vmstorage:',
      '      spec:\n        __proto__: { polluted: yes }\n        constructor: { prototype: { polluted: yes } }\n        vmstorage:',
    );
    expect(text).not.toBe(TEXT);
    const [doc] = parseManifests(text);
    const r = importVMDistributed(doc!, OPTS);
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    const zoneSpec = (r.manifest as Any).spec.zones[0].vmcluster.spec;
    expect(Object.getPrototypeOf(zoneSpec)).toBeNull();
    expect(Object.hasOwn(zoneSpec, '__proto__')).toBe(true);
    expect(zoneSpec.__proto__).toEqual({ polluted: 'yes' });
    expect(Object.hasOwn(zoneSpec, 'constructor')).toBe(true);
    expect(({} as Any).polluted).toBeUndefined();
    expect(JSON.stringify(r.manifest)).toContain('"__proto__":{"polluted":"yes"}');
  });

  it('a document that is not an object, not a VMDistributed, or not one alone is refused clearly', () => {
    expect(problems(importVMDistributed('a string', OPTS))).toEqual(['(document): must be a Kubernetes object']);
    expect(problems(importVMDistributed([1, 2], OPTS))).toEqual(['(document): must be a Kubernetes object']);
    expect(problems(importVMDistributed({ apiVersion: 'v1', kind: 'VMDistributed' }, OPTS))).toEqual([
      '(document): must be apiVersion operator.victoriametrics.com/v1alpha1, kind VMDistributed',
    ]);
    const bad = plain(fixture('vmdistributed-overrides.yaml'));
    bad.spec.zones = { a: 1 };
    expect(problems(importVMDistributed(bad, OPTS))).toEqual(['spec.zones: must be a list of zones']);
    bad.spec.zones = [{ name: 7 }, 'x'];
    expect(problems(importVMDistributed(bad, OPTS))).toEqual(['spec.zones[0].name: must be a string (got number)', 'spec.zones[1]: must be an object']);
    expect(pickVMDistributed([])).toEqual({ problem: { path: '(input)', why: 'holds no VMDistributed' } });
    const two = fixture('vmdistributed-overrides.yaml');
    expect(pickVMDistributed([two, two])).toEqual({ problem: { path: '(input)', why: 'holds 2 VMDistributed objects: import one at a time' } });
  });
});

describe('kubectl vmdc import (the plugin)', () => {
  function vmdc(args: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = execFile(
        'npx',
        ['--no-install', 'tsx', 'cli/main.ts', 'import', ...args],
        { cwd: REPO, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
        (err, stdout, stderr) => {
          const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
      child.stdin!.end(stdin ?? '');
    });
  }

  it('prints the VMDistributedCluster on stdout and the notes on stderr (0)', async () => {
    const r = await vmdc(['-f', 'test/fixtures/vmdistributed/vmdistributed-timeouts.yaml', '-n', 'monitoring', '--cluster-version', 'v1.150.0-cluster']);
    expect(r.code).toBe(EXIT.ok);
    const out = parse(r.stdout);
    expect(out).toEqual(plain(converted(fixture('vmdistributed-timeouts.yaml')).manifest));
    expect(validateSpec(out.spec).success).toBe(true);
    expect(r.stderr).toContain('note: spec.vmagent: the VMAgents (sample-custom-timeout-us-east-1, sample-custom-timeout-us-west-2');
    expect(r.stderr).not.toContain('VMDistributedCluster');
  }, 60_000);

  it('reads stdin with -f -, and fails with the problems when not convertible (1)', async () => {
    const text = readFileSync(path.join(FIXTURES, 'vmdistributed-overrides.yaml'), 'utf8');
    const r = await vmdc(['-f', '-', '-n', 'monitoring'], text);
    expect(r.code).toBe(EXIT.failed);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^not convertible: spec\.zoneCommon\.vmcluster\.spec\.clusterVersion: no zone declares a clusterVersion/m);
    const ok = await vmdc(['-f', '-', '-n', 'monitoring', '--cluster-version', 'v1.150.0-cluster', '--mode', 'reference'], text);
    expect(ok.code).toBe(EXIT.ok);
    expect(parse(ok.stdout).spec.overrideSpec).toEqual({ vmstorage: { replicaCount: 1 }, vmselect: { replicaCount: 1 }, vminsert: { replicaCount: 1 } });
  }, 60_000);

  it('refuses bad arguments and a hostile file (3)', async () => {
    const noFile = await vmdc([]);
    expect(noFile.code).toBe(EXIT.error);
    expect(noFile.stderr).toContain('-f FILE is required');
    const badMode = await vmdc(['-f', '-', '--mode', 'own']);
    expect(badMode.code).toBe(EXIT.error);
    const rodRef = await vmdc(['-f', '-', '--mode', 'reference', '--retain-on-delete', 'false']);
    expect(rodRef.stderr).toContain('--retain-on-delete applies to --mode adopt only');
    const alias = await vmdc(['-f', '-'], 'a: &x [1]\nb: *x\n');
    expect(alias.code).toBe(EXIT.error);
    expect(alias.stderr).toContain('error: stdin: document 1: YAML aliases (*x) are refused');
    const huge = await vmdc(['-f', '-'], 'x'.repeat(MAX_INPUT_BYTES + 10));
    expect(huge.code).toBe(EXIT.error);
    expect(huge.stderr).toContain(`error: stdin: input is larger than ${MAX_INPUT_BYTES} bytes`);
    const big = path.join(mkdtempSync(path.join(tmpdir(), 'vmdc-import-')), 'big.yaml');
    writeFileSync(big, `# ${'x'.repeat(MAX_INPUT_BYTES)}\n`);
    const bigFile = await vmdc(['-f', big]);
    expect(bigFile.code).toBe(EXIT.error);
    expect(bigFile.stderr).toContain(`error: ${big}: input is larger than ${MAX_INPUT_BYTES} bytes`);
    const missing = await vmdc(['-f', 'test/fixtures/vmdistributed/no-such-file.yaml']);
    expect(missing.code).toBe(EXIT.error);
    expect(missing.stderr).toContain('ENOENT');
  }, 120_000);
});
