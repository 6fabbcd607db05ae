/**
 * The kube-apiserver's audit log (test/infra/harness/kube.ts `startKube({ audit: true })`: JSON lines, one
 * audit.k8s.io/v1 Event per line) as typed events: what the API server really received and
 * answered, whoever sent it. Only the ResponseComplete stage is kept (one event per request that
 * got an answer). `readAuditLog` reads the whole file once; `followAuditLog` tails it during a run.
 */
import * as fs from 'node:fs';
import type { JsonObject, JsonValue } from '../../../api/types';

export interface AuditEvent {
  /** Position in the log (0-based, over the ResponseComplete events kept): the order the API server wrote them. */
  seq: number;
  /** stageTimestamp (the answer), ms since the epoch. */
  at: number;
  /** requestReceivedTimestamp, ms since the epoch. */
  receivedAt: number;
  auditID: string;
  /** user.username, e.g. `system:serviceaccount:<ns>:<sa>` or `admin`. */
  user: string;
  /** create, update, patch, delete, deletecollection, get, list, watch, ... */
  verb: string;
  /** objectRef.apiGroup ('' for the core group). */
  group: string;
  /** objectRef.apiVersion. */
  version: string;
  /** objectRef.resource (plural), e.g. `vmclusters`. */
  resource: string;
  /** objectRef.subresource, e.g. `status` ('' when none). */
  subresource: string;
  namespace: string;
  /** objectRef.name ('' for a create whose name the server has not resolved, or a collection). */
  name: string;
  /** responseStatus.code (0 when the log has none). */
  code: number;
  requestURI: string;
  /** The request was a dry run (`dryRun=All`): nothing was persisted. */
  dryRun: boolean;
  userAgent?: string;
  /** The request body (a patch: the patch document as sent) at level Request/RequestResponse. */
  requestObject?: JsonValue;
  /** The response body (e.g. the object as stored after the write) at level RequestResponse. */
  responseObject?: JsonObject;
  /** The status message of a failed request. */
  message?: string;
}

/** The raw audit.k8s.io/v1 Event fields this module reads. */
interface RawEvent {
  kind?: string;
  stage?: string;
  auditID?: string;
  requestURI?: string;
  verb?: string;
  user?: { username?: string };
  userAgent?: string;
  objectRef?: { resource?: string; namespace?: string; name?: string; apiGroup?: string; apiVersion?: string; subresource?: string };
  responseStatus?: { code?: number; message?: string };
  requestObject?: JsonValue;
  responseObject?: JsonValue;
  requestReceivedTimestamp?: string;
  stageTimestamp?: string;
}

/** RFC 3339 with up to nanoseconds (the API server writes microseconds) → ms since the epoch. */
export function parseAuditTime(t: string | undefined): number {
  if (!t) return NaN;
  return Date.parse(t.replace(/(\.\d{3})\d+/, '$1'));
}

const isObject = (v: unknown): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v);

function isDryRun(uri: string): boolean {
  const q = uri.indexOf('?');
  if (q < 0) return false;
  return new URLSearchParams(uri.slice(q + 1)).getAll('dryRun').some((v) => v !== '');
}

/**
 * One log line → an event, or undefined for a line that is not a ResponseComplete audit event
 * (other stages, a blank line). A line that is not JSON throws (the log is written whole lines at a
 * time; a caller tailing the file only hands over complete lines).
 */
export function parseAuditLine(line: string, seq: number): AuditEvent | undefined {
  if (line.trim() === '') return undefined;
  const raw = JSON.parse(line) as RawEvent;
  if (raw.kind !== 'Event' || raw.stage !== 'ResponseComplete') return undefined;
  const ref = raw.objectRef ?? {};
  const uri = raw.requestURI ?? '';
  return {
    seq,
    at: parseAuditTime(raw.stageTimestamp),
    receivedAt: parseAuditTime(raw.requestReceivedTimestamp),
    auditID: raw.auditID ?? '',
    user: raw.user?.username ?? '',
    verb: raw.verb ?? '',
    group: ref.apiGroup ?? '',
    version: ref.apiVersion ?? '',
    resource: ref.resource ?? '',
    subresource: ref.subresource ?? '',
    namespace: ref.namespace ?? '',
    name:
      ref.name ??
      (isObject(raw.responseObject) && isObject(raw.responseObject.metadata) && typeof raw.responseObject.metadata.name === 'string'
        ? raw.responseObject.metadata.name
        : ''),
    code: raw.responseStatus?.code ?? 0,
    requestURI: uri,
    dryRun: isDryRun(uri),
    ...(raw.userAgent !== undefined ? { userAgent: raw.userAgent } : {}),
    ...(raw.requestObject !== undefined ? { requestObject: raw.requestObject } : {}),
    ...(isObject(raw.responseObject) ? { responseObject: raw.responseObject } : {}),
    ...(raw.responseStatus?.message !== undefined ? { message: raw.responseStatus.message } : {}),
  };
}

