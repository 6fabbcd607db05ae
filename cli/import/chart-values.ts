// `kubectl vmdc import --chart-values`: the values of a release of the victoria-metrics-distributed
// Helm chart (0.44.0, VictoriaMetrics/helm-charts commit 5823471a) as a VMDistributedCluster that
// references, by name, the objects the chart rendered. Pure: JSON in, a manifest and notes out.
// The names are computed as the chart's templates compute them (templates/_helpers.tpl
// vm.per-zone.cluster.spec, per-az/vmagent.yaml, vmauth-read.yaml, and victoria-metrics-common's
// vm.fullname / vm.cr.fullname / vm.internal.key); docs/migrating.md says what is left by hand.
//
// The values are someone else's: read as own properties of the null-prototype objects manifests.ts
// builds; every object built from their keys is a dataObject.
import { dataObject, ownValue } from '../../api/data-object';
import type { JsonObject, JsonValue } from '../../api/types';
import { copy, isObject, merge, readRoute, SINGLE_NOT_IMPORTED, validatedManifest, type ImportResult, type Note } from './vmdistributed';

export const CHART = 'victoria-metrics-distributed';
export const CHART_VERSION = '0.44.0';

/** The chart's paths for a VMCluster backend of its read VMAuths (vmauth-read.yaml `$paths.cluster`). */
const CHART_READ_PATHS = ['/select/.+', '/admin/tenants'];

/**
 * The part of the chart's default values.yaml the names depend on: a values file (`-f`) holds only
 * what the user changed, and Helm coalesces it over these. (`helm get values --all` gives all.)
 */
function chartDefaults(): JsonObject {
  const d = JSON.parse(
    JSON.stringify({
      nameOverride: 'vm-distributed',
      fullnameOverride: '',
      common: { vmauth: { spec: {} }, vmagent: { spec: {} }, vmcluster: { spec: {} } },
      read: { global: { vmauth: { enabled: true, name: 'vmauth-global-read-{{ .fullname }}' } } },
      write: { global: { vmauth: { enabled: true, name: 'vmauth-global-write-{{ .fullname }}' } } },
      zoneTpl: {
        read: { allow: true, vmauth: { enabled: true, name: 'vmauth-read-proxy-{{ (.zone).name }}' } },
        write: { allow: true },
        vmagent: { enabled: true, name: 'vmagent-{{ (.zone).name }}' },
        vmcluster: { enabled: true, name: 'vmcluster-{{ (.zone).name }}' },
        vmsingle: { enabled: false, name: '{{ (.zone).name }}' },
      },
      availabilityZones: [{ name: 'zone-eu-1' }, { name: 'zone-us-1' }],
      extra: { vmagent: { enabled: false } },
      enableMultitenancy: false,
    }),
  ) as JsonValue;
  return copy(d) as JsonObject;
}

/** The top-level keys of the chart's values.yaml; anything else is noted. */
const KNOWN_KEYS = [
  'nameOverride',
  'fullnameOverride',
  'namespaceOverride',
  'disableNameTruncation',
  'global',
  'common',
  'write',
  'read',
  'zoneTpl',
  'availabilityZones',
  'extra',
  'enableMultitenancy',
  'victoria-metrics-k8s-stack',
];

export interface ChartImportOptions {
  /** The Helm release name (`helm list`). */
  release: string;
  /** The release's namespace, unless the values override it. */
  namespace?: string;
  /** The version the VMClusters run, when the values do not say one for every zone. */
  clusterVersion?: string;
}

/** sprig's mergeOverwrite as the chart uses it: maps merge, anything else replaces (false and "" too). */
function mergeOverwrite(base: JsonObject, over: JsonObject): JsonObject {
  const out = copy(base) as JsonObject;
  for (const k of Object.keys(over)) {
    const o = over[k]!;
    if (o === null) continue;
    const b = ownValue(out, k);
    out[k] = isObject(o) && isObject(b) ? mergeOverwrite(b, o) : copy(o);
  }
  return out;
}

const obj = (parent: JsonValue | undefined, key: string): JsonObject => {
  const v = isObject(parent) ? ownValue(parent, key) : undefined;
  return isObject(v) ? v : dataObject();
};
const str = (parent: JsonValue | undefined, key: string): string => {
  const v = isObject(parent) ? ownValue(parent, key) : undefined;
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
};
/** Go templates' truthiness, as `if` sees a value. */
const truthy = (v: JsonValue | undefined): boolean =>
  !(
    v === undefined ||
    v === null ||
    v === false ||
    v === '' ||
    v === 0 ||
    (Array.isArray(v) && v.length === 0) ||
    (isObject(v) && Object.keys(v).length === 0)
  );

