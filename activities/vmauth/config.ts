// What the VictoriaMetrics operator wrote for a VMAuth, read back: the gzipped config in its Secret,
// decoded, and whether each managed route of it still sends reads to a zone's vmselect. Pure.
//
// Modelled on the operator v0.74.x (VictoriaMetrics/operator):
//  - internal/controller/operator/factory/vmauth/vmauth.go: the config goes, gzipped, into Secret
//    `vmauth-config-<name>` (VMAuth.ConfigSecretName) under `config.yaml.gz`; with
//    spec.waitForConfigReload the operator compares each pod's config-reloader hash with
//    crc32.ChecksumIEEE of exactly those gzipped bytes.
//  - .../vmauth/vmusers_config.go: the VMAuth's unauthorizedUserAccessSpec becomes
//    `unauthorized_user`; each VMUser one entry of `users` (genUserCfg: `name` when spec.name is set,
//    then `bearer_token`, or `username` = spec.username or the object's name); a route's URLs are in
//    `url_prefix` (a string or a list) or in `url_map[].url_prefix`.
//  - api/operator/v1beta1/vmcluster_types.go (AsURL): a VMCluster's vmselect is
//    `<proto>://vmselect-<name>.<namespace>.svc:<port>`, or its additional service's name;
//    vmsingle_types.go (AsURL): a VMSingle is `<proto>://vmsingle-<name>.<namespace>.svc:<port>`.
import { crc32, gunzipSync } from 'node:zlib';
import { parse as parseYaml } from 'yaml';
import { redactSecrets } from '../../api/redact';
import type { RouteRef } from '../../api/route-records';
import { kindOf, readServiceName, STORAGE, type StorageRef } from '../../api/storage';
import type { JsonObject } from '../../api/types';
import type { Workload } from '../pods/pod-identity';

export const VMAUTH_CONFIG_KEY = 'config.yaml.gz';
/** The operator's build.ConfigReloaderDefaultPort: the config-reloader sidecar's /metrics. */
export const CONFIG_RELOADER_PORT = 8435;
export const CONTENT_HASH_METRIC = 'configreloader_reload_content_hash';
export const RELOAD_OK_METRIC = 'vmauth_config_last_reload_successful';
export const RELOAD_TIME_METRIC = 'vmauth_config_last_reload_success_timestamp_seconds';

export const configSecretName = (vmauth: string): string => `vmauth-config-${vmauth}`;
export const vmauthServiceName = (vmauth: string): string => `vmauth-${vmauth}`;
/** The operator's Deployment of a VMAuth (factory/vmauth/vmauth.go: PrefixedName()). */
export const vmauthWorkloads = (vmauth: string): Workload[] => [{ kind: 'Deployment', name: vmauthServiceName(vmauth) }];
/**
 * The operator's workload behind a zone's read service: a VMCluster's vmselect StatefulSet
 * (factory/vmcluster: PrefixedName(ClusterComponentSelect)), a VMSingle's Deployment (factory/vmsingle).
 */
export const readWorkloads = (ref: Pick<StorageRef, 'kind' | 'name'>): Workload[] => [{ kind: STORAGE[kindOf(ref)].readWorkload, name: readServiceName(ref) }];

/** The hash a config-reloader reports for this Secret content (CRC32 IEEE of the gzipped bytes). */
export const contentHash = (gzipped: Uint8Array): number => crc32(gzipped);

export class ConfigUnreadableError extends Error {
  override name = 'ConfigUnreadableError';
}

/**
 * The largest config read, decompressed. Anyone who can write the Secret can put a gzip bomb there
 * (1 MiB of gzip is 1 GiB of text); decompression stops at this many bytes, so no more is ever
 * allocated. 16 MiB of YAML is ~100,000 users (and ~20 s of parsing).
 */
export const MAX_CONFIG_BYTES = 16 * 1024 * 1024;

/**
 * The operator marshals its config with Go's yaml, which never writes an anchor: an alias in the
 * Secret was written by someone else, and each one repeats a whole subtree (50 uses of an 800 KiB
 * list of 20,000 URLs are a million URLs to walk; the yaml package's default bound lets them
 * through). So no alias is resolved.
 */
const MAX_ALIAS_COUNT = 0;

/**
 * A YAML error as it may be shown in status: where it is, without the excerpt of the config the yaml
 * library appends (the excerpt is a line of a Secret: bearer tokens, passwords); what the message
 * itself quotes of the config is redacted.
 */
function yamlErrorMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return redactSecrets(message.split(':\n', 1)[0] ?? '');
}

/** The gzipped config as the operator wrote it → its YAML document (throws ConfigUnreadableError). */
export function decodeConfig(gzipped: Uint8Array): JsonObject {
  let text: string;
  try {
    text = gunzipSync(gzipped, { maxOutputLength: MAX_CONFIG_BYTES }).toString('utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new ConfigUnreadableError(`larger than ${MAX_CONFIG_BYTES} bytes decompressed (a gzip bomb?): not read further`);
    }
    throw new ConfigUnreadableError(`not a gzipped YAML document: ${err instanceof Error ? err.message : String(err)}`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    throw new ConfigUnreadableError(`not a gzipped YAML document: ${yamlErrorMessage(err)}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new ConfigUnreadableError('the document is not a mapping');
  return doc as JsonObject;
}

/** How the operator names a VMUser's entry of `users` (genUserCfg): the first of these it writes. */
export type UserIdentity = { name: string } | { bearerToken: string } | { username: string };

/**
 * Pure: the identity of a VMUser's config entry, from its spec and object name; undefined when only
 * a Secret or a JWT names it (tokenRef, jwt): that entry is then not looked up in the config.
 */
export function userIdentity(objectName: string, spec: JsonObject | undefined): UserIdentity | undefined {
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const name = str(spec?.name);
  if (name) return { name };
  const bearerToken = str(spec?.bearerToken);
  if (bearerToken) return { bearerToken };
  if (spec?.tokenRef || spec?.jwt) return undefined;
  return { username: str(spec?.username) ?? objectName };
}

const asObject = (v: unknown): JsonObject | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as JsonObject) : undefined);

/** The config section of one user: by name first, then bearer token, then username (as genUserCfg writes them). */
export function findUserSection(config: JsonObject, id: UserIdentity): JsonObject | undefined {
  const users = Array.isArray(config.users) ? config.users.map(asObject).filter((u): u is JsonObject => !!u) : [];
  if ('name' in id) return users.find((u) => u.name === id.name);
  if ('bearerToken' in id) return users.find((u) => u.bearer_token === id.bearerToken);
  return users.find((u) => u.username === id.username && u.name === undefined);
}

/** Every URL a section sends requests to (`url_prefix` and `url_map[].url_prefix`, strings or lists). */
export function sectionURLs(section: JsonObject): string[] {
  const urls = (v: unknown): string[] => (typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((u): u is string => typeof u === 'string') : []);
  const out = urls(section.url_prefix);
  if (Array.isArray(section.url_map)) for (const m of section.url_map) out.push(...urls(asObject(m)?.url_prefix));
  return out;
}

/** The hosts the operator writes for a zone's reads (AsURL): its vmselect's or VMSingle's service, or its additional service. */
export function readHosts(ref: StorageRef): string[] {
  const svc = readServiceName(ref);
  return [svc, `${svc}-additional-service`].map((s) => `${s}.${ref.namespace}.svc`);
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** Whether a section routes to one of `hosts` (a missing section routes nowhere). */
export function routesTo(section: JsonObject | undefined, hosts: readonly string[]): boolean {
  if (!section) return false;
  return sectionURLs(section).some((u) => {
    const h = hostOf(u);
    return !!h && hosts.some((x) => h === x || h === `${x}.cluster.local`);
  });
}

/** A managed route and how to find its section of the config. */
export interface ManagedRoute {
  route: RouteRef;
  /** VMUser routes: how the operator names its entry (undefined: it cannot be found, see userIdentity). */
  identity?: UserIdentity;
}

export const routeLabel = (r: RouteRef): string => `${r.kind} ${r.name}`;

/**
 * Pure: the routes of `routes` whose section of `config` does not yet say what we wait for: the zone
 * `absent` (no URL of its vmselect) or `present` again. VMUsers without an identity are left out
 * (their switch rests on their status and the pods' content hash).
 */
export function routesNotSwitched(config: JsonObject, routes: readonly ManagedRoute[], hosts: readonly string[], expect: 'absent' | 'present'): RouteRef[] {
  return routes
    .filter(({ route, identity }) => {
      if (route.kind === 'VMUser' && !identity) return false;
      const section = route.kind === 'VMAuth' ? asObject(config.unauthorized_user) : findUserSection(config, identity!);
      return routesTo(section, hosts) !== (expect === 'present');
    })
    .map((r) => r.route);
}
