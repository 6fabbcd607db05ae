// Which entry of a VMAgent's spec.remoteWrite[] is a zone's, and the name vmagent gives that
// entry's persistent queue. Pure (apart from the lazily loaded xxhash wasm module).
//
// vmagent facts (app/vmagent/remotewrite/remotewrite.go, v1.150):
//   sanitizedURL := fmt.Sprintf("%d:secret-url", i+1)            // default
//   if *showRemoteWriteURL { sanitizedURL = fmt.Sprintf("%d:%s", i+1, remoteWriteURL) }
//   pqURL := *remoteWriteURL; pqURL.RawQuery = ""; pqURL.Fragment = ""
//   h := xxhash.Sum64([]byte(pqURL.String()))
//   queuePath := filepath.Join(*tmpDataPath, "persistent-queue", fmt.Sprintf("%d_%016X", argIdx+1, h))
//   vmagent_remotewrite_pending_data_bytes{path=queuePath, url=sanitizedURL}   (memory + disk)
//   vm_persistentqueue_bytes_pending{path=queuePath, name=sanitizedURL}        (disk only; `name` since v1.149)
// vmagent prints these as registered, with a blank after the comma: {path="…", url="1:secret-url"}.
// Verified against a real v1.150.0 vmagent (test/fixtures/vmagent).
// The VM operator passes spec.remoteWrite[i].url as the i-th -remoteWrite.url flag.
import xxhash from 'xxhash-wasm';
import type { XXHashAPI } from 'xxhash-wasm';
import { normalizeURL, redactURL } from '../../api/url';
import { refOf, writeServiceName, type StorageRef } from '../../api/storage';

let hasher: Promise<XXHashAPI> | undefined;
function getHasher(): Promise<XXHashAPI> {
  hasher ??= xxhash();
  return hasher;
}

/** XXH64 (seed 0) of the UTF-8 bytes of `s`, as 16 upper-case hex digits (Go's `%016X`). */
export async function xxh64Hex(s: string): Promise<string> {
  const h = await getHasher();
  return h.h64Raw(new TextEncoder().encode(s)).toString(16).toUpperCase().padStart(16, '0');
}

/**
 * The string vmagent hashes for the queue directory: the URL as Go's url.URL.String() prints it
 * after clearing RawQuery and Fragment. Go lowercases the scheme, drops `#fragment`, drops a
 * non-empty `?query`, and keeps a bare trailing `?` (ForceQuery). Everything else of a parseable
 * URL is printed as written.
 */
export function urlForQueueHash(rawURL: string): string {
  let u = rawURL;
  const hash = u.indexOf('#');
  if (hash >= 0) u = u.slice(0, hash);
  const q = u.indexOf('?');
  if (q >= 0 && q < u.length - 1) u = u.slice(0, q); // non-empty query: dropped; bare "?" is kept
  const schemeEnd = u.indexOf('://');
  if (schemeEnd > 0) u = u.slice(0, schemeEnd).toLowerCase() + u.slice(schemeEnd);
  return u;
}

/** The persistent queue directory name of remote write entry `index` (0-based): `<index+1>_<XXH64>`. */
export async function queueDirName(index: number, url: string): Promise<string> {
  return `${index + 1}_${await xxh64Hex(urlForQueueHash(url))}`;
}

export interface RemoteWriteQueue {
  /** 0-based position in spec.remoteWrite (= vmagent's argIdx). */
  index: number;
  url: string;
  /** `<index+1>_<XXH64>`: the last path element of the queue's `path` label. */
  dirName: string;
}

export interface ZoneRemoteWriteTarget {
  namespace: string;
  vmclusterName: string;
  storageKind?: 'VMSingle';
  remoteWriteURL?: string;
}

/** Host (without port) of a URL, lower-cased, or undefined when it cannot be parsed. */
function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * True when `host` is the service taking the zone's writes (a VMCluster's vminsert, a VMSingle):
 * `vminsert-<name>` (`vmsingle-<name>`) bare, or qualified with the namespace: `.<ns>`, `.<ns>.svc`,
 * `.<ns>.svc.<cluster domain>` (any port).
 */
export function isWriteHost(host: string, ref: StorageRef): boolean {
  const svc = writeServiceName(ref).toLowerCase();
  const h = host.toLowerCase().replace(/\.$/, '');
  if (h === svc) return true;
  const ns = ref.namespace.toLowerCase();
  return h === `${svc}.${ns}` || h === `${svc}.${ns}.svc` || h.startsWith(`${svc}.${ns}.svc.`);
}

export type FindQueuesResult = { ok: true; queues: RemoteWriteQueue[] } | { ok: false; message: string };

/**
 * The zone's entries of spec.remoteWrite: those whose `url` equals `remoteWriteURL` when it is
 * given, else those whose host is the zone's vminsert service. Usually one; several entries for one
 * zone (e.g. two tenants) are all the zone's backlog, so all are returned.
 */
export async function findZoneQueues(remoteWrite: unknown, target: ZoneRemoteWriteTarget): Promise<FindQueuesResult> {
  if (!Array.isArray(remoteWrite) || remoteWrite.length === 0) {
    return { ok: false, message: 'VMAgent has no spec.remoteWrite entries' };
  }
  const targetRef = refOf(target.namespace, { vmcluster: target.vmclusterName, ...(target.storageKind ? { storageKind: target.storageKind } : {}) });
  const matches: RemoteWriteQueue[] = [];
  for (let i = 0; i < remoteWrite.length; i++) {
    const entry = remoteWrite[i] as { url?: unknown } | null;
    const url = typeof entry?.url === 'string' ? entry.url : undefined;
    if (!url) continue;
    const isZone = target.remoteWriteURL
      ? normalizeURL(url) === normalizeURL(target.remoteWriteURL)
      : (() => {
          const host = hostOf(url);
          return host !== undefined && isWriteHost(host, targetRef);
        })();
    if (isZone) matches.push({ index: i, url, dirName: await queueDirName(i, url) });
  }
  if (matches.length === 0) {
    const want = target.remoteWriteURL
      ? `url ${JSON.stringify(redactURL(target.remoteWriteURL))}`
      : `host ${writeServiceName(targetRef)} (bare or .${target.namespace}[.svc[.<domain>]])`;
    return { ok: false, message: `no VMAgent spec.remoteWrite entry with ${want}` };
  }
  return { ok: true, queues: matches };
}
