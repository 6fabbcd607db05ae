// The HTTP endpoint the worker and the trigger both serve: /metrics, /healthz (liveness) and
// /readyz (readiness); 503 while a probe says no.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MetricsServer {
  /** The bound port (0 asked for a free one). */
  port: number;
  url: string;
  close(): Promise<void>;
}

export interface MetricsEndpoint {
  host: string;
  port: number;
  /** The /metrics body, served with `contentType`. */
  metrics: () => Promise<string>;
  contentType: string;
  live?: () => boolean;
  ready?: () => boolean;
}

export async function startMetricsServer(opts: MetricsEndpoint): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405).end();
    } else if (path === '/metrics') {
      opts
        .metrics()
        .then((body) => res.writeHead(200, { 'content-type': opts.contentType }).end(body))
        .catch((err: unknown) => res.writeHead(500).end(String(err)));
    } else if (path === '/healthz' || path === '/readyz') {
      const probe = path === '/healthz' ? opts.live : opts.ready;
      const ok = probe ? probe() : true;
      res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(ok ? 'ok\n' : 'unavailable\n');
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = opts.host === '0.0.0.0' || opts.host === '::' ? '127.0.0.1' : opts.host;
  return {
    port,
    url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections?.();
      }),
  };
}
