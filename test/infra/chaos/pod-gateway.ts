/**
 * The pod network for CHILD processes (the real worker run as its own process, chaos campaign).
 *
 * In the test process, pod addresses (TEST-NET-2 198.51.100.x, then 198.18.0.0/15: isPodAddress) are mapped to 127.0.0.1 by
 * podNetworkFetch through a dynamic registry (test/infra/harness/pod-network.ts). A child process cannot
 * see that registry, so its fetch (pod-network-preload.cjs, preloaded with `node --require`) sends
 * every pod request to this gateway, an HTTP server on 127.0.0.1 in the TEST process, which maps
 * the pod address with the same registry (podToLoopback) at the time of the request: a pod that
 * restarts on another loopback port, or is gone, is seen by the child at once.
 *
 * Protocol (path prefix): the child asks `http://127.0.0.1:<gw>/<podIP>:<podPort><path+query>`
 * for `http://<podIP>:<podPort><path+query>` (gatewayUrlFor). Method, headers (Host rewritten to
 * `<podIP>:<podPort>`) and body are forwarded; the answer is streamed back as it comes.
 *
 * A pod address with nothing registered, an upstream that refuses the connection, or a malformed
 * target: the gateway DESTROYS the client's socket without an answer, so the child's fetch throws
 * (`TypeError: fetch failed`, cause "other side closed"), as a refused connection makes it throw.
 *
 * Seeded faults (`faults`), only for requests `eligible(target, path)` (default: a path ending in
 * /metrics; narrow it to the vmagent's pod target with metricsOf()):
 *  - `timeout`: no answer; the socket is held `timeoutHoldMs` (default 15 s), then destroyed.
 *  - `truncated`: forwarded (asking the upstream for an uncompressed body), the body cut at 30–70 %
 *    of its length and the response ENDED cleanly (chunked, no Content-Length): the child reads a
 *    200 with a shorter page, whose last line may be cut mid-sample.
 *  - `garbage`: a 200 with random non-Prometheus text (nothing forwarded).
 * Decisions come from mulberry32(seed) (workflows/plan.ts): one draw "fault or not" (< rate) and one
 * draw for the kind per eligible request, so the same seed over the same sequence of eligible
 * requests gives the same kinds; truncation points and garbage come from a second stream, so they
 * never shift the kinds. `maxFaults` caps the faults injected; `enabled: false` passes everything.
 *
 * Every request is logged (`requests`): `{ at, method, target, path, fault?, status?, error? }`.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isPodAddress, podToLoopback } from '../harness/pod-network';
import { mulberry32 } from '../../../workflows/plan';

export type FaultKind = 'timeout' | 'truncated' | 'garbage';
export const FAULT_KINDS: readonly FaultKind[] = ['timeout', 'truncated', 'garbage'];

export interface FaultOptions {
  seed: number;
  /** Probability (0..1) that an eligible request gets a fault. */
  rate: number;
  /** The kinds drawn from (uniformly). */
  kinds: FaultKind[];
  /** At most this many faults in all (default unlimited). */
  maxFaults?: number;
  /** Default true. */
  enabled?: boolean;
  /** How long a `timeout` fault holds the request before destroying the socket (default 15 s). */
  timeoutHoldMs?: number;
}

export interface GatewayLogEntry {
  /** Date.now() when the request arrived. */
  at: number;
  method: string;
  /** `<podIP>:<podPort>` */
  target: string;
  /** path + query at the pod */
  path: string;
  /** Where the registry mapped the target (`127.0.0.1:<port>`); undefined: unmapped. */
  upstream?: string;
  fault?: FaultKind;
  /** Status sent to the child (undefined: no answer, the socket was destroyed). */
  status?: number;
  /** Why the socket was destroyed / the forward failed. */
  error?: string;
  /** What a fault did (e.g. where a page was cut). */
  note?: string;
  /** Date.now() when the gateway finished with the request. */
  doneAt?: number;
}

