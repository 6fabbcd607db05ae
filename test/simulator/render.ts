/**
 * ZONE SIMULATOR — plays the VictoriaMetrics operator's contract in tests and `make demo`.
 * It is NOT the VM operator: it only does what vmrollout relies on the operator to do.
 *
 * This module is the pure part: it renders the real vmauth `-auth.config` from VMAuth and
 * VMUser objects, the way the operator turns `targetRefs` into `url_map` entries, and tells
 * which zones a rendered config routes reads to (for the invariant checks of the tests).
 *
 * Mapping (test stand-in for the operator's service discovery):
 *   targetRef.crd {kind: 'VMCluster/vmselect', name, namespace}            → that zone's URL
 *   targetRef.crd {kind: 'VMCluster/vmselect', objects: [{name, namespace}]} → each zone's URL
 *   targetRef.static {url | urls}                                           → as written
 * Each zone is one real VictoriaMetrics single-node process (its HTTP API serves the vmselect
 * query paths at the root). A targetRef becomes one url_map entry; several URLs in
 * `url_prefix` make vmauth load-balance across them.
 */
import type { JsonObject, JsonValue } from '../../api/types';

export const VMSELECT_KIND = 'VMCluster/vmselect';

/** Read paths routed when a targetRef gives no `paths` (the vmselect query API). */
export const DEFAULT_SELECT_PATHS = [
  '/api/v1/query.*',
  '/api/v1/series',
  '/api/v1/labels',
  '/api/v1/label/.+/values',
  '/api/v1/status/.*',
  '/api/v1/export.*',
];

/** A zone: the VMCluster (namespace/name) and the base URL of the process standing in for its vmselect. */
export interface ZoneBackend {
  namespace: string;
  name: string;
  url: string;
}

export interface KubeObjectLike {
  metadata?: { name?: string; namespace?: string; generation?: number };
  spec?: JsonObject;
}

export interface UrlMapEntry {
  src_paths: string[];
  url_prefix: string[];
  load_balancing_policy?: string;
  retry_status_codes?: number[];
  drop_src_path_prefix_parts?: number;
}

export interface VmauthUser {
  username?: string;
  password?: string;
  bearer_token?: string;
  url_map: UrlMapEntry[];
}

export interface VmauthConfig {
  unauthorized_user?: { url_map: UrlMapEntry[] };
  users?: VmauthUser[];
}

export interface RenderResult {
  config: VmauthConfig;
  /** Problems the operator would report (unknown VMCluster, targetRef without backend...). */
  warnings: string[];
}

const isObj = (v: JsonValue | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: JsonValue | undefined): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Backend URLs of one targetRef (in order, de-duplicated). */
export function targetRefUrls(tr: JsonObject, defaultNamespace: string, zones: ZoneBackend[], warnings: string[], where: string): string[] {
  const urls: string[] = [];
  const add = (u: string) => {
    if (!urls.includes(u)) urls.push(u);
  };
  const crd = tr.crd;
  if (isObj(crd)) {
    if (crd.kind !== VMSELECT_KIND) {
      warnings.push(`${where}: crd.kind ${JSON.stringify(crd.kind)} is not routed by the simulator (only ${VMSELECT_KIND})`);
    } else {
      const refs: JsonObject[] = [];
      if (str(crd.name)) refs.push(crd);
      if (Array.isArray(crd.objects)) for (const o of crd.objects) if (isObj(o)) refs.push(o);
      for (const ref of refs) {
        const name = str(ref.name);
        const ns = str(ref.namespace) ?? str(crd.namespace) ?? defaultNamespace;
        const zone = zones.find((z) => z.name === name && z.namespace === ns);
        if (zone) add(zone.url);
        else warnings.push(`${where}: VMCluster ${ns}/${name} has no zone process`);
      }
    }
  }
  const st = tr.static;
  if (isObj(st)) {
    if (str(st.url)) add(st.url as string);
    if (Array.isArray(st.urls)) for (const u of st.urls) if (str(u)) add(u as string);
  }
  return urls;
}