/**
 * `tpl` of a name, for the expressions the chart's names use; anything else is not evaluated here
 * (a Go template is a program: this import does not run one) and makes the import fail.
 */
function tpl(text: string, vars: ReadonlyMap<string, string>): string | { unknown: string } {
  let unknown: string | undefined;
  const out = text.replace(/\{\{-?\s*([^{}]*?)\s*-?\}\}/g, (_m, expr: string) => {
    const v = vars.get(expr.replace(/\s+/g, ''));
    if (v === undefined) unknown ??= `{{ ${expr} }}`;
    return v ?? '';
  });
  if (unknown === undefined && out.includes('{{')) unknown = out;
  return unknown === undefined ? out : { unknown };
}

const zoneVars = (zone: string, extra: [string, string][] = []): Map<string, string> => new Map([['(.zone).name', zone], ['.zone.name', zone], ...extra]);

class Reader {
  readonly problems: Note[] = [];
  readonly notes: Note[] = [];
  constructor(private readonly values: JsonObject) {}
  problem(path: string, why: string): void {
    this.problems.push({ path, why });
  }
  note(path: string, why: string): void {
    this.notes.push({ path, why });
  }
  /** trunc 63 | trimSuffix "-", unless the values turn truncation off. */
  truncate(name: string): string {
    if (truthy(ownValue(this.values, 'disableNameTruncation')) || truthy(ownValue(obj(this.values, 'global'), 'disableNameTruncation'))) return name;
    const cut = name.slice(0, 63);
    return cut.endsWith('-') ? cut.slice(0, -1) : cut;
  }
  render(text: string, vars: ReadonlyMap<string, string>, path: string): string | undefined {
    const r = tpl(text, vars);
    if (typeof r === 'string') return r;
    this.problem(
      path,
      `${JSON.stringify(text)}: ${r.unknown} is a template this import does not evaluate: set a plain name (the one \`helm get manifest\` shows)`,
    );
    return undefined;
  }
}

/** vm.fullname of victoria-metrics-common. */
function fullname(r: Reader, v: JsonObject, release: string, namespace: string): string | undefined {
  let name = str(v, 'fullnameOverride') || str(obj(v, 'global'), 'fullnameOverride');
  if (name === '') {
    const chartName = str(v, 'nameOverride') || CHART;
    name = release.includes(chartName) ? release : `${release}-${chartName}`;
  }
  const out = r.render(
    name,
    new Map([
      ['.Release.Name', release],
      ['.Release.Namespace', namespace],
    ]),
    'fullnameOverride',
  );
  return out === undefined ? undefined : r.truncate(out);
}

/**
 * vm.cr.fullname: the last non-empty `name` along appKey, in the values and in the template's
 * context alike (vm.internal.key), else vm.fullname; then tpl and truncation.
 */
function crName(
  r: Reader,
  v: JsonObject,
  ctx: JsonObject,
  appKey: readonly string[],
  vars: ReadonlyMap<string, string>,
  full: string,
  path: string,
): string | undefined {
  let key = '';
  let values: JsonValue | undefined = v;
  let c: JsonValue | undefined = ctx;
  for (const k of appKey) {
    values = isObject(values) ? ownValue(values, k) : undefined;
    c = isObject(c) ? ownValue(c, k) : undefined;
    if (str(values, 'name') !== '') key = str(values, 'name');
    else if (str(c, 'name') !== '') key = str(c, 'name');
  }
  const out = r.render(key || full, vars, path);
  return out === undefined ? undefined : r.truncate(out);
}

interface ChartZone {
  name: string;
  path: string;
  vmcluster: string;
  vmagent?: string;
  clusterVersion: string;
  raw: JsonObject;
}