export interface PodGatewayOptions {
  faults?: FaultOptions;
  /** Which requests may get a fault; default: the path (without query) ends in /metrics. */
  eligible?: (target: string, path: string) => boolean;
  /** Called with each entry when it is complete. */
  onRequest?: (entry: GatewayLogEntry) => void;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (a free port). */
  port?: number;
}

export interface PodGateway {
  /** `http://127.0.0.1:<port>`: the value of POD_GATEWAY_URL for a child. */
  readonly url: string;
  readonly port: number;
  /** Every request, in arrival order. */
  readonly requests: GatewayLogEntry[];
  /** Faults injected so far. */
  readonly faultsInjected: number;
  /** The kinds injected so far, in order. */
  readonly faultKinds: FaultKind[];
  /** Replaces the fault options (restarting the seeded streams); undefined: no faults. */
  setFaults(faults: FaultOptions | undefined): void;
  /** Turns the current faults on or off without touching their streams. */
  setFaultsEnabled(enabled: boolean): void;
  close(): Promise<void>;
}

/** Default eligibility: the path, without its query, ends in /metrics. */
export const metricsPath = (_target: string, path: string): boolean => path.split('?')[0]!.endsWith('/metrics');

/** Eligible: /metrics pages of these targets (`<podIP>:<podPort>`) only, e.g. the vmagent's. */
export const metricsOf =
  (...targets: string[]) =>
  (target: string, path: string): boolean =>
    targets.includes(target) && metricsPath(target, path);

/** The gateway URL a child's fetch uses for `podUrl` (what pod-network-preload.cjs does); anything not on the pod network is returned unchanged. */
export function gatewayUrlFor(gatewayUrl: string, podUrl: string): string {
  let u: URL;
  try {
    u = new URL(podUrl);
  } catch {
    return podUrl;
  }
  if (!isPodAddress(u.hostname) || u.protocol !== 'http:') return podUrl;
  return `${gatewayUrl.replace(/\/+$/, '')}/${u.hostname}:${u.port || '80'}${u.pathname}${u.search}`;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'proxy-authenticate',
]);

function forwardHeaders(h: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

const GARBAGE_ALPHABET = 'abcdefghijklmnopqrstuvwxyzXYZ<>{}[]()#@!%&*=;:,."\'/\\|~^ \t';

/** Random text no Prometheus text parser accepts as samples: no line is `name value`. */
export function garbageText(rnd: () => number, minBytes = 200, maxBytes = 2000): string {
  const len = minBytes + Math.floor(rnd() * (maxBytes - minBytes));
  let s = '<<garbage ';
  while (s.length < len) {
    s += GARBAGE_ALPHABET[Math.floor(rnd() * GARBAGE_ALPHABET.length)]!;
    if (rnd() < 0.02) s += ' {{{ not="prometheus" !!\n';
  }
  return `${s}\n`;
}

const TARGET_RE = /^\/(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}):(\d{1,5})(\/.*)?$/;

