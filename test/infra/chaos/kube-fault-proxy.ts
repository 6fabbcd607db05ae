/**
 * A seeded fault-injecting HTTPS reverse proxy in front of a test kube-apiserver, for chaos runs:
 * point a component's KubeConfig at it (`kubeConfigFor`) and it sees 5xx, 409, 429, hung requests
 * and cut watches, in an order that a seed replays.
 *
 * Replay: the PRNG is drawn exactly three times per request (fault roll, kind pick, kind detail),
 * whether or not the proxy is enabled or `maxFaults` is spent, so the fate of the n-th request
 * depends only on the seed, n and the request's class (read/write, watch or not). Requests are
 * numbered in arrival order at the proxy: concurrent clients may arrive in another order.
 *
 * Not proxied: upgrade requests (exec, attach, port-forward).
 */
import { X509Certificate } from 'node:crypto';
import * as fs from 'node:fs';
import type * as http from 'node:http';
import * as https from 'node:https';
import type * as net from 'node:net';
import type * as tls from 'node:tls';
import * as k8s from '@kubernetes/client-node';
import { mulberry32 } from '../../../workflows/plan';
import type { KubeCluster } from '../harness/kube';
import { freePort } from '../harness/ports';

export type FaultKind = '5xx' | '409' | '429' | 'timeout' | 'drop-watch';
/** Canonical order: the kind pick indexes into it, so it must not change between runs. */
export const FAULT_KINDS: readonly FaultKind[] = ['5xx', '409', '429', 'timeout', 'drop-watch'];

export interface KubeFaultProxyOptions {
  kube: Pick<KubeCluster, 'server' | 'certs'>;
  seed: number;
  /** Probability that a request gets a fault. Default 0.2. */
  rate?: number;
  /** Stop injecting after this many faults. Default unlimited. */
  maxFaults?: number;
  /** How long a `timeout` fault holds the client before destroying its socket. Default 35 s. */
  timeoutHoldMs?: number;
  /** Restrict the kinds drawn from (default all). */
  kinds?: readonly FaultKind[];
  /** Default true. */
  enabled?: boolean;
}

export interface KubeRequestLogEntry {
  seq: number;
  /** ms since the epoch, on arrival. */
  at: number;
  method: string;
  /** Path with query. */
  path: string;
  /** ServiceAccount name, `token:<6 chars>`, `cert:<CN>` or `anonymous`. */
  user: string;
  watch: boolean;
  fault?: FaultKind;
  /** What the client got; undefined for timeout and drop-watch (and if the client left first). */
  status?: number;
  /** What the apiserver answered, when forwarded. */
  upstreamStatus?: number;
  forwarded: boolean;
  /** Writes only, truncated to 64 KiB. */
  requestBody?: string;
}

export interface KubeFaultProxy {
  /** https://127.0.0.1:<port> */
  readonly url: string;
  /** Toggle injection; requests keep flowing either way. */
  enabled: boolean;
  readonly log: KubeRequestLogEntry[];
  faultCounts(): Record<FaultKind, number>;
  /** A copy of `kc` (same users, CA) whose clusters pointing at the apiserver point at the proxy. */
  kubeConfigFor(kc: k8s.KubeConfig): k8s.KubeConfig;
  /** Closes the server and every socket, held and watch ones included. */
  stop(): Promise<void>;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'upgrade'];
const BODY_LOG_LIMIT = 64 * 1024;

function withoutHopByHop(h: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = { ...h };
  for (const k of HOP_BY_HOP) delete out[k];
  return out;
}

function userLabel(req: http.IncomingMessage): string {
  const auth = req.headers.authorization;
  const token = auth?.match(/^bearer\s+(\S+)/i)?.[1];
  if (token) {
    try {
      const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { sub?: unknown };
      const name = typeof claims.sub === 'string' ? claims.sub.match(/^system:serviceaccount:[^:]+:([^:]+)$/)?.[1] : undefined;
      if (name) return name;
    } catch {
      /* not a JWT */
    }
    return `token:${token.slice(0, 6)}`;
  }
  const cn = (req.socket as tls.TLSSocket).getPeerCertificate?.()?.subject?.CN;
  return cn ? `cert:${String(cn)}` : 'anonymous';
}

function sendStatus(res: http.ServerResponse, code: number, reason: string, headers: http.OutgoingHttpHeaders = {}): void {
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'injected fault', reason, code });
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