function zones(r: Reader, v: JsonObject, full: string): ChartZone[] {
  const list = ownValue(v, 'availabilityZones');
  if (!Array.isArray(list)) {
    r.problem('availabilityZones', 'must be a list of zones');
    return [];
  }
  const tplZone = obj(v, 'zoneTpl');
  const commonCluster = obj(obj(v, 'common'), 'vmcluster');
  const out: ChartZone[] = [];
  list.forEach((z, i) => {
    const path = `availabilityZones[${i}]`;
    if (!isObject(z)) {
      r.problem(path, 'must be an object');
      return;
    }
    const zone = mergeOverwrite(tplZone, z);
    const name = str(zone, 'name');
    if (name === '') {
      r.problem(`${path}.name`, 'is required');
      return;
    }
    const cluster = obj(zone, 'vmcluster');
    if (!truthy(ownValue(cluster, 'enabled'))) {
      r.problem(
        `${path}.vmcluster.enabled`,
        truthy(ownValue(obj(zone, 'vmsingle'), 'enabled')) ? `false (a VMSingle zone): ${SINGLE_NOT_IMPORTED}` : 'false: the zone has no VMCluster',
      );
      return;
    }
    const vars = zoneVars(name);
    // vm.per-zone.cluster.spec: the zone's vmcluster.name, else its name, through tpl; not truncated.
    const vmcluster = r.render(str(cluster, 'name') || name, vars, `${path}.vmcluster.name`);
    const spec = mergeOverwrite(obj(commonCluster, 'spec'), obj(cluster, 'spec'));
    let vmagent: string | undefined;
    const agent = obj(zone, 'vmagent');
    if (truthy(ownValue(agent, 'enabled'))) {
      const ctx = dataObject();
      ctx.zone = zone;
      vmagent = crName(r, v, ctx, ['zone', 'vmagent', 'spec'], zoneVars(name, [['.fullname', full]]), full, `${path}.vmagent.name`);
    }
    if (vmcluster === undefined) return;
    out.push({ name, path, vmcluster, vmagent, clusterVersion: str(spec, 'clusterVersion'), raw: zone });
  });
  return out;
}

function clusterVersion(r: Reader, zs: readonly ChartZone[], opts: ChartImportOptions): string | undefined {
  const declared = new Set(zs.map((z) => z.clusterVersion));
  if (opts.clusterVersion !== undefined) {
    for (const z of zs)
      if (z.clusterVersion !== '' && z.clusterVersion !== opts.clusterVersion)
        r.note(
          `${z.path}.vmcluster.spec.clusterVersion`,
          `${z.clusterVersion}: the first rollout moves zone ${z.name} to ${opts.clusterVersion} (--cluster-version)`,
        );
    return opts.clusterVersion;
  }
  if (declared.size === 1 && !declared.has('')) return [...declared][0];
  r.problem(
    'common.vmcluster.spec.clusterVersion',
    declared.size === 1
      ? 'no zone declares a clusterVersion (the operator default applies): pass --cluster-version with the version the VMClusters run now'
      : `the zones declare different clusterVersions (${zs.map((z) => `${z.name}: ${z.clusterVersion || 'none'}`).join(', ')}): pass --cluster-version`,
  );
  return undefined;
}

function notes(r: Reader, v: JsonObject, zs: readonly ChartZone[]): void {
  for (const k of Object.keys(v)) if (!KNOWN_KEYS.includes(k)) r.note(k, `not a value of the ${CHART} chart ${CHART_VERSION}: not mapped`);
  r.note(
    'read.global.vmauth.spec.unauthorizedUserAccessSpec.url_map',
    "static URLs vmrollout cannot switch: the VMAuth's overrideSpec routes reads by a VMCluster/vmselect targetRef naming every zone's VMCluster; replace url_map in the release's values with that route before the cut-over, else the next helm upgrade puts url_map back (docs/migrating.md)",
  );
  for (const z of zs) {
    if (truthy(ownValue(obj(obj(z.raw, 'read'), 'vmauth'), 'enabled')))
      r.note(
        `${z.path}.read.vmauth`,
        `the zone's read proxy VMAuth is not mapped: it keeps reading from every zone, those being upgraded too; point its readers at the global read VMAuth`,
      );
    if (ownValue(obj(z.raw, 'read'), 'allow') === false || ownValue(obj(z.raw, 'write'), 'allow') === false)
      r.note(`${z.path}`, `read.allow/write.allow false not mapped: vmrollout keeps every zone in reads and writes; the new read route includes ${z.name}`);
  }
  if (truthy(ownValue(obj(obj(v, 'write'), 'global'), 'vmauth')) && truthy(ownValue(obj(obj(obj(v, 'write'), 'global'), 'vmauth'), 'enabled')))
    r.note('write.global.vmauth', "not mapped: it balances writes over the zones' VMAgents and stays as Helm renders it");
  if (truthy(ownValue(obj(obj(v, 'extra'), 'vmagent'), 'enabled'))) r.note('extra.vmagent', 'not mapped: it writes through the global write VMAuth');
  if (truthy(ownValue(obj(v, 'victoria-metrics-k8s-stack'), 'enabled')))
    r.note('victoria-metrics-k8s-stack', 'not mapped: the operator and Grafana it installs stay with the release');
  r.note(
    '(release)',
    'every object stays in the Helm release: referenced by name, not adopted; remove clusterVersion from the values before the first rollout, or the next helm upgrade puts the old one back',
  );
}

