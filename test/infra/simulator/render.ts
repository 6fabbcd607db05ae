/**
 * ZONE SIMULATOR — the pure part: the vmauth config the VictoriaMetrics operator v0.74.1 renders
 * from a VMAuth and the VMUsers it selects, byte for byte in its structure (source mirror
 * VictoriaMetrics/operator, tag v0.74.1):
 *
 *  - internal/controller/operator/factory/vmauth/vmusers_config.go
 *      selectUsers          VMUsers selected by spec.selectAllByDefault / userSelector (matchLabels
 *                           only; the simulator's namespace only); none when neither is set.
 *                           Ordered by "namespace/name" (build.NewChildObjects → OrderByKeys).
 *      updateCRDObjURLs     crd.name counts only when crd.name AND crd.namespace are non-empty;
 *                           plus every crd.objects entry (exact name + namespace). A ref naming no
 *                           existing VMCluster is an error: for a VMUser the user is skipped
 *                           (ForEachCollectSkipInvalid → its status fails with the error), for the
 *                           VMAuth's unauthorizedUserAccessSpec the whole VMAuth reconcile fails.
 *      genURLMaps           the single-default-route fast path (`url_prefix` on the user itself),
 *                           else one url_map entry per targetRef, default src_paths of a
 *                           VMCluster/vmselect ref `["/select/.*", "/admin/.*"]`, key order as the
 *                           operator writes them; "user must have at least 1 url target".
 *      genUserCfg           `name` when spec.name is set, then `bearer_token`, else `username`
 *                           (default: the object name) + `password`.
 *      buildUnauthorizedConfig / generateConfig   `users` first, then `unauthorized_user`.
 *  - api/operator/v1beta1/vmcluster_types.go AsURL: `http://vmselect-<name>.<namespace>.svc:8481`
 *    (spec.vmselect.port overrides the port; `https` when spec.vmselect.extraArgs.tls is "true";
 *    no spec.vmselect → "" → "cannot find crdRef target").
 *  - api/operator/v1beta1/vmsingle_types.go AsURL: `http://vmsingle-<name>.<namespace>.svc:8428`
 *    (spec.port overrides the port; the object is read without the operator's defaults, so an unset
 *    port is 8428, the Service's http-alias port, not the pod's 8429 — seen on the real-operator bed; `https` when
 *    spec.extraArgs.tls is "true"). A `VMSingle` targetRef without paths gets src_paths ["/.*"].
 *  - internal/controller/operator/factory/build/build.go GzipConfig: the Secret holds the YAML
 *    gzipped; reconcile/config_reload.go HashBytes: the content hash is CRC32-IEEE of those bytes.
 *
 * Not modelled: defaultTargetRefs, target_path_suffix / query_args, passwordRef / tokenRef /
 * generatePassword / JWT, TLS assets, duplicate-user detection, kinds other than VMCluster/* and
 * VMSingle, a VMSingle's additional service (serviceSpec.useAsDefault).
 */
import * as zlib from 'node:zlib';
import { stringify } from 'yaml';
import type { JsonObject, JsonValue } from '../../../api/types';

export const VMSELECT_KIND = 'VMCluster/vmselect';
const CLUSTER_KINDS: Record<string, { prefix: string; port: string; spec: string }> = {
  'VMCluster/vmselect': { prefix: 'vmselect', port: '8481', spec: 'vmselect' },
  'VMCluster/vminsert': { prefix: 'vminsert', port: '8480', spec: 'vminsert' },
  'VMCluster/vmstorage': { prefix: 'vmstorage', port: '8482', spec: 'vmstorage' },
};
const OPERATOR_KINDS = new Set([
  'VMAgent',
  'VMAlert',
  'VMSingle',
  'VLogs',
  'VMAlertmanager',
  'VMAlertManager',
  'VMCluster/vmselect',
  'VMCluster/vminsert',
  'VMCluster/vmstorage',
  'VMAnomaly',
  'VLSingle',
  'VLCluster/vlselect',
  'VLCluster/vlinsert',
  'VLCluster/vlstorage',
  'VLAgent',
  'VTSingle',
  'VTCluster/vtselect',
  'VTCluster/vtinsert',
  'VTCluster/vtstorage',
]);