export async function startKubeFaultProxy(opts: KubeFaultProxyOptions): Promise<KubeFaultProxy> {
  const { certs, server: upstreamUrl } = opts.kube;
  const upstream = new URL(upstreamUrl);
  const ca = fs.readFileSync(certs.caCert);
  const adminCert = fs.readFileSync(certs.adminCert);
  const adminKey = fs.readFileSync(certs.adminKey);
  // A client-cert identity cannot pass through a TLS terminator; the harness admin is the only
  // cert identity, so a client presenting that exact cert is forwarded with it.
  const adminDer = new X509Certificate(adminCert).raw;
  const rate = opts.rate ?? 0.2;
  const maxFaults = opts.maxFaults ?? Infinity;
  const holdMs = opts.timeoutHoldMs ?? 35_000;
  const kinds = FAULT_KINDS.filter((k) => !opts.kinds || opts.kinds.includes(k));
  const rnd = mulberry32(opts.seed);
  const log: KubeRequestLogEntry[] = [];
  const counts = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
  let injected = 0;
  const sockets = new Set<net.Socket>();
  const upstreamRequests = new Set<http.ClientRequest>();
  const timers = new Set<NodeJS.Timeout>();
  const agent = new https.Agent({ keepAlive: true, ca });

  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
    return t;
  };

  const handle = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const parsed = new URL(url, 'https://proxy.invalid');
    const w = parsed.searchParams.get('watch');
    const watch = w === 'true' || w === '1' || parsed.pathname.includes('/watch/');
    const write = WRITES.has(method);
    const entry: KubeRequestLogEntry = { seq: log.length + 1, at: Date.now(), method, path: url, user: userLabel(req), watch, forwarded: false };
    log.push(entry);

    const roll = rnd();
    const pick = rnd();
    const detail = rnd();
    const applicable = kinds.filter((k) => (k !== '409' || write) && (k !== 'drop-watch' || watch));
    let fault: FaultKind | undefined;
    if (proxy.enabled && injected < maxFaults && roll < rate && applicable.length > 0) {
      fault = applicable[Math.floor(pick * applicable.length)]!;
      injected++;
      counts[fault]++;
      entry.fault = fault;
    }

    let requestEnded = false;
    if (write) {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (c: Buffer) => {
        if (size < BODY_LOG_LIMIT) chunks.push(c.subarray(0, BODY_LOG_LIMIT - size));
        size += c.length;
      });
      req.on('end', () => (entry.requestBody = Buffer.concat(chunks).toString('utf8')));
    }
    req.on('end', () => (requestEnded = true));

    if (fault === '5xx' || fault === '409' || fault === '429') {
      const [code, reason, headers] =
        fault === '409'
          ? [409, 'Conflict', {}]
          : fault === '429'
            ? [429, 'TooManyRequests', { 'retry-after': '1' }]
            : detail < 0.5
              ? [500, 'InternalError', {}]
              : [503, 'ServiceUnavailable', {}];
      // Answer only after the body is read, so a keep-alive connection stays usable.
      req.on('end', () => {
        entry.status = code;
        sendStatus(res, code, reason, headers);
      });
      req.resume();
      return;
    }

    const peer = (req.socket as tls.TLSSocket).getPeerCertificate?.();
    const asAdmin = !req.headers.authorization && peer?.raw !== undefined && peer.raw.equals(adminDer);
    const upReq = https.request({
      protocol: 'https:',
      host: upstream.hostname,
      port: upstream.port,
      method,
      path: url,
      headers: { ...withoutHopByHop(req.headers), host: upstream.host },
      agent,
      ...(asAdmin ? { cert: adminCert, key: adminKey } : {}),
    });
    upstreamRequests.add(upReq);
    upReq.on('close', () => upstreamRequests.delete(upReq));
    entry.forwarded = true;
    let up: http.IncomingMessage | undefined;
    let upEnded = false;
    // Cuts the client socket: for a timeout after the hold, for a dropped watch after its delay.
    let cutTimer: NodeJS.Timeout | undefined;

    upReq.on('response', (r) => {
      up = r;
      r.on('end', () => (upEnded = true));
      entry.upstreamStatus = r.statusCode;
      if (fault === 'timeout' || res.destroyed) {
        r.resume();
        return;
      }
      if (fault !== 'drop-watch') entry.status = r.statusCode;
      res.writeHead(r.statusCode ?? 502, withoutHopByHop(r.headers));
      // A watch with no events yet must still show the client its 200.
      if (watch) res.flushHeaders();
      r.pipe(res);
      if (fault === 'drop-watch') cutTimer = later(500 + detail * 4500, () => req.socket.destroy());
    });
    upReq.on('error', () => {
      if (fault === 'timeout' || res.destroyed) return;
      if (res.headersSent) {
        res.destroy();
        return;
      }
      entry.status = 502;
      sendStatus(res, 502, 'InternalError', {});
    });
    if (fault === 'timeout') cutTimer = later(holdMs, () => req.socket.destroy());

    res.on('close', () => {
      // The socket may be kept alive for another request: never cut it later.
      if (cutTimer) {
        clearTimeout(cutTimer);
        timers.delete(cutTimer);
      }
      if (upEnded) return;
      // A write whose body was sent completes upstream even if the client left, as on a real
      // apiserver; a watch or a half-sent request is cut.
      if (watch || !requestEnded) upReq.destroy();
      else up?.resume();
    });
    req.pipe(upReq);
  };

  const srv = https.createServer(
    {
      cert: fs.readFileSync(certs.serverCert),
      key: fs.readFileSync(certs.serverKey),
      ca,
      requestCert: true,
      rejectUnauthorized: false,
    },
    handle,
  );
  srv.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  srv.on('tlsClientError', () => {
    /* a client gave up mid-handshake: nothing to do */
  });
  const port = await freePort();
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', () => resolve());
  });
  const url = `https://127.0.0.1:${port}`;

  const proxy: KubeFaultProxy = {
    url,
    enabled: opts.enabled ?? true,
    log,
    faultCounts: () => ({ ...counts }),
    kubeConfigFor(kc) {
      const out = new k8s.KubeConfig();
      out.loadFromOptions({
        clusters: kc.clusters.map((c) => (c.server.replace(/\/$/, '') === upstreamUrl.replace(/\/$/, '') ? { ...c, server: url } : c)),
        users: kc.users,
        contexts: kc.contexts,
        currentContext: kc.currentContext,
      });
      return out;
    },
    async stop() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      const closed = new Promise<void>((resolve) => srv.close(() => resolve()));
      for (const s of sockets) s.destroy();
      for (const r of upstreamRequests) r.destroy();
      agent.destroy();
      await closed;
    },
  };
  return proxy;
}
