// kubectl vmdc import --chart-values: a victoria-metrics-distributed 0.44.0 release's values as a
// VMDistributedCluster referencing what the chart renders. The names are checked against the
// chart's template expressions and against `helm template` of the chart itself (vendored under
// test/fixtures/vmdistributed/chart-0.44.0; helm from the tools cache); what is not mapped is
// noted; the plugin's exit codes.
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { validateSpec } from '../../api/validate';
import { EXIT } from '../../cli/exit-codes';
import { importChartValues, type ChartImportOptions } from '../../cli/import/chart-values';
import { parseManifests } from '../../cli/import/manifests';
import { KUBE_VERSION_ARGS } from '../infra/harness/chart-identities';
import { toolPath } from '../infra/harness/tools';

const REPO = path.resolve(__dirname, '../..');
const FIXTURES = path.join(REPO, 'test/fixtures/vmdistributed');
/** The chart as vendored for the tests (README.md of that folder): its own values.yaml are the defaults. */
const CHART_DIR = path.join(FIXTURES, 'chart-0.44.0');
const DEFAULTS = 'chart-0.44.0/values.yaml';
const TWO_ZONES = 'chart-values-two-zones.yaml';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
const plain = (v: unknown): Any => JSON.parse(JSON.stringify(v));
const values = (name: string): Any => parseManifests(readFileSync(path.join(FIXTURES, name), 'utf8'))[0];
const OPTS: ChartImportOptions = { release: 'metrics-prod', namespace: 'monitoring', clusterVersion: 'v1.150.0-cluster' };

function converted(input: unknown, opts: Partial<ChartImportOptions> = {}): { manifest: Any; notes: string[] } {
  const r = importChartValues(input as Any, { ...OPTS, ...opts });
  if (!r.ok) throw new Error(`not converted: ${JSON.stringify(r.problems)}`);
  return { manifest: plain(r.manifest), notes: r.notes.map((n) => `${n.path}: ${n.why}`) };
}

function problems(input: unknown, opts: Partial<ChartImportOptions> = {}): string[] {
  const r = importChartValues(input as Any, { ...OPTS, ...opts });
  return r.ok ? [] : r.problems.map((p) => `${p.path}: ${p.why}`);
}

/** The names the converter references: kind -> sorted names. */
function referenced(m: Any): { VMCluster: string[]; VMAuth: string[]; VMAgent: string[] } {
  return { VMCluster: m.spec.zones.map((z: Any) => z.vmcluster.name).sort(), VMAuth: [m.spec.vmauth.name], VMAgent: [m.spec.vmagent.name] };
}

describe("the chart's default values", () => {
  it('reference the objects the templates name: vmcluster-<zone>, vmagent-<zone> (the first zone), vmauth-global-read-<fullname>', () => {
    const { manifest } = converted(values(DEFAULTS));
    expect(validateSpec(manifest.spec).success).toBe(true);
    // vm.fullname: release + "-" + nameOverride ("vm-distributed"), the release not containing it.
    expect(manifest.metadata).toEqual({ name: 'metrics-prod-vm-distributed', namespace: 'monitoring' });
    expect(referenced(manifest)).toEqual({
      VMCluster: ['vmcluster-zone-eu-1', 'vmcluster-zone-us-1'],
      VMAuth: ['vmauth-global-read-metrics-prod-vm-distributed'],
      VMAgent: ['vmagent-zone-eu-1'],
    });
    expect(manifest.spec.zones.map((z: Any) => z.name)).toEqual(['zone-eu-1', 'zone-us-1']);
    // Reference mode: no overlay on the VMClusters, the clusterVersion given.
    expect(manifest.spec.zones.every((z: Any) => Object.keys(z.vmcluster).join() === 'name')).toBe(true);
    expect(manifest.spec.clusterVersion).toBe('v1.150.0-cluster');
  });

  it("replaces the url_map read path by a VMCluster/vmselect route to every zone, and says the values' url_map must go", () => {
    const { manifest, notes } = converted(values(DEFAULTS));
    expect(manifest.spec.vmauth.overrideSpec.unauthorizedUserAccessSpec.targetRefs).toEqual([
      {
        crd: {
          kind: 'VMCluster/vmselect',
          name: '',
          namespace: '',
          objects: [
            { name: 'vmcluster-zone-eu-1', namespace: 'monitoring' },
            { name: 'vmcluster-zone-us-1', namespace: 'monitoring' },
          ],
        },
        paths: ['/select/.+', '/admin/tenants'],
        load_balancing_policy: 'first_available',
        retry_status_codes: [500, 502, 503],
      },
    ]);
    expect(notes.find((n) => n.startsWith('read.global.vmauth.spec.unauthorizedUserAccessSpec.url_map:'))).toContain('replace url_map');
  });

  it('maps every zone VMAgent (the first as spec.vmagent) and notes what is not mapped: the read proxies, the write VMAuth, the k8s-stack', () => {
    const { notes, manifest } = converted(values(DEFAULTS));
    expect(manifest.spec.vmagent).toEqual({ name: 'vmagent-zone-eu-1' });
    expect(manifest.spec.zones.map((z: { vmagent?: unknown }) => z.vmagent)).toEqual([undefined, { name: 'vmagent-zone-us-1' }]);
    const paths = notes.map((n) => n.split(': ')[0]);
    expect(paths.some((p) => p?.endsWith('.vmagent'))).toBe(false);
    expect(paths).toEqual(
      expect.arrayContaining([
        'availabilityZones[0].read.vmauth',
        'availabilityZones[1].read.vmauth',
        'write.global.vmauth',
        'victoria-metrics-k8s-stack',
        '(release)',
      ]),
    );
  });

  it('without a clusterVersion in the values, --cluster-version is required', () => {
    expect(problems(values(DEFAULTS), { clusterVersion: undefined })).toEqual([
      expect.stringMatching(/^common\.vmcluster\.spec\.clusterVersion: no zone declares/),
    ]);
  });

  it('a values file holding only changes is coalesced over the defaults, as Helm does', () => {
    const { manifest } = converted({ availabilityZones: [{ name: 'a' }, { name: 'b' }] });
    expect(referenced(manifest)).toEqual({
      VMCluster: ['vmcluster-a', 'vmcluster-b'],
      VMAuth: ['vmauth-global-read-metrics-prod-vm-distributed'],
      VMAgent: ['vmagent-a'],
    });
  });
});

