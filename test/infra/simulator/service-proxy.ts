/**
 * The cluster's Service network for the vmagents' remote writes to VMSingles: a forward HTTP proxy
 * on loopback (vmagent -remoteWrite.proxyURL) that sends a request for a Service origin (e.g.
 * `http://vmsingle-vm-single-c.default.svc:8429`) to the loopback process behind it, so that the
 * real vmagent's -remoteWrite.url is the Service URL the VMAgent object names (its queue directory
 * hashes that URL, as in a cluster). A Service whose process does not answer (a zone restarting) or
 * an unknown origin closes the connection, as a Service without ready endpoints refuses it.
 */
import * as http from 'node:http';
import { freePort } from '../harness/ports';

export interface ServiceProxy {
  /** http://127.0.0.1:<port>: the -remoteWrite.proxyURL. */
  url: string;
  stop(): Promise<void>;
}

/** `services`: Service origin → the loopback origin serving it. */
export async function startServiceProxy(services: Record<string, string>): Promise<ServiceProxy> {
  const port = await freePort();
  const server = http.createServer((req, res) => {
    let target: URL | undefined;
    try {
      const u = new URL(req.url ?? '');
      const to = services[u.origin];
      if (to) target = new URL(`${u.pathname}${u.search}`, to);
    } catch {
      /* not an absolute-form request: refused below */
    }
    if (!target) return void req.socket.destroy();
    const headers = { ...req.headers };
    delete headers['proxy-connection'];
    const up = http.request(target, { method: req.method, headers, agent: false }, (ur) => {
      res.writeHead(ur.statusCode ?? 502, ur.headers);
      ur.pipe(res);
    });
    up.on('error', () => req.socket.destroy());
    req.pipe(up);
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