export const VMSINGLE_KIND = 'VMSingle';
/** The operator's default VMSingle port (config VMSingleDefault.Port): its pod's. */
export const VMSINGLE_DEFAULT_PORT = '8429';

/** A zone: its storage object (a VMCluster, or a VMSingle: `kind`) and the operator's service URL of what serves its reads. */
export interface ZoneBackend {
  namespace: string;
  name: string;
  url: string;
  kind?: 'VMSingle';
}

export interface KubeObjectLike {
  metadata?: { name?: string; namespace?: string; generation?: number; labels?: Record<string, string> };
  spec?: JsonObject;
}

/** One url_map entry or the user itself (fast path): the keys vmrollout and the tests read. */
export interface UrlMapEntry {
  url_prefix: string[];
  src_paths?: string[];
  [k: string]: unknown;
}

export interface VmauthUser {
  url_prefix?: string[];
  url_map?: UrlMapEntry[];
  name?: string;
  bearer_token?: string;
  username?: string;
  password?: string;
  [k: string]: unknown;
}

export interface VmauthConfig {
  users?: VmauthUser[];
  unauthorized_user?: { url_prefix?: string[]; url_map?: UrlMapEntry[]; [k: string]: unknown };
}

export interface RenderResult {
  /** The error that fails the whole VMAuth reconcile (no Secret written), as the operator words it. */
  vmauthError?: string;
  /** config.yaml as the operator writes it into the Secret (before gzip). */
  yaml: string;
  config: VmauthConfig;
  /** Selected VMUsers (names, in the operator's order). */
  selectedUsers: string[];
  /** VMUser name → its CurrentSyncError (the user is left out of the config). */
  userErrors: Record<string, string>;
}