/** Converts the values of one victoria-metrics-distributed release (already parsed: manifests.ts). */
export function importChartValues(input: JsonValue, opts: ChartImportOptions): ImportResult {
  const fail = (r: Reader): ImportResult => ({ ok: false, problems: r.problems, notes: r.notes });
  if (!isObject(input)) {
    const r = new Reader(dataObject());
    r.problem('(document)', 'must be a YAML mapping (a values file)');
    return fail(r);
  }
  const v = merge(chartDefaults(), input); // Helm's coalescing
  const r = new Reader(v);
  const namespace = str(v, 'namespaceOverride') || str(obj(v, 'global'), 'namespaceOverride') || opts.namespace;
  if (namespace === undefined || namespace === '') r.problem('(release)', 'no namespace: pass --namespace with the release namespace');
  const full = fullname(r, v, opts.release, namespace ?? '');
  const readAuthIn = obj(obj(v, 'read'), 'global');
  if (!truthy(ownValue(obj(readAuthIn, 'vmauth'), 'enabled')))
    r.problem('read.global.vmauth.enabled', 'false: vmrollout switches reads in a VMAuth, and this release has no global read VMAuth');
  if (full === undefined || namespace === undefined || r.problems.length > 0) return fail(r);

  const zs = zones(r, v, full);
  if (r.problems.length > 0) return fail(r);
  // vmauth-read.yaml: common.vmauth.spec under read.global.vmauth, named by vm.cr.fullname with appKey [vmauth spec].
  const ctx = dataObject();
  ctx.vmauth = mergeOverwrite(
    (() => {
      const o = dataObject();
      o.spec = obj(obj(obj(v, 'common'), 'vmauth'), 'spec');
      return o;
    })(),
    obj(readAuthIn, 'vmauth'),
  );
  const vmauth = crName(r, v, ctx, ['vmauth', 'spec'], new Map([['.fullname', full]]), full, 'read.global.vmauth.name');
  const agent = zs.find((z) => z.vmagent !== undefined);
  if (agent === undefined) r.problem('zoneTpl.vmagent.enabled', "no zone runs a VMAgent: vmrollout reads the zones' write backlog from one");
  const version = clusterVersion(r, zs, opts);
  if (vmauth === undefined || agent === undefined || version === undefined || r.problems.length > 0) return fail(r);
  notes(r, v, zs);

  const out = dataObject();
  out.clusterVersion = version;
  out.zones = zs.map((z) => {
    const zone = dataObject();
    zone.name = z.name;
    const ref = dataObject();
    ref.name = z.vmcluster;
    zone.vmcluster = ref;
    // Every zone's VMAgent writes to every zone: the first is spec.vmagent, the others the zones' own.
    if (z.vmagent !== undefined && z.vmagent !== agent.vmagent && !zs.slice(0, zs.indexOf(z)).some((o) => o.vmagent === z.vmagent)) {
      const own = dataObject();
      own.name = z.vmagent;
      zone.vmagent = own;
    }
    return zone;
  });
  const access = dataObject();
  access.targetRefs = [readRoute(zs, namespace, CHART_READ_PATHS)];
  const authSpec = dataObject();
  authSpec.unauthorizedUserAccessSpec = access;
  const auth = dataObject();
  auth.name = vmauth;
  auth.overrideSpec = authSpec;
  out.vmauth = auth;
  const agentRef = dataObject();
  agentRef.name = agent.vmagent!;
  out.vmagent = agentRef;

  const manifest = validatedManifest((path, why) => r.problem(path, why), out, full, namespace);
  return manifest ? { ok: true, manifest, notes: r.notes } : fail(r);
}
