// `kubectl vmdc import`: the VictoriaMetrics operator's VMDistributed (operator.victoriametrics.com/
// v1alpha1, operator v0.70–v0.74) as a VMDistributedCluster. Pure: JSON in, a manifest and the notes
// of what could not be mapped out. The operator's behaviour it reproduces is from its v0.74.1 source
// (api/operator/v1alpha1/vmdistributed_types.go, internal/controller/operator/factory/vmdistributed/,
// build/defaults.go); docs/migrating.md walks the cut-over this output is for.
//
// Everything in the input is someone else's: keys are only read as own properties of null-prototype
// objects (manifests.ts builds them), and every object built here from its keys is a dataObject.
import { dataObject, ownValue } from '../../api/data-object';
import type { JsonObject, JsonValue } from '../../api/types';
import { API_VERSION, KIND } from '../../api/constants';
import { validateSpec } from '../../api/validate';

export const VMDISTRIBUTED_API_VERSION = 'operator.victoriametrics.com/v1alpha1';
const ZONE_PLACEHOLDER = '%ZONE%';
/** The read route the operator writes into the VMAuth's defaultTargetRefs (podutil.VMAuthReadTargetRef). */
const READ_REF_NAME = 'read';
const READ_PATHS = ['/flags', '/metrics', '/select/.+', '/admin/tenants'];

/**
 * adopt: each zone's VMCluster and the VMAuth as full specs with `adopt: true` (vmrollout owns them
 * from then on), `retainOnDelete: true` unless retainOnDelete says otherwise.
 * reference: every object by name with an overlay; `zoneCommon` becomes the global `overrideSpec`.
 */
export type ImportMode = 'adopt' | 'reference';

export interface ImportOptions {
  mode: ImportMode;
  /** The version the VMClusters run, when the VMDistributed does not say it or its zones disagree. */
  clusterVersion?: string;
  /** adopt mode: overrides the `retainOnDelete: true` that adopting implies. */
  retainOnDelete?: boolean;
  /** When the object has no metadata.namespace. */
  namespace?: string;
}

/** A field of the input and what became of it. */
export interface Note {
  path: string;
  why: string;
}

export type ImportResult = { ok: true; manifest: JsonObject; notes: Note[] } | { ok: false; problems: Note[]; notes: Note[] };

export function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A deep copy whose maps have no prototype (keys are data: api/data-object.ts). */
export function copy(v: JsonValue): JsonValue {
  if (Array.isArray(v)) return v.map(copy);
  if (!isObject(v)) return v;
  const out = dataObject();
  for (const k of Object.keys(v)) out[k] = copy(v[k]!);
  return out;
}

/**
 * The operator's MergeDeep: maps merge, a null deletes, anything else replaces (RFC 7386); Helm's
 * coalescing of a values file over the chart's is the same rule.
 */
export function merge(base: JsonObject, override: JsonObject): JsonObject {
  const out = copy(base) as JsonObject;
  for (const k of Object.keys(override)) {
    const o = override[k]!;
    const b = ownValue(out, k);
    if (o === null) delete out[k];
    else out[k] = isObject(o) && isObject(b) ? merge(b, o) : copy(o);
  }
  return out;
}

/** k8stools.RenderPlaceholders: %ZONE% replaced in every key and string of the common spec. */
function render(v: JsonValue, zone: string): JsonValue {
  if (typeof v === 'string') return v.split(ZONE_PLACEHOLDER).join(zone);
  if (Array.isArray(v)) return v.map((x) => render(x, zone));
  if (!isObject(v)) return v;
  const out = dataObject();
  for (const k of Object.keys(v)) out[k.split(ZONE_PLACEHOLDER).join(zone)] = render(v[k]!, zone);
  return out;
}

function mentionsZone(v: JsonValue): boolean {
  if (typeof v === 'string') return v.includes(ZONE_PLACEHOLDER);
  if (Array.isArray(v)) return v.some(mentionsZone);
  if (!isObject(v)) return false;
  return Object.keys(v).some((k) => k.includes(ZONE_PLACEHOLDER) || mentionsZone(v[k]!));
}

const isEmpty = (o: JsonObject): boolean => Object.keys(o).length === 0;

/** Reads one VMDistributed, collecting problems (the import fails) and notes (it goes on). */
class Reader {
  readonly problems: Note[] = [];
  readonly notes: Note[] = [];

