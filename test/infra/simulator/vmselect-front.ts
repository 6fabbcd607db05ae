/**
 * A zone's "vmselect": a tiny HTTP front on loopback in front of the zone's single-node
 * VictoriaMetrics process. It accepts vmselect-shaped paths `/select/<tenant>/prometheus/<rest>`
 * and forwards `/<rest>` (query string, method, body) to the zone process, and serves `/metrics`
 * with request counters named exactly like the real cluster vmselect's
 * (VictoriaMetrics app/vmselect/main.go, cluster branch:
 * `vm_http_requests_total{path="/select/{}/prometheus/api/v1/query"}` ...), counted when a request
 * arrives (as vmselect does, before it is served), and `/admin/tenants` (the one tenant, 0:0, the
 * process holds). Anything else answers 400 like vmselect's unsupported-path error.
 */
import * as http from 'node:http';
import { freePort } from '../harness/ports';

/** Path suffix after `/select/<tenant>/prometheus` → the counter's `path` label (cluster vmselect). */
const COUNTED: Array<[RegExp, string]> = [
  [/^\/api\/v1\/query$/, '/select/{}/prometheus/api/v1/query'],
  [/^\/api\/v1\/query_range$/, '/select/{}/prometheus/api/v1/query_range'],
  [/^\/api\/v1\/series$/, '/select/{}/prometheus/api/v1/series'],
  [/^\/api\/v1\/series\/count$/, '/select/{}/prometheus/api/v1/series/count'],
  [/^\/api\/v1\/labels$/, '/select/{}/prometheus/api/v1/labels'],
  [/^\/api\/v1\/label\/[^/]+\/values$/, '/select/{}/prometheus/api/v1/label/{}/values'],
  [/^\/api\/v1\/export$/, '/select/{}/prometheus/api/v1/export'],
  [/^\/api\/v1\/export\/csv$/, '/select/{}/prometheus/api/v1/export/csv'],
  [/^\/api\/v1\/export\/native$/, '/select/{}/prometheus/api/v1/export/native'],
  [/^\/federate$/, '/select/{}/prometheus/federate'],
  [/^\/api\/v1\/status\/tsdb$/, '/select/{}/prometheus/api/v1/status/tsdb'],
  [/^\/api\/v1\/status\/active_queries$/, '/select/{}/prometheus/api/v1/status/active_queries'],
  [/^\/api\/v1\/status\/top_queries$/, '/select/{}/prometheus/api/v1/status/top_queries'],
  [/^\/api\/v1\/metadata$/, '/select/{}/prometheus/api/v1/metadata'],
  [/^\/api\/v1\/query_exemplars$/, '/select/{}/prometheus/api/v1/query_exemplars'],
];
const SELECT_RE = /^\/select\/([^/]+)\/prometheus(\/.*)$/;

export interface VmselectFront {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  /** counter path label → value */
  counts(): Record<string, number>;
  /** Prometheus text of /metrics (as served). */
  metricsText(): string;
  /** Fault injection (a carrier made slow on purpose): each /select/ request waits this long before it is forwarded. */
  setDelay(ms: number): void;
  stop(): Promise<void>;
}

/** Starts the front for `backendURL` (the zone process, e.g. http://127.0.0.1:8428) on `host` (default 127.0.0.1; the real-operator bed: a vmselect pod's IP). */
export async function startVmselectFront(opts: { backendURL: string; port?: number; name?: string; host?: string }): Promise<VmselectFront> {
  const host = opts.host ?? '127.0.0.1';
  const port = opts.port ?? (await freePort());
  const counters = new Map<string, number>(COUNTED.map(([, p]) => [p, 0]));
  let errors = 0;
  let delayMs = 0;
  const metricsText = () =>
    [
      ...[...counters.entries()].map(([p, v]) => `vm_http_requests_total{path="${p}"} ${v}`),
      `vm_http_request_errors_total{path="/select/{}/prometheus/"} ${errors}`,
      `vm_app_version{version="vmselect-front-zone-simulator", short_version="vmselect-front"} 1`,
      '',
    ].join('\n');
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      return void res.end(metricsText());
    }
    if (u.pathname === '/health') return void res.end('OK');
    // The tenants of the window (cluster vmselect): the zone process holds one tenant's data, 0:0.
    if (u.pathname === '/admin/tenants') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end('{"status":"success","data":["0:0"]}');
    }
    const m = SELECT_RE.exec(u.pathname);
    if (!m) {
      errors++;
      res.writeHead(400, { 'content-type': 'text/plain' });
      return void res.end(`unsupported path requested: ${JSON.stringify(u.pathname)} (vmselect front of ${opts.name ?? opts.backendURL})`);
    }
    const rest = m[2]!;
    const label = COUNTED.find(([re]) => re.test(rest))?.[1];
    if (label) counters.set(label, (counters.get(label) ?? 0) + 1);
    if (delayMs > 0) setTimeout(() => forward(req, res, rest, u), delayMs);
    else forward(req, res, rest, u);
  });
  const forward = (req: http.IncomingMessage, res: http.ServerResponse, rest: string, u: URL) => {
    const target = new URL(`${rest}${u.search}`, opts.backendURL);
    const headers = { ...req.headers };
    delete headers.host;
    const up = http.request(target, { method: req.method, headers, agent: false }, (ur) => {
      res.writeHead(ur.statusCode ?? 502, ur.headers);
      ur.pipe(res);
    });
    up.on('error', (err) => {
      errors++;
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`vmselect front: backend ${opts.backendURL}: ${err.message}`);
    });
    req.pipe(up);
  };
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    url: `http://${host}:${port}`,
    port,
    counts: () => Object.fromEntries(counters),
    metricsText,
    setDelay: (ms) => void (delayMs = ms),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