const isObj = (v: JsonValue | undefined | unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmpty = (v: JsonValue | undefined): v is string => typeof v === 'string' && v !== '';
const strList = (v: JsonValue | undefined): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** VMCluster.AsURL for a cluster component (default: vmselect). "" when the component is not in the spec. */
export function vmclusterURL(vmc: KubeObjectLike, kind = VMSELECT_KIND): string {
  const k = CLUSTER_KINDS[kind];
  if (!k) return '';
  const comp = vmc.spec?.[k.spec];
  if (!isObj(comp)) return '';
  const port = nonEmpty(comp.port) ? comp.port : k.port;
  const proto = isObj(comp.extraArgs) && comp.extraArgs.tls === 'true' ? 'https' : 'http';
  return `${proto}://${k.prefix}-${vmc.metadata?.name}.${vmc.metadata?.namespace}.svc:${port}`;
}

/** VMSingle.AsURL: `<proto>://vmsingle-<name>.<namespace>.svc:<spec.port | 8428>`. */
export function vmsingleURL(vms: KubeObjectLike): string {
  const spec = vms.spec ?? {};
  const port = nonEmpty(spec.port) ? spec.port : '8428';
  const proto = isObj(spec.extraArgs) && spec.extraArgs.tls === 'true' ? 'https' : 'http';
  return `${proto}://vmsingle-${vms.metadata?.name}.${vms.metadata?.namespace}.svc:${port}`;
}

/** The zones (VMClusters with a vmselect, VMSingles) as routed backends. */
export function zoneBackends(vmclusters: KubeObjectLike[], vmsingles: KubeObjectLike[] = []): ZoneBackend[] {
  return [
    ...vmclusters.map((c) => ({ namespace: c.metadata?.namespace ?? '', name: c.metadata?.name ?? '', url: vmclusterURL(c) })).filter((z) => z.url !== ''),
    ...vmsingles.map((s) => ({ namespace: s.metadata?.namespace ?? '', name: s.metadata?.name ?? '', url: vmsingleURL(s), kind: 'VMSingle' as const })),
  ];
}

/** selectUsers: the VMUsers a VMAuth selects (same namespace), ordered by namespace/name. */
export function selectUsers(vmauth: KubeObjectLike, vmusers: KubeObjectLike[]): KubeObjectLike[] {
  const spec = vmauth.spec ?? {};
  const selectAll = spec.selectAllByDefault === true;
  const objSel = isObj(spec.userSelector) ? spec.userSelector : undefined;
  const nsSel = isObj(spec.userNamespaceSelector) ? spec.userNamespaceSelector : undefined;
  if (!selectAll && !objSel && !nsSel) return [];
  const ml = objSel && isObj(objSel.matchLabels) ? (objSel.matchLabels as Record<string, string>) : {};
  return vmusers
    .filter((u) => Object.entries(ml).every(([k, v]) => u.metadata?.labels?.[k] === v))
    .sort((a, b) => `${a.metadata?.namespace}/${a.metadata?.name}`.localeCompare(`${b.metadata?.namespace}/${b.metadata?.name}`));
}

class OperatorError extends Error {}

/** The objects crd refs may name, by kind: VMClusters (VMCluster/* kinds) and VMSingles. */
export interface CrdObjects {
  vmclusters: KubeObjectLike[];
  vmsingles: KubeObjectLike[];
}

/** updateCRDObjURLs for one targetRef's crd. */
function collectCrdURLs(crd: JsonValue | undefined, objects: CrdObjects, objURLs: Map<string, string>): void {
  if (!isObj(crd)) return;
  const kind = String(crd.kind ?? '');
  const nsns: JsonObject[] = [];
  if (nonEmpty(crd.name) && nonEmpty(crd.namespace)) nsns.push(crd);
  if (Array.isArray(crd.objects)) for (const o of crd.objects) if (isObj(o)) nsns.push(o);
  for (const nsn of nsns) {
    const name = String(nsn.name ?? '');
    const ns = String(nsn.namespace ?? '');
    const key = `${kind}/${ns}/${name}`;
    if (objURLs.has(key)) continue;
    if (!OPERATOR_KINDS.has(kind)) throw new OperatorError(`unsupported kind=${JSON.stringify(kind)}`);
    const single = kind === VMSINGLE_KIND;
    if (!CLUSTER_KINDS[kind] && !single)
      throw new OperatorError(`cannot get object as url: the zone simulator models only VMCluster kinds and VMSingle, not kind=${JSON.stringify(kind)}`);
    const obj = (single ? objects.vmsingles : objects.vmclusters).find((c) => c.metadata?.name === name && c.metadata?.namespace === ns);
    if (!obj) {
      throw new OperatorError(
        `cannot find CRD link for kind=${JSON.stringify(kind)}: cannot find object by the given ref,namespace=${JSON.stringify(ns)},name=${JSON.stringify(name)}: ${single ? 'vmsingles' : 'vmclusters'}.operator.victoriametrics.com ${JSON.stringify(name)} not found`,
      );
    }
    objURLs.set(key, single ? vmsingleURL(obj) : vmclusterURL(obj, kind));
  }
}

/** addURLMapCommonToYaml */
function urlMapCommon(dst: Record<string, unknown>, ref: JsonObject, isDefaultRoute: boolean): void {
  const list = (k: string, out: string) => {
    const v = strList(ref[k]);
    if (v.length) dst[out] = v;
  };
  if (!isDefaultRoute) {
    list('src_query_args', 'src_query_args');
    list('src_headers', 'src_headers');
  }
  list('headers', 'headers');
  list('response_headers', 'response_headers');
  if (typeof ref.discover_backend_ips === 'boolean') dst.discover_backend_ips = ref.discover_backend_ips;
  if (Array.isArray(ref.retry_status_codes) && ref.retry_status_codes.length) dst.retry_status_codes = ref.retry_status_codes;
  if (nonEmpty(ref.load_balancing_policy)) dst.load_balancing_policy = ref.load_balancing_policy;
  if (typeof ref.drop_src_path_prefix_parts === 'number') dst.drop_src_path_prefix_parts = ref.drop_src_path_prefix_parts;
}

/** addUserConfigOptionToYaml (the options the simulator models). */
function userConfigOptions(dst: Record<string, unknown>, opt: JsonObject): void {
  const dflt = strList(opt.default_url);
  if (dflt.length) dst.default_url = dflt;
  const headers = strList(opt.headers);
  if (headers.length) dst.headers = headers;
  const rh = strList(opt.response_headers);
  if (rh.length) dst.response_headers = rh;
  if (typeof opt.discover_backend_ips === 'boolean') dst.discover_backend_ips = opt.discover_backend_ips;
  if (Array.isArray(opt.retry_status_codes) && opt.retry_status_codes.length) dst.retry_status_codes = opt.retry_status_codes;
  if (typeof opt.max_concurrent_requests === 'number') dst.max_concurrent_requests = opt.max_concurrent_requests;
  if (nonEmpty(opt.load_balancing_policy)) dst.load_balancing_policy = opt.load_balancing_policy;
  if (typeof opt.drop_src_path_prefix_parts === 'number') dst.drop_src_path_prefix_parts = opt.drop_src_path_prefix_parts;
  if (typeof opt.dump_request_on_errors === 'boolean') dst.dump_request_on_errors = opt.dump_request_on_errors;
}

/** genURLMaps: adds url_prefix (fast path) or url_map to `result`. */
export function genURLMaps(userName: string, refsIn: JsonValue | undefined, result: Record<string, unknown>, objURLs: Map<string, string>): void {
  const refs = Array.isArray(refsIn) ? refsIn.filter(isObj) : [];
  const handleRef = (ref: JsonObject): string[] => {
    const prefixes: string[] = [];
    const crd = ref.crd;
    const st = isObj(ref.static) ? ref.static : undefined;
    if (isObj(crd)) {
      const nsns: JsonObject[] = [];
      if (nonEmpty(crd.name) && nonEmpty(crd.namespace)) nsns.push(crd);
      if (Array.isArray(crd.objects)) for (const o of crd.objects) if (isObj(o)) nsns.push(o);
      for (const nsn of nsns) {
        const key = `${String(crd.kind ?? '')}/${String(nsn.namespace ?? '')}/${String(nsn.name ?? '')}`;
        const u = objURLs.get(key) ?? '';
        if (u === '') throw new OperatorError(`cannot find crdRef target: ${JSON.stringify(key)}, for user: ${userName}`);
        prefixes.push(u);
      }
    } else if (st && nonEmpty(st.url)) prefixes.push(st.url);
    else if (st && strList(st.urls).length) prefixes.push(...strList(st.urls));
    else throw new OperatorError(`static.url, static.urls and ref.crd cannot be empty for user: ${userName}`);
    return prefixes;
  };
  if (refs.length === 1 && strList(refs[0]!.paths).length < 2) {
    const paths = strList(refs[0]!.paths);
    const isDefault = paths.length === 0 || ['/', '/*', '/.*'].includes(paths[0]!);
    if (isDefault) {
      let prefixes: string[];
      try {
        prefixes = handleRef(refs[0]!);
      } catch (err) {
        throw new OperatorError(`cannot build urlPrefix for one ref: ${(err as Error).message}`);
      }
      result.url_prefix = prefixes;
      urlMapCommon(result, refs[0]!, true);
      return;
    }
  }
  const urlMaps: UrlMapEntry[] = [];
  for (const ref of refs) {
    if (ref.static === undefined && ref.crd === undefined) continue;
    const prefixes = handleRef(ref);
    let paths = strList(ref.paths);
    if (paths.length === 0) {
      const kind = isObj(ref.crd) ? String(ref.crd.kind ?? '') : '';
      if (kind === 'VMCluster/vminsert') paths = ['/insert/.*'];
      else if (kind === 'VMCluster/vmselect') paths = ['/select/.*', '/admin/.*'];
      else if (['VLCluster/vlinsert', 'VTCluster/vtinsert'].includes(kind)) paths = ['/insert/.*'];
      else if (['VLCluster/vlselect', 'VTCluster/vtselect'].includes(kind)) paths = ['/select/.*'];
      else paths = ['/.*'];
    } else if (paths.length === 1 && (paths[0] === '/' || paths[0] === '/*')) paths = ['/.*'];
    const e: UrlMapEntry = { url_prefix: prefixes, src_paths: paths };
    const hosts = strList(ref.hosts);
    if (hosts.length) e.src_hosts = hosts;
    if (typeof ref.discover_backend_ips === 'boolean') e.discover_backend_ips = ref.discover_backend_ips;
    if (strList(ref.src_headers).length) e.src_headers = strList(ref.src_headers);
    if (strList(ref.src_query_args).length) e.src_query_args = strList(ref.src_query_args);
    if (strList(ref.headers).length) e.headers = strList(ref.headers);
    if (strList(ref.response_headers).length) e.response_headers = strList(ref.response_headers);
    if (Array.isArray(ref.retry_status_codes) && ref.retry_status_codes.length) e.retry_status_codes = ref.retry_status_codes;
    if (typeof ref.drop_src_path_prefix_parts === 'number') e.drop_src_path_prefix_parts = ref.drop_src_path_prefix_parts;
    if (nonEmpty(ref.load_balancing_policy)) e.load_balancing_policy = ref.load_balancing_policy;
    urlMaps.push(e);
  }
  if (urlMaps.length === 0) throw new OperatorError('user must have at least 1 url target');
  result.url_map = urlMaps;
}

/** genUserCfg */
function genUserCfg(user: KubeObjectLike, objURLs: Map<string, string>): VmauthUser {
  const spec = user.spec ?? {};
  const r: Record<string, unknown> = {};
  try {
    genURLMaps(user.metadata?.name ?? '', spec.targetRefs, r, objURLs);
  } catch (err) {
    throw new OperatorError(`cannot generate urlMaps for user: ${(err as Error).message}`);
  }
  if (nonEmpty(spec.name)) r.name = spec.name;
  userConfigOptions(r, spec);
  if (isObj(spec.metric_labels) && Object.keys(spec.metric_labels).length) r.metric_labels = spec.metric_labels;
  if (nonEmpty(spec.bearerToken)) {
    r.bearer_token = spec.bearerToken;
    return r as VmauthUser;
  }
  r.username = nonEmpty(spec.username) ? spec.username : (user.metadata?.name ?? '');
  if (nonEmpty(spec.password)) r.password = spec.password;
  return r as VmauthUser;
}

/** The YAML the operator writes (yaml.v2 style: sequences not indented under their key). */
export function toOperatorYaml(config: VmauthConfig): string {
  return stringify(config, { indentSeq: false, lineWidth: 0 });
}

/**
 * CreateOrUpdateConfig's rendering: the config for one VMAuth and the VMUsers of its namespace,
 * with the VMClusters and VMSingles that exist (for crd refs).
 */
export function renderVmauthConfig(
  vmauth: KubeObjectLike,
  vmusers: KubeObjectLike[],
  vmclusters: KubeObjectLike[],
  vmsingles: KubeObjectLike[] = [],
): RenderResult {
  const objects: CrdObjects = { vmclusters, vmsingles };
  const selected = selectUsers(vmauth, vmusers);
  const userErrors: Record<string, string> = {};
  const objURLs = new Map<string, string>();
  const fail = (vmauthError: string): RenderResult => ({
    vmauthError,
    yaml: '',
    config: {},
    selectedUsers: selected.map((u) => u.metadata?.name ?? ''),
    userErrors,
  });
  // buildConfig: the unauthorizedUserAccessSpec's refs first (an error fails the VMAuth) ...
  const uua = isObj(vmauth.spec?.unauthorizedUserAccessSpec) ? vmauth.spec.unauthorizedUserAccessSpec : undefined;
  if (uua) {
    const refs = Array.isArray(uua.targetRefs) ? uua.targetRefs : [];
    for (let i = 0; i < refs.length; i++) {
      try {
        collectCrdURLs(isObj(refs[i]) ? (refs[i] as JsonObject).crd : undefined, objects, objURLs);
      } catch (err) {
        return fail(`failed to fetch spec.unauthorizedUserAccessSpec.targetRefs[${i}]: ${(err as Error).message}`);
      }
    }
  }
  // ... then each user's (an error skips that user: ForEachCollectSkipInvalid)
  let valid: KubeObjectLike[] = [];
  for (const u of selected) {
    const refs = Array.isArray(u.spec?.targetRefs) ? u.spec.targetRefs : [];
    try {
      for (let i = 0; i < refs.length; i++) {
        try {
          collectCrdURLs(isObj(refs[i]) ? (refs[i] as JsonObject).crd : undefined, objects, objURLs);
        } catch (err) {
          throw new OperatorError(`failed to fetch VMUser=${u.metadata?.namespace}/${u.metadata?.name} spec.targetRefs[${i}]: ${(err as Error).message}`);
        }
      }
      valid.push(u);
    } catch (err) {
      userErrors[u.metadata?.name ?? ''] = (err as Error).message;
    }
  }
  // generateConfig
  const users: VmauthUser[] = [];
  const stillValid: KubeObjectLike[] = [];
  for (const u of valid) {
    try {
      users.push(genUserCfg(u, objURLs));
      stillValid.push(u);
    } catch (err) {
      userErrors[u.metadata?.name ?? ''] = (err as Error).message;
    }
  }
  valid = stillValid;
  const config: VmauthConfig = {};
  if (users.length) config.users = users;
  if (uua) {
    const r: Record<string, unknown> = {};
    if (strList(uua.url_prefix).length) r.url_prefix = strList(uua.url_prefix);
    if (isObj(uua.metric_labels) && Object.keys(uua.metric_labels).length) r.metric_labels = uua.metric_labels;
    if (Object.keys(r).length === 0) {
      try {
        genURLMaps('unauthorized_user', uua.targetRefs, r, objURLs);
      } catch (err) {
        return fail(`cannot build unauthorized_user config section: cannot generate urlMaps for user: ${(err as Error).message}`);
      }
    }
    userConfigOptions(r, uua);
    if (Object.keys(r).length) config.unauthorized_user = r as VmauthConfig['unauthorized_user'];
  }
  return { yaml: toOperatorYaml(config), config, selectedUsers: selected.map((u) => u.metadata?.name ?? ''), userErrors };
}

/** build.GzipConfig (the bytes of data key `config.yaml.gz`). Deterministic: mtime 0. */
export function gzipConfig(yamlText: string): Buffer {
  return zlib.gzipSync(Buffer.from(yamlText, 'utf8'));
}

/** CRC32-IEEE of the gzipped Secret bytes (reconcile.HashBytes; what a config-reloader publishes), unsigned. */
export function configHash(gz: Buffer): number {
  return zlib.crc32(gz) >>> 0;
}

/** The URL lists of a route (a user or unauthorized_user): fast-path url_prefix or every url_map entry. */
export function routeURLs(route: { url_prefix?: unknown; url_map?: unknown } | undefined): string[] {
  if (!route) return [];
  const out: string[] = [];
  const add = (v: unknown) => {
    for (const u of Array.isArray(v) ? v : typeof v === 'string' ? [v] : []) if (typeof u === 'string' && !out.includes(u)) out.push(u);
  };
  add(route.url_prefix);
  if (Array.isArray(route.url_map)) for (const e of route.url_map) if (isObj(e)) add(e.url_prefix);
  return out;
}

/** The key of a user route: `user:<name | bearer_token | username>`. */
export function userRouteKey(u: VmauthUser): string {
  return `user:${u.name ?? u.bearer_token ?? u.username ?? '?'}`;
}

/** Route name → zone names (VMCluster or VMSingle names) a rendered config sends reads to. Routes: `unauthorized`, `user:<name|token|username>`. */
export function routedZones(config: VmauthConfig, zones: ZoneBackend[]): Record<string, string[]> {
  const zonesOf = (route: { url_prefix?: unknown; url_map?: unknown }) => {
    const urls = new Set(routeURLs(route));
    return zones.filter((z) => urls.has(z.url)).map((z) => z.name);
  };
  const out: Record<string, string[]> = {};
  if (config.unauthorized_user) out.unauthorized = zonesOf(config.unauthorized_user);
  for (const u of config.users ?? []) out[userRouteKey(u)] = zonesOf(u);
  return out;
}

/**
 * Zones missing from a rendered config compared with a baseline (normally the first rendered
 * config): a zone is out of read rotation when some route that reached it in the baseline no
 * longer does.
 */
export function zonesOutOfRotation(baseline: Record<string, string[]>, current: Record<string, string[]>): string[] {
  const out = new Set<string>();
  for (const [route, zs] of Object.entries(baseline)) {
    const now = new Set(current[route] ?? []);
    for (const z of zs) if (!now.has(z)) out.add(z);
  }
  return [...out].sort();
}

/**
 * The config-reloader stand-in's one substitution (cluster DNS): every URL whose origin is a key
 * of `dns` (e.g. `http://vmselect-vm-az-a.ns.svc:8481`) is rewritten to the mapped origin (the
 * zone's loopback vmselect front), keeping the path. Applied to the parsed YAML.
 */
export function resolveServiceURLs(config: unknown, dns: Record<string, string>): unknown {
  const fix = (u: string) => {
    for (const [from, to] of Object.entries(dns)) if (u === from || u.startsWith(`${from}/`)) return to + u.slice(from.length);
    return u;
  };
  const walk = (v: unknown, key?: string): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x, key));
    if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    if (typeof v === 'string' && (key === 'url_prefix' || key === 'default_url')) return fix(v);
    return v;
  };
  return walk(config);
}