  problem(path: string, why: string): void {
    this.problems.push({ path, why });
  }
  note(path: string, why: string): void {
    this.notes.push({ path, why });
  }

  /** The object at `path`, {} when absent or null; a problem when it is something else. */
  object(parent: JsonObject, key: string, path: string): JsonObject {
    const v = ownValue(parent, key);
    if (v === undefined || v === null) return dataObject();
    if (isObject(v)) return v;
    this.problem(path, `must be an object (got ${Array.isArray(v) ? 'a list' : typeof v})`);
    return dataObject();
  }

  string(parent: JsonObject, key: string, path: string): string | undefined {
    const v = ownValue(parent, key);
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v === 'string') return v;
    this.problem(path, `must be a string (got ${typeof v})`);
    return undefined;
  }

  /** Keys the type of operator v0.74.1 does not have: v0.70 ignored them, v0.71 and later refuse the object. */
  unknownKeys(o: JsonObject, known: readonly string[], path: string): void {
    for (const k of Object.keys(o))
      if (!known.includes(k))
        this.note(`${path}.${k}`, `not a field of the operator's VMDistributed (v0.74.1): not mapped (operator v0.71+ refuses such an object)`);
  }
}

/** A VMSingle backend: vmrollout rolls VMSingle zones out, the import does not write them. */
export const SINGLE_NOT_IMPORTED =
  'the import converts VMCluster backends only: write the VMSingle zones as spec.zones[].vmsingle (docs/operations.md#vmsingle-zones-zonesvmsingle)';

const SPEC_KEYS = ['backendType', 'vmauth', 'zones', 'zoneCommon', 'license', 'paused', 'retain'];
const COMMON_KEYS = ['vmcluster', 'vmsingle', 'vmagent', 'remoteWrite', 'readyTimeout', 'updatePause'];
const ZONE_KEYS = ['name', 'trafficMode', 'vmcluster', 'vmsingle', 'vmagent', 'remoteWrite'];
const NAMED_SPEC_KEYS = ['name', 'spec'];
const VMAUTH_KEYS = ['enabled', 'name', 'spec'];

interface Zone {
  name: string;
  path: string;
  raw: JsonObject;
  vmcluster: string;
  vmagent: string;
}

/** `name`, else the zoneCommon name template with %ZONE%, else `<VMDistributed>-<zone>` (VMClusterName, VMAgentName). */
function objectName(zoneName: string | undefined, commonName: string | undefined, cr: string, zone: string): string {
  if (zoneName) return zoneName;
  if (commonName) return commonName.split(ZONE_PLACEHOLDER).join(zone);
  return `${cr}-${zone}`;
}

/** The spec with the license the operator's defaulting copies into it when it has none. */
function withLicense(spec: JsonObject, license: JsonValue | undefined): JsonObject {
  if (license === undefined || license === null || ownValue(spec, 'license') !== undefined) return spec;
  const out = copy(spec) as JsonObject;
  out.license = copy(license);
  return out;
}

/** A VMCluster/vmselect route to every zone's VMCluster (shared with chart-values.ts). */
export function readRoute(zones: readonly { vmcluster: string }[], namespace: string, paths: readonly string[] = READ_PATHS): JsonObject {
  const crd = dataObject();
  crd.kind = 'VMCluster/vmselect';
  // The CRD requires name and namespace; empty ones route nothing (docs/design.md, the operator's contract).
  crd.name = '';
  crd.namespace = '';
  crd.objects = zones.map((z) => {
    const o = dataObject();
    o.name = z.vmcluster;
    o.namespace = namespace;
    return o;
  });
  const ref = dataObject();
  ref.crd = crd;
  ref.paths = [...paths];
  ref.load_balancing_policy = 'first_available';
  ref.retry_status_codes = [500, 502, 503];
  return ref;
}

function isNamedRef(v: JsonValue, name: string): boolean {
  return isObject(v) && ownValue(v, 'name') === name;
}

/**
 * The VMAuth spec the VMDistributed described, with its read route made one vmrollout can switch:
 * the operator routes reads through defaultTargetRefs `read` (a named ref); vmrollout edits only
 * `crd` targetRefs of kind VMCluster/vmselect in unauthorizedUserAccessSpec and VMUsers.
 */