describe('two customised zones', () => {
  it("names from the zones' templates, fullnameOverride, the only VMAgent; clusterVersion from the values", () => {
    const { manifest, notes } = converted(values(TWO_ZONES), { clusterVersion: undefined });
    expect(validateSpec(manifest.spec).success).toBe(true);
    expect(manifest.metadata.name).toBe('metrics');
    expect(manifest.spec.clusterVersion).toBe('v1.150.0-cluster');
    expect(referenced(manifest)).toEqual({ VMCluster: ['storage-b', 'vmc-eu-west-1a'], VMAuth: ['vmauth-global-read-metrics'], VMAgent: ['agent-eu-west-1a'] });
    expect(notes.some((n) => n.startsWith('availabilityZones[1].vmagent'))).toBe(false);
    expect(notes.some((n) => n.startsWith('availabilityZones[1].read.vmauth'))).toBe(false);
    expect(notes.some((n) => n.startsWith('availabilityZones[0].read.vmauth'))).toBe(true);
  });

  it('--cluster-version wins over the values and notes each zone it moves', () => {
    const { manifest, notes } = converted(values(TWO_ZONES), { clusterVersion: 'v1.151.0-cluster' });
    expect(manifest.spec.clusterVersion).toBe('v1.151.0-cluster');
    expect(notes).toContainEqual(
      expect.stringMatching(/^availabilityZones\[0\]\.vmcluster\.spec\.clusterVersion: v1\.150\.0-cluster: the first rollout moves zone eu-west-1a/),
    );
  });
});

describe('not convertible', () => {
  it('a template the import does not evaluate, a VMSingle zone, no global read VMAuth, no VMAgent, too few zones', () => {
    expect(problems({ availabilityZones: [{ name: 'a', vmcluster: { name: '{{ .Values.x }}' } }, { name: 'b' }] })).toEqual([
      expect.stringMatching(/^availabilityZones\[0\]\.vmcluster\.name: .*\{\{ \.Values\.x \}\} is a template this import does not evaluate/),
    ]);
    expect(problems({ availabilityZones: [{ name: 'a', vmcluster: { enabled: false }, vmsingle: { enabled: true } }, { name: 'b' }] })).toEqual([
      expect.stringMatching(/^availabilityZones\[0\]\.vmcluster\.enabled: false \(a VMSingle zone\)/),
    ]);
    expect(problems({ read: { global: { vmauth: { enabled: false } } } })).toEqual([expect.stringMatching(/^read\.global\.vmauth\.enabled: false/)]);
    expect(problems({ zoneTpl: { vmagent: { enabled: false } } })).toEqual([expect.stringMatching(/^zoneTpl\.vmagent\.enabled: no zone runs a VMAgent/)]);
    // validateSpec ran: one zone is not a VMDistributedCluster.
    expect(problems({ availabilityZones: [{ name: 'a' }] }).join('\n')).toMatch(/the converted spec is not valid/);
    expect(problems({}, { namespace: undefined })).toEqual([expect.stringMatching(/^\(release\): no namespace/)]);
  });

  it('__proto__ in the values is a key like any other (no prototype touched)', () => {
    const input = parseManifests('__proto__: {polluted: true}\navailabilityZones: [{name: a}, {name: b}]\n')[0];
    const { notes } = converted(input);
    expect(notes).toContainEqual(expect.stringMatching(/^__proto__: not a value of the victoria-metrics-distributed chart/));
    expect(({} as Any).polluted).toBeUndefined();
  });
});