/** url_map of a list of targetRefs: one entry per targetRef that has at least one backend. */
export function renderUrlMap(targetRefs: JsonValue | undefined, defaultNamespace: string, zones: ZoneBackend[], warnings: string[], where: string): UrlMapEntry[] {
  const out: UrlMapEntry[] = [];
  if (!Array.isArray(targetRefs)) return out;
  targetRefs.forEach((tr, i) => {
    if (!isObj(tr)) return;
    const w = `${where}.targetRefs[${i}]`;
    const urls = targetRefUrls(tr, defaultNamespace, zones, warnings, w);
    if (urls.length === 0) {
      warnings.push(`${w}: no backend, not rendered`);
      return;
    }
    const paths = Array.isArray(tr.paths) ? tr.paths.filter((p): p is string => typeof p === 'string') : [];
    const e: UrlMapEntry = { src_paths: paths.length ? paths : [...DEFAULT_SELECT_PATHS], url_prefix: urls };
    if (str(tr.load_balancing_policy)) e.load_balancing_policy = tr.load_balancing_policy as string;
    if (Array.isArray(tr.retry_status_codes)) e.retry_status_codes = tr.retry_status_codes.filter((c): c is number => typeof c === 'number');
    if (typeof tr.drop_src_path_prefix_parts === 'number') e.drop_src_path_prefix_parts = tr.drop_src_path_prefix_parts;
    out.push(e);
  });
  return out;
}

/**
 * The vmauth config for one VMAuth and the VMUsers it selects (the simulator selects every
 * VMUser of the namespace, like the operator's `selectAllByDefault`). VMUser credentials:
 * `spec.bearerToken`, else `spec.username` (default: the object name) + `spec.password`.
 */
export function renderVmauthConfig(vmauth: KubeObjectLike, vmusers: KubeObjectLike[], zones: ZoneBackend[]): RenderResult {
  const warnings: string[] = [];
  const ns = vmauth.metadata?.namespace ?? 'default';
  const config: VmauthConfig = {};
  const ua = vmauth.spec?.unauthorizedUserAccessSpec;
  if (isObj(ua)) {
    const urlMap = renderUrlMap(ua.targetRefs, ns, zones, warnings, `VMAuth ${vmauth.metadata?.name}.spec.unauthorizedUserAccessSpec`);
    if (urlMap.length) config.unauthorized_user = { url_map: urlMap };
  }
  const users: VmauthUser[] = [];
  for (const u of [...vmusers].sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''))) {
    const name = u.metadata?.name ?? '';
    const urlMap = renderUrlMap(u.spec?.targetRefs, u.metadata?.namespace ?? ns, zones, warnings, `VMUser ${name}.spec`);
    if (!urlMap.length) continue;
    const user: VmauthUser = { url_map: urlMap };
    if (str(u.spec?.bearerToken)) user.bearer_token = u.spec!.bearerToken as string;
    else {
      user.username = str(u.spec?.username) ?? name;
      if (str(u.spec?.password)) user.password = u.spec!.password as string;
    }
    users.push(user);
  }
  if (users.length) config.users = users;
  return { config, warnings };
}

/** Route name → zone names (VMCluster names) a rendered config sends reads to. Routes: `unauthorized`, `user:<username|token>`. */
export function routedZones(config: VmauthConfig, zones: ZoneBackend[]): Record<string, string[]> {
  const zonesOf = (urlMap: UrlMapEntry[]) => {
    const urls = new Set(urlMap.flatMap((e) => e.url_prefix));
    return zones.filter((z) => urls.has(z.url)).map((z) => z.name);
  };
  const out: Record<string, string[]> = {};
  if (config.unauthorized_user) out.unauthorized = zonesOf(config.unauthorized_user.url_map);
  for (const u of config.users ?? []) out[`user:${u.username ?? u.bearer_token ?? '?'}`] = zonesOf(u.url_map);
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