function vmauthSpec(r: Reader, vmauth: JsonObject, zones: readonly Zone[], namespace: string, license: JsonValue | undefined): JsonObject {
  const spec = withLicense(copy(r.object(vmauth, 'spec', 'spec.vmauth.spec')) as JsonObject, license);
  if (ownValue(spec, 'defaultTargetRefs') !== undefined) {
    r.note(
      'spec.vmauth.spec.defaultTargetRefs',
      'not mapped: the operator replaces it with its own read and write routes, which stay on the VMAuth as it last wrote them',
    );
    delete spec.defaultTargetRefs;
  }
  // The operator forces it on; keeping it keeps the VMAuth as it runs now.
  spec.waitForConfigReload = true;
  const unauth = ownValue(spec, 'unauthorizedUserAccessSpec');
  const refs = isObject(unauth) ? ownValue(unauth, 'targetRefs') : undefined;
  if (isObject(unauth) && Array.isArray(refs) && refs.some((x) => isNamedRef(x, READ_REF_NAME))) {
    unauth.targetRefs = refs.map((x) => (isNamedRef(x, READ_REF_NAME) ? readRoute(zones, namespace) : x));
    r.note(
      'spec.vmauth.spec.unauthorizedUserAccessSpec.targetRefs',
      `{name: ${READ_REF_NAME}} (the operator's defaultTargetRefs route) replaced by a VMCluster/vmselect route to every zone's VMCluster: vmrollout switches reads only in such routes`,
    );
  } else {
    r.note(
      'spec.vmauth.spec.unauthorizedUserAccessSpec',
      `no {name: ${READ_REF_NAME}} route to convert: reads that reach the zones through VMUsers naming "${READ_REF_NAME}" are not switched by vmrollout; point those VMUsers at the zones' VMClusters and name them in zones[].vmuser (docs/migrating.md)`,
    );
  }
  if (Array.isArray(refs) && refs.some((x) => isNamedRef(x, 'write')))
    r.note(
      'spec.vmauth.spec.unauthorizedUserAccessSpec.targetRefs',
      '{name: write} kept: it routes writes through the defaultTargetRefs the operator last wrote, which nobody updates after the cut-over',
    );
  return spec;
}

function zoneList(r: Reader, spec: JsonObject, cr: string, common: JsonObject): Zone[] {
  const raw = ownValue(spec, 'zones');
  if (!Array.isArray(raw)) {
    r.problem('spec.zones', 'must be a list of zones');
    return [];
  }
  const commonCluster = r.object(common, 'vmcluster', 'spec.zoneCommon.vmcluster');
  const commonAgent = r.object(common, 'vmagent', 'spec.zoneCommon.vmagent');
  const out: Zone[] = [];
  raw.forEach((z, i) => {
    const path = `spec.zones[${i}]`;
    if (!isObject(z)) {
      r.problem(path, 'must be an object');
      return;
    }
    r.unknownKeys(z, ZONE_KEYS, path);
    const name = r.string(z, 'name', `${path}.name`);
    if (name === undefined) {
      if (typeof ownValue(z, 'name') !== 'number') r.problem(`${path}.name`, 'is required');
      return;
    }
    const cluster = r.object(z, 'vmcluster', `${path}.vmcluster`);
    const agent = r.object(z, 'vmagent', `${path}.vmagent`);
    r.unknownKeys(cluster, NAMED_SPEC_KEYS, `${path}.vmcluster`);
    r.unknownKeys(agent, NAMED_SPEC_KEYS, `${path}.vmagent`);
    out.push({
      name,
      path,
      raw: z,
      vmcluster: objectName(r.string(cluster, 'name', `${path}.vmcluster.name`), r.string(commonCluster, 'name', 'spec.zoneCommon.vmcluster.name'), cr, name),
      vmagent: objectName(r.string(agent, 'name', `${path}.vmagent.name`), r.string(commonAgent, 'name', 'spec.zoneCommon.vmagent.name'), cr, name),
    });
  });
  return out;
}

/** Each zone's VMCluster spec as the operator renders it: zoneCommon (license, %ZONE%), then the zone's. */
function clusterSpecs(r: Reader, zones: readonly Zone[], common: JsonObject, license: JsonValue | undefined): JsonObject[] {
  const commonSpec = withLicense(r.object(r.object(common, 'vmcluster', 'spec.zoneCommon.vmcluster'), 'spec', 'spec.zoneCommon.vmcluster.spec'), license);
  return zones.map((z) =>
    merge(render(commonSpec, z.name) as JsonObject, r.object(r.object(z.raw, 'vmcluster', `${z.path}.vmcluster`), 'spec', `${z.path}.vmcluster.spec`)),
  );
}

