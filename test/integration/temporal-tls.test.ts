// Temporal TLS without a client certificate (the chart's temporal.tls: TEMPORAL_TLS, an optional CA,
// TEMPORAL_TLS_SERVER_NAME), from the variables through process/env.ts to a real connection, with
// both clients the processes use: the trigger's Connection (grpc-js) and the worker's
// NativeConnection (the SDK's Rust core). The `temporal server start-dev` of the tools serves no TLS
// (it has no TLS flags), so a TLS terminator in this process stands in front of it, with a
// certificate of a test CA; it asks every client for a certificate and records whether one came.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { z } from 'zod';
import { commonEnvShape, refineCommonEnv, temporalConfig, temporalConnectionOptions } from '../../process/env';
import { generateKubeCerts } from '../infra/harness/kube';
import { harnessTempDir } from '../infra/harness/processes';
import { startTemporalDevServer, type DevServerHandle } from '../infra/harness/temporal';

const CONNECT_TIMEOUT_MS = 3000;

/** The connection options a process builds from these variables (process/env.ts). */
const optionsFrom = (env: Record<string, string>) =>
  temporalConnectionOptions(temporalConfig(z.object(commonEnvShape).superRefine(refineCommonEnv).parse(env)));

describe('Temporal over TLS without a client certificate', () => {
  let temporal: DevServerHandle;
  let terminator: tls.Server;
  let address: string;
  let caPath: string;
  /** Whether each TLS client that completed a handshake presented a certificate. */
  const presented: boolean[] = [];

  beforeAll(async () => {
    temporal = await startTemporalDevServer({ ui: false });
    const dir = harnessTempDir('temporal-tls');
    // Its serving certificate names 127.0.0.1, localhost and kubernetes (not temporal.example.com).
    generateKubeCerts(dir);
    caPath = path.join(dir, 'ca.crt');
    const [host, port] = temporal.address.split(':') as [string, string];
    terminator = tls.createServer(
      {
        cert: fs.readFileSync(path.join(dir, 'server.crt')),
        key: fs.readFileSync(path.join(dir, 'server.key')),
        ALPNProtocols: ['h2'],
        requestCert: true,
        rejectUnauthorized: false,
      },
      (client) => {
        presented.push(Object.keys(client.getPeerCertificate()).length > 0);
        const upstream = net.connect(Number(port), host);
        client.pipe(upstream).pipe(client);
        client.on('error', () => upstream.destroy());
        upstream.on('error', () => client.destroy());
      },
    );
    await new Promise<void>((resolve) => terminator.listen(0, '127.0.0.1', resolve));
    address = `127.0.0.1:${(terminator.address() as net.AddressInfo).port}`;
  }, 120_000);

  afterAll(async () => {
    await new Promise((resolve) => terminator?.close(resolve));
    await temporal?.stop();
  });

  /** One client's answer: the namespace's name (the connection closed after), or the error. */
  const namespaceThrough = (connecting: Promise<Connection | NativeConnection>): Promise<string> =>
    connecting.then(
      async (c) => {
        try {
          return (await c.workflowService.describeNamespace({ namespace: temporal.namespace })).namespaceInfo!.name!;
        } finally {
          await c.close();
        }
      },
      (err: Error) => `error: ${err.message}`,
    );

  /** Both clients' answer to a call through the terminator: the namespace's name, or the error. */
  async function reach(env: Record<string, string>): Promise<{ client: string; native: string }> {
    const options = { ...optionsFrom({ TEMPORAL_ADDRESS: address, ...env }), connectTimeout: CONNECT_TIMEOUT_MS };
    const client = await namespaceThrough(Connection.connect(options));
    const native = await namespaceThrough(NativeConnection.connect(options));
    return { client, native };
  }

  test('TEMPORAL_TLS with the server CA: both clients reach Temporal, neither presents a certificate', async () => {
    presented.length = 0;
    expect(await reach({ TEMPORAL_TLS: 'true', TEMPORAL_TLS_CA: caPath })).toEqual({ client: 'default', native: 'default' });
    expect(presented.length).toBeGreaterThanOrEqual(2);
    expect(presented.every((p) => !p)).toBe(true);
  });

  test('the CA alone turns TLS on; TEMPORAL_TLS_SERVER_NAME checks the certificate for that name instead of the address', async () => {
    expect(await reach({ TEMPORAL_TLS_CA: caPath })).toEqual({ client: 'default', native: 'default' });
    expect(await reach({ TEMPORAL_TLS: 'true', TEMPORAL_TLS_CA: caPath, TEMPORAL_TLS_SERVER_NAME: 'kubernetes' })).toEqual({
      client: 'default',
      native: 'default',
    });
  });

  test('negative controls: a name the certificate does not carry, the system roots (a private CA), or no TLS: both refused', async () => {
    const refused = { client: expect.stringMatching(/^error: /), native: expect.stringMatching(/^error: /) };
    expect(await reach({ TEMPORAL_TLS: 'true', TEMPORAL_TLS_CA: caPath, TEMPORAL_TLS_SERVER_NAME: 'temporal.example.com' })).toEqual(refused);
    expect(await reach({ TEMPORAL_TLS: 'true' })).toEqual(refused);
    expect(await reach({})).toEqual(refused);
  }, 60_000);
});