/** Parses complete lines (the text ends with a newline, or the last line is whole). */
export function parseAuditLog(text: string, firstSeq = 0): AuditEvent[] {
  const out: AuditEvent[] = [];
  for (const line of text.split('\n')) {
    const e = parseAuditLine(line, firstSeq + out.length);
    if (e) out.push(e);
  }
  return out;
}

/** What `open` returns, or undefined when its file does not exist (yet). */
function ifExists<T>(open: () => T): T | undefined {
  try {
    return open();
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Every ResponseComplete event of the log at `path` (a missing file: none). */
export function readAuditLog(path: string): AuditEvent[] {
  const text = ifExists(() => fs.readFileSync(path, 'utf8'));
  if (text === undefined) return [];
  // A line being written right now has no newline yet: leave it out.
  const end = text.lastIndexOf('\n');
  return parseAuditLog(end < 0 ? '' : text.slice(0, end + 1));
}

export interface AuditFollower {
  /** Every event read so far, in log order. */
  readonly events: AuditEvent[];
  /** Reads what was appended since the last poll (also done every `intervalMs`); returns the new events. */
  poll(): AuditEvent[];
  /** Resolves with the first event (read so far or later) that `match` accepts; rejects after `timeoutMs`. */
  waitFor(match: (e: AuditEvent) => boolean, timeoutMs?: number): Promise<AuditEvent>;
  /** Stops polling after a last poll; returns every event. */
  stop(): AuditEvent[];
}

/**
 * Tails the audit log at `path` (it may not exist yet): polls every `intervalMs` for appended bytes,
 * keeps a partial last line until its newline arrives, calls `onEvent` for each new event.
 */
export function followAuditLog(path: string, opts: { intervalMs?: number; onEvent?: (e: AuditEvent) => void } = {}): AuditFollower {
  const events: AuditEvent[] = [];
  let offset = 0;
  let partial = Buffer.alloc(0);
  let stopped = false;
  const poll = (): AuditEvent[] => {
    const fd = ifExists(() => fs.openSync(path, 'r'));
    if (fd === undefined) return [];
    const fresh: AuditEvent[] = [];
    try {
      const size = fs.fstatSync(fd).size;
      if (size <= offset) return [];
      const buf = Buffer.alloc(size - offset);
      const n = fs.readSync(fd, buf, 0, buf.length, offset);
      offset += n;
      const data = Buffer.concat([partial, buf.subarray(0, n)]);
      const end = data.lastIndexOf(0x0a);
      partial = end < 0 ? data : data.subarray(end + 1);
      if (end < 0) return [];
      for (const line of data.subarray(0, end).toString('utf8').split('\n')) {
        const e = parseAuditLine(line, events.length);
        if (!e) continue;
        events.push(e);
        fresh.push(e);
        opts.onEvent?.(e);
      }
    } finally {
      fs.closeSync(fd);
    }
    return fresh;
  };
  const timer = setInterval(() => {
    if (!stopped) poll();
  }, opts.intervalMs ?? 100);
  timer.unref();
  return {
    events,
    poll,
    async waitFor(match, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        poll();
        const found = events.find(match);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no matching audit event in ${timeoutMs} ms (${events.length} events read from ${path})`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop() {
      if (!stopped) {
        poll();
        stopped = true;
        clearInterval(timer);
      }
      return events;
    },
  };
}

/** Whether the request was accepted (2xx). */
export const succeeded = (e: AuditEvent): boolean => e.code >= 200 && e.code < 300;

/** A write verb (create, update, patch, delete, deletecollection). */
export const isWrite = (e: AuditEvent): boolean => ['create', 'update', 'patch', 'delete', 'deletecollection'].includes(e.verb);

/** metadata.generation of the response object (undefined when none). */
export function responseGeneration(e: AuditEvent): number | undefined {
  const md = e.responseObject?.metadata;
  return isObject(md) && typeof md.generation === 'number' ? md.generation : undefined;
}

/** `followAuditLog` under the short name the campaign uses. */
export const follow = followAuditLog;