/** The one clusterVersion of every zone, or the option; a problem when neither settles it. */
function clusterVersion(r: Reader, zones: readonly Zone[], specs: readonly JsonObject[], opts: ImportOptions): string | undefined {
  const found = new Map<string, string[]>();
  specs.forEach((s, i) => {
    const v = ownValue(s, 'clusterVersion');
    const key = typeof v === 'string' && v !== '' ? v : '';
    found.set(key, [...(found.get(key) ?? []), zones[i]!.name]);
  });
  const versions = [...found.keys()].filter((v) => v !== '');
  if (opts.clusterVersion !== undefined) {
    for (const v of versions)
      if (v !== opts.clusterVersion)
        r.note(
          'spec.zones',
          `zones ${found.get(v)!.join(', ')} declare clusterVersion ${v}: the first rollout moves them to ${opts.clusterVersion} (--cluster-version)`,
        );
    return opts.clusterVersion;
  }
  if (versions.length === 1 && !found.has('')) return versions[0];
  if (versions.length === 0)
    r.problem(
      'spec.zoneCommon.vmcluster.spec.clusterVersion',
      'no zone declares a clusterVersion: pass --cluster-version with the version the VMClusters run now (kubectl get vmcluster -o yaml shows their images)',
    );
  else
    r.problem(
      'spec.zones',
      `the zones run different clusterVersions (${[...found.entries()].map(([v, zs]) => `${v || 'none'}: ${zs.join(', ')}`).join('; ')}): pass --cluster-version with the version they should all run`,
    );
  return undefined;
}

function withoutClusterVersion(spec: JsonObject): JsonObject {
  const out = copy(spec) as JsonObject;
  delete out.clusterVersion;
  return out;
}

function managed(name: string, key: 'spec' | 'overrideSpec', body: JsonObject, adopt: boolean): JsonObject {
  const o = dataObject();
  o.name = name;
  if (key === 'spec' || !isEmpty(body)) o[key] = body;
  if (adopt) o.adopt = true;
  return o;
}

function strategy(r: Reader, common: JsonObject): JsonObject | undefined {
  const out = dataObject();
  const map = (from: string, to: string): void => {
    const v = r.string(common, from, `spec.zoneCommon.${from}`);
    if (v !== undefined) out[to] = v;
  };
  map('readyTimeout', 'zoneTimeout');
  map('updatePause', 'pauseBetweenZones');
  return isEmpty(out) ? undefined : out;
}

function notesOnZones(r: Reader, zones: readonly Zone[], common: JsonObject): void {
  for (const z of zones) {
    const mode = ownValue(z.raw, 'trafficMode');
    if (mode === 'maintenance')
      r.note(
        `${z.path}.trafficMode`,
        `kept: ${z.name} is held out of reads and left alone by rollouts; vmrollout switches reads only: its vminsert is not scaled to 0 as the operator did, and vmagent keeps writing to it`,
      );
    else if (mode === 'read-only')
      r.problem(
        `${z.path}.trafficMode`,
        `read-only is not supported (a zone serving reads while its writes are held back serves stale reads): make ${z.name} read-write, write-only or maintenance before the import`,
      );
    else if (mode !== undefined && mode !== null && mode !== 'read-write' && mode !== 'write-only')
      r.problem(`${z.path}.trafficMode`, `${JSON.stringify(mode)} is not a traffic mode (read-write, write-only, maintenance)`);
    if (ownValue(z.raw, 'remoteWrite') !== undefined)
      r.note(
        `${z.path}.remoteWrite`,
        "not mapped: stays in the VMAgents' remoteWrite lists as the operator composed them; vmrollout does not compose remoteWrite lists",
      );
    const single = ownValue(z.raw, 'vmsingle');
    if (isObject(single) && !isEmpty(single)) r.problem(`${z.path}.vmsingle`, SINGLE_NOT_IMPORTED);
  }
  if (ownValue(common, 'remoteWrite') !== undefined)
    r.note(
      'spec.zoneCommon.remoteWrite',
      "not mapped: stays in the VMAgents' remoteWrite lists as the operator composed them; vmrollout does not compose remoteWrite lists",
    );
  const single = ownValue(common, 'vmsingle');
  if (isObject(single) && !isEmpty(single)) r.problem('spec.zoneCommon.vmsingle', SINGLE_NOT_IMPORTED);
}

