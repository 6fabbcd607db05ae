// The Temporal connection both processes build from TEMPORAL_* (process/env.ts): TLS with or
// without a client certificate, with or without a CA of its own. A real connection through TLS:
// test/integration/temporal-tls.test.ts.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { commonEnvShape, refineCommonEnv, temporalConfig, temporalConnectionOptions } from '../../process/env';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'temporal-connection-'));
const file = (name: string, content: string) => {
  const p = path.join(tmp, name);
  fs.writeFileSync(p, content);
  return p;
};
const CA = file('ca.crt', 'the CA');
const CERT = file('tls.crt', 'the certificate');
const KEY = file('tls.key', 'the key');

const schema = z.object(commonEnvShape).superRefine(refineCommonEnv);
const options = (env: Record<string, string>) => temporalConnectionOptions(temporalConfig(schema.parse(env)));
const problems = (env: Record<string, string>) => {
  const r = schema.safeParse(env);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('Temporal connection options', () => {
  it('no TLS setting: plain gRPC', () => {
    expect(options({}).tls).toBeUndefined();
  });

  it('TEMPORAL_TLS alone: TLS against the system roots, no client certificate', () => {
    expect(options({ TEMPORAL_TLS: 'true' }).tls).toEqual({ serverNameOverride: undefined, serverRootCACertificate: undefined, clientCertPair: undefined });
  });

  it('a CA without a client certificate: TLS against that CA, with the server name asked for, presenting nothing', () => {
    const tls = options({ TEMPORAL_TLS: 'true', TEMPORAL_TLS_CA: CA, TEMPORAL_TLS_SERVER_NAME: 'temporal.example.com' }).tls;
    expect(tls).toEqual({ serverNameOverride: 'temporal.example.com', serverRootCACertificate: Buffer.from('the CA'), clientCertPair: undefined });
    // The CA alone turns TLS on too (the chart sets TEMPORAL_TLS anyway).
    expect(options({ TEMPORAL_TLS_CA: CA }).tls).toEqual({
      serverNameOverride: undefined,
      serverRootCACertificate: Buffer.from('the CA'),
      clientCertPair: undefined,
    });
  });

  it('a client certificate and key: mTLS, the pair presented', () => {
    expect(options({ TEMPORAL_TLS_CERT: CERT, TEMPORAL_TLS_KEY: KEY }).tls).toEqual({
      serverNameOverride: undefined,
      serverRootCACertificate: undefined,
      clientCertPair: { crt: Buffer.from('the certificate'), key: Buffer.from('the key') },
    });
  });

  it('an API key without any TLS setting still means TLS (system roots)', () => {
    expect(options({ TEMPORAL_API_KEY: 'k' })).toEqual({ address: 'localhost:7233', tls: true, apiKey: 'k' });
  });

  it('half a client certificate, or a CA file that is not there, is refused', () => {
    expect(problems({ TEMPORAL_TLS: 'true', TEMPORAL_TLS_KEY: KEY })).toEqual([
      'TEMPORAL_TLS_CERT: TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together (mTLS client certificate)',
    ]);
    expect(problems({ TEMPORAL_TLS: 'true', TEMPORAL_TLS_CA: path.join(tmp, 'missing.crt') })).toEqual([
      expect.stringMatching(/^TEMPORAL_TLS_CA: file does not exist or is not readable/),
    ]);
    // Negative control: the same without the flaw is accepted.
    expect(problems({ TEMPORAL_TLS: 'true', TEMPORAL_TLS_CERT: CERT, TEMPORAL_TLS_KEY: KEY, TEMPORAL_TLS_CA: CA })).toEqual([]);
  });
});