export async function startPodGateway(opts: PodGatewayOptions = {}): Promise<PodGateway> {
  const requests: GatewayLogEntry[] = [];
  const eligible = opts.eligible ?? metricsPath;
  let faults: FaultOptions | undefined;
  let decide: () => number = () => 1;
  let params: () => number = Math.random;
  let injected = 0;
  const kinds: FaultKind[] = [];
  const setFaults = (f: FaultOptions | undefined) => {
    faults = f ? { ...f } : undefined;
    decide = f ? mulberry32(f.seed) : () => 1;
    params = f ? mulberry32((f.seed ^ 0x9e3779b9) >>> 0) : Math.random;
  };
  setFaults(opts.faults);
  const sockets = new Set<import('node:net').Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const pickFault = (target: string, path: string): FaultKind | undefined => {
    const f = faults;
    if (!f || f.enabled === false || f.kinds.length === 0 || !eligible(target, path)) return undefined;
    if (f.maxFaults !== undefined && injected >= f.maxFaults) return undefined;
    const hit = decide() < f.rate;
    const k = f.kinds[Math.floor(decide() * f.kinds.length)]!;
    if (!hit) return undefined;
    injected++;
    kinds.push(k);
    return k;
  };

  const server = http.createServer((req, res) => {
    const m = TARGET_RE.exec(req.url ?? '');
    const entry: GatewayLogEntry = {
      at: Date.now(),
      method: req.method ?? 'GET',
      target: m ? `${m[1]}:${m[2]}` : '',
      path: m ? (m[3] ?? '/') : (req.url ?? ''),
    };
    requests.push(entry);
    let finished = false;
    const finish = (patch: Partial<GatewayLogEntry>) => {
      if (finished) return;
      finished = true;
      Object.assign(entry, patch, { doneAt: Date.now() });
      opts.onRequest?.(entry);
    };
    const refuse = (why: string) => {
      finish({ error: why });
      req.socket.destroy();
    };
    if (!m) return refuse(`not a gateway request (want /<podIP>:<podPort>/path): ${req.url}`);
    const ip = m[1]!;
    if (!isPodAddress(ip)) return refuse(`${entry.target} is not a pod address`);
    const mapped = new URL(podToLoopback(`http://${entry.target}/`));
    if (mapped.hostname !== '127.0.0.1') return refuse(`connection refused: no pod listens at ${entry.target} (pod network registry)`);
    entry.upstream = `127.0.0.1:${mapped.port}`;

    const fault = pickFault(entry.target, entry.path);
    if (fault) entry.fault = fault;
    if (fault === 'timeout') {
      const hold = faults?.timeoutHoldMs ?? 15_000;
      const t = setTimeout(() => {
        timers.delete(t);
        refuse(`timeout fault: held ${hold} ms, then destroyed`);
      }, hold);
      timers.add(t);
      res.once('close', () => {
        clearTimeout(t);
        timers.delete(t);
        finish({ error: 'timeout fault: the client gave up' });
      });
      req.resume();
      return;
    }
    if (fault === 'garbage') {
      const body = garbageText(params);
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(body);
      finish({ status: 200 });
      return;
    }

    const headers = forwardHeaders(req.headers);
    headers.host = entry.target;
    if (fault === 'truncated') headers['accept-encoding'] = 'identity';
    const up = http.request({ host: '127.0.0.1', port: Number(mapped.port), method: req.method, path: entry.path, headers, agent: false }, (ures) => {
      const status = ures.statusCode ?? 502;
      if (fault === 'truncated') {
        const chunks: Buffer[] = [];
        ures.on('data', (c: Buffer) => chunks.push(c));
        ures.on('error', (err) => refuse(`upstream body: ${err.message}`));
        ures.on('end', () => {
          const full = Buffer.concat(chunks);
          const cut = Math.floor(full.length * (0.3 + 0.4 * params()));
          const h = forwardHeaders(ures.headers);
          delete h['content-length'];
          delete h['content-encoding'];
          res.writeHead(status, h);
          res.end(full.subarray(0, cut));
          finish({ status, note: `truncated at ${cut} of ${full.length} bytes` });
        });
        return;
      }
      res.writeHead(status, forwardHeaders(ures.headers));
      ures.pipe(res);
      ures.on('error', (err) => refuse(`upstream body: ${err.message}`));
      ures.on('end', () => finish({ status }));
    });
    up.on('error', (err) => refuse(`upstream ${entry.upstream}: ${err.message}`));
    req.pipe(up);
    res.once('close', () => {
      if (!finished) {
        up.destroy();
        finish({ error: 'the client closed the connection' });
      }
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    port,
    requests,
    get faultsInjected() {
      return injected;
    },
    faultKinds: kinds,
    setFaults(f) {
      setFaults(f);
      injected = 0;
      kinds.length = 0;
    },
    setFaultsEnabled(enabled) {
      if (faults) faults.enabled = enabled;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}