/**
 * The VMDistributed runs one VMAgent per zone, each writing to every zone: the first zone's becomes
 * spec.vmagent, each other zone's its zones[].vmagent; vmrollout reads every zone's backlog in all of
 * them. References with an overlay (the operator composed their remoteWrite lists).
 */
function vmagentOf(r: Reader, z: Zone, common: JsonObject, license: JsonValue | undefined): JsonObject {
  const commonSpec = withLicense(r.object(r.object(common, 'vmagent', 'spec.zoneCommon.vmagent'), 'spec', 'spec.zoneCommon.vmagent.spec'), license);
  const overlay = merge(render(commonSpec, z.name) as JsonObject, r.object(r.object(z.raw, 'vmagent', `${z.path}.vmagent`), 'spec', `${z.path}.vmagent.spec`));
  return managed(z.vmagent, 'overrideSpec', overlay, false);
}

/** Converts one VMDistributed object (already parsed: manifests.ts). */
export function importVMDistributed(input: JsonValue, opts: ImportOptions): ImportResult {
  const r = new Reader();
  const fail = (): ImportResult => ({ ok: false, problems: r.problems, notes: r.notes });
  if (!isObject(input)) {
    r.problem('(document)', 'must be a Kubernetes object');
    return fail();
  }
  if (ownValue(input, 'apiVersion') !== VMDISTRIBUTED_API_VERSION || ownValue(input, 'kind') !== 'VMDistributed') {
    r.problem('(document)', `must be apiVersion ${VMDISTRIBUTED_API_VERSION}, kind VMDistributed`);
    return fail();
  }
  const metadata = r.object(input, 'metadata', 'metadata');
  const name = r.string(metadata, 'name', 'metadata.name');
  const namespace = r.string(metadata, 'namespace', 'metadata.namespace') ?? opts.namespace;
  if (name === undefined) r.problem('metadata.name', 'is required');
  if (namespace === undefined) r.problem('metadata.namespace', 'is not set: pass --namespace (the routes name the VMClusters with it)');
  const spec = r.object(input, 'spec', 'spec');
  r.unknownKeys(spec, SPEC_KEYS, 'spec');
  const backend = ownValue(spec, 'backendType');
  if (backend !== undefined && backend !== null && backend !== 'VMCluster') r.problem('spec.backendType', `${JSON.stringify(backend)}: ${SINGLE_NOT_IMPORTED}`);
  const common = r.object(spec, 'zoneCommon', 'spec.zoneCommon');
  r.unknownKeys(common, COMMON_KEYS, 'spec.zoneCommon');
  r.unknownKeys(r.object(common, 'vmcluster', 'spec.zoneCommon.vmcluster'), NAMED_SPEC_KEYS, 'spec.zoneCommon.vmcluster');
  r.unknownKeys(r.object(common, 'vmagent', 'spec.zoneCommon.vmagent'), NAMED_SPEC_KEYS, 'spec.zoneCommon.vmagent');
  const vmauthIn = r.object(spec, 'vmauth', 'spec.vmauth');
  r.unknownKeys(vmauthIn, VMAUTH_KEYS, 'spec.vmauth');
  if (ownValue(vmauthIn, 'enabled') === false) r.problem('spec.vmauth.enabled', 'false: vmrollout switches reads in a VMAuth, and this VMDistributed has none');
  if (name === undefined || namespace === undefined || r.problems.length > 0) return fail();

  const zones = zoneList(r, spec, name, common);
  notesOnZones(r, zones, common);
  if (zones.length === 0 || r.problems.length > 0) {
    if (zones.length === 0 && r.problems.length === 0) r.problem('spec.zones', 'lists no zone');
    return fail();
  }
  const license = ownValue(spec, 'license');
  const specs = clusterSpecs(r, zones, common, license);
  const version = clusterVersion(r, zones, specs, opts);
  if (version === undefined) return fail();

  const out = dataObject();
  out.clusterVersion = version;
  const commonCluster = withLicense(r.object(r.object(common, 'vmcluster', 'spec.zoneCommon.vmcluster'), 'spec', 'spec.zoneCommon.vmcluster.spec'), license);
  const adopt = opts.mode === 'adopt';
  // Reference mode keeps zoneCommon as the global overlay unless it names the zone (then each zone gets it rendered).
  const commonAsGlobal = !adopt && !mentionsZone(commonCluster);
  if (commonAsGlobal && !isEmpty(withoutClusterVersion(commonCluster))) out.overrideSpec = withoutClusterVersion(commonCluster);
  out.zones = zones.map((z, i) => {
    const zone = dataObject();
    zone.name = z.name;
    const own = r.object(r.object(z.raw, 'vmcluster', `${z.path}.vmcluster`), 'spec', `${z.path}.vmcluster.spec`);
    zone.vmcluster = adopt
      ? managed(z.vmcluster, 'spec', withoutClusterVersion(specs[i]!), true)
      : managed(z.vmcluster, 'overrideSpec', withoutClusterVersion(commonAsGlobal ? own : specs[i]!), false);
    const mode = ownValue(z.raw, 'trafficMode');
    if (mode === 'write-only' || mode === 'maintenance') zone.trafficMode = mode;
    // The first zone's VMAgent is spec.vmagent (below); a VMAgent two zones share, once.
    if (i > 0 && !zones.slice(0, i).some((o) => o.vmagent === z.vmagent)) zone.vmagent = vmagentOf(r, z, common, license);
    return zone;
  });
  const auth = vmauthSpec(r, vmauthIn, zones, namespace, license);
  const authName = r.string(vmauthIn, 'name', 'spec.vmauth.name') ?? name;
  out.vmauth = adopt ? managed(authName, 'spec', auth, true) : managed(authName, 'overrideSpec', auth, false);
  out.vmagent = vmagentOf(r, zones[0]!, common, license);
  const retain = ownValue(spec, 'retain') === true;
  // Adopting must never let a delete take someone's volumes: retainOnDelete unless said otherwise.
  const retainOnDelete = adopt ? (opts.retainOnDelete ?? true) : retain;
  if (retainOnDelete) out.retainOnDelete = true;
  if (adopt && !retainOnDelete)
    r.note(
      'spec.retain',
      'retainOnDelete: false (--retain-on-delete=false): deleting the VMDistributedCluster deletes the adopted VMClusters and their volumes',
    );
  const strat = strategy(r, common);
  if (strat) out.strategy = strat;
  if (ownValue(spec, 'paused') === true)
    r.note('spec.paused', 'not carried over: it pauses the VMDistributed for the cut-over; the VMDistributedCluster starts unpaused');
  if (adopt)
    r.note(
      'spec.vmagent',
      `the VMAgents (${[...new Set(zones.map((z) => z.vmagent))].join(', ')}) kept as references with an overlay (not adopted): the operator composed their remoteWrite lists, which vmrollout leaves as they are`,
    );

  const manifest = validatedManifest((path, why) => r.problem(path, why), out, name, namespace);
  return manifest ? { ok: true, manifest, notes: r.notes } : fail();
}