describe('names equal what helm template renders (the chart vendored under test/fixtures/vmdistributed/chart-0.44.0)', () => {
  function rendered(release: string, file: string): { VMCluster: string[]; VMAuth: string[]; VMAgent: string[] } {
    const out = execFileSync(toolPath('helm'), ['template', release, CHART_DIR, '-n', 'monitoring', ...KUBE_VERSION_ARGS, '-f', path.join(FIXTURES, file)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const objs = parseAllDocuments(out)
      .map((d) => d.toJSON() as Any)
      .filter((o) => o);
    const names = (kind: string): string[] =>
      objs
        .filter((o) => o.kind === kind)
        .map((o) => o.metadata.name as string)
        .sort();
    return {
      VMCluster: names('VMCluster'),
      VMAuth: names('VMAuth').filter((n) => n.startsWith('vmauth-global-read-')),
      VMAgent: names('VMAgent'),
    };
  }

  it.each([
    [DEFAULTS, 'metrics-prod'],
    [DEFAULTS, 'vm-distributed-eu'],
    [TWO_ZONES, 'metrics-prod'],
  ])(
    '%s, release %s',
    (file, release) => {
      const helm = rendered(release, file);
      const { manifest } = converted(values(file), { release });
      const mine = referenced(manifest);
      expect(mine.VMCluster).toEqual(helm.VMCluster);
      expect(mine.VMAuth).toEqual(helm.VMAuth);
      // The one VMAgent mapped is one the chart renders; the others are noted.
      expect(helm.VMAgent).toContain(mine.VMAgent[0]);
    },
    60_000,
  );
});

describe('kubectl vmdc import --chart-values (the plugin)', () => {
  function vmdc(args: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = execFile('npx', ['--no-install', 'tsx', 'cli/main.ts', 'import', ...args], { cwd: REPO, timeout: 60_000 }, (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
        resolve({ code, stdout, stderr });
      });
      child.stdin!.end(stdin ?? '');
    });
  }
  const defaults = `test/fixtures/vmdistributed/${DEFAULTS}`;

  it('converts (0); a -f file without kind: is read as values too', async () => {
    const r = await vmdc(['--chart-values', defaults, '--release', 'metrics-prod', '-n', 'monitoring', '--cluster-version', 'v1.150.0-cluster']);
    expect(r.code).toBe(EXIT.ok);
    expect(parse(r.stdout)).toEqual(converted(values(DEFAULTS)).manifest);
    expect(r.stderr).toContain('note: read.global.vmauth.spec.unauthorizedUserAccessSpec.url_map:');
    const viaF = await vmdc(
      ['-f', '-', '--release', 'metrics-prod', '-n', 'monitoring', '--cluster-version', 'v1.150.0-cluster'],
      readFileSync(path.join(REPO, defaults), 'utf8'),
    );
    expect(viaF.code).toBe(EXIT.ok);
    expect(viaF.stdout).toBe(r.stdout);
  }, 120_000);

  it('fails with the problems (1), refuses bad arguments (3)', async () => {
    const noVersion = await vmdc(['--chart-values', defaults, '--release', 'r', '-n', 'monitoring']);
    expect(noVersion.code).toBe(EXIT.failed);
    expect(noVersion.stderr).toMatch(/^not convertible: common\.vmcluster\.spec\.clusterVersion/m);
    const noRelease = await vmdc(['--chart-values', defaults]);
    expect(noRelease.code).toBe(EXIT.error);
    expect(noRelease.stderr).toContain('--chart-values needs --release NAME');
    const adopt = await vmdc(['--chart-values', defaults, '--release', 'r', '--mode', 'adopt']);
    expect(adopt.code).toBe(EXIT.error);
    expect(adopt.stderr).toContain('imports by reference only');
    const fNoRelease = await vmdc(['-f', defaults]);
    expect(fNoRelease.code).toBe(EXIT.error);
    expect(fNoRelease.stderr).toContain('holds chart values (no kind:): pass --release NAME');
    const alias = await vmdc(['--chart-values', '-', '--release', 'r'], 'a: &x [1]\nb: *x\n');
    expect(alias.code).toBe(EXIT.error);
    expect(alias.stderr).toContain('YAML aliases (*x) are refused');
  }, 120_000);
});