/**
 * The VMDistributedCluster manifest of a converted spec, or undefined once every reason the spec is
 * not valid has been reported: what each import ends with.
 */
export function validatedManifest(report: (path: string, why: string) => void, spec: JsonObject, name: string, namespace: string): JsonObject | undefined {
  const checked = validateSpec(spec);
  if (!checked.success) {
    for (const i of checked.issues) report(i.path, `the converted spec is not valid: ${i.message}`);
    return undefined;
  }
  const manifest = dataObject();
  manifest.apiVersion = API_VERSION;
  manifest.kind = KIND;
  const meta = dataObject();
  meta.name = name;
  meta.namespace = namespace;
  manifest.metadata = meta;
  manifest.spec = spec;
  return manifest;
}

/** The one VMDistributed of a stream (other kinds are named in the notes), or a problem. */
export function pickVMDistributed(docs: readonly JsonValue[]): { doc: JsonValue; notes: Note[] } | { problem: Note } {
  const notes: Note[] = [];
  const found: JsonValue[] = [];
  docs.forEach((d, i) => {
    if (d === null) return;
    if (isObject(d) && ownValue(d, 'kind') === 'VMDistributed') found.push(d);
    else {
      const kind = isObject(d) ? ownValue(d, 'kind') : undefined;
      notes.push({ path: `(document ${i + 1})`, why: `${typeof kind === 'string' ? `a ${kind}` : 'not a Kubernetes object'}: not converted` });
    }
  });
  if (found.length !== 1)
    return {
      problem: { path: '(input)', why: found.length === 0 ? 'holds no VMDistributed' : `holds ${found.length} VMDistributed objects: import one at a time` },
    };
  return { doc: found[0]!, notes };
}
