// The Web UI codec endpoint over HTTP: decodes what the worker's codec encoded, answers CORS for the
// configured Web UI origin only, refuses every other origin.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { ConfigError } from '../../process/env';
import { loadCodecServerConfig, startCodecServer, type CodecServer } from '../../process/codec-server';
import { EncryptionCodec, parsePayloadKeys } from '../../process/payload-codec';

const UI = 'http://localhost:8233';
const SECRET = 'hunter2-fixture-secret';
const keys = parsePayloadKeys(`k1:${crypto.randomBytes(32).toString('base64')}`);
const codec = new EncryptionCodec(keys);
const b64 = (b?: Uint8Array | null) => Buffer.from(b ?? []).toString('base64');
const toJson = (ps: Payload[]) => ({
  payloads: ps.map((p) => ({ metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, b64(v)])), data: b64(p.data) })),
});
type JsonPayloads = { payloads: Array<{ metadata: Record<string, string>; data: string }> };
const fromJson = (body: unknown): Payload[] =>
  (body as JsonPayloads).payloads.map((p) => ({
    metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
    data: Buffer.from(p.data, 'base64'),
  }));

let server: CodecServer;
beforeAll(async () => {
  server = await startCodecServer({ keys, host: '127.0.0.1', port: 0, uiOrigin: UI });
});
afterAll(() => server.close());

const post = (p: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${p}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-namespace': 'default', ...headers },
    body: JSON.stringify(body),
  });

describe('codec server', () => {
  it('decodes what the codec encoded, for the Web UI origin (CORS) and for the CLI (no Origin)', async () => {
    const encoded = await codec.encode([defaultPayloadConverter.toPayload({ password: SECRET })!]);
    const fromUi = await post('/decode', toJson(encoded), { origin: UI });
    expect(fromUi.status).toBe(200);
    expect(fromUi.headers.get('access-control-allow-origin')).toBe(UI);
    expect(fromUi.headers.get('vary')).toBe('Origin');
    expect(fromUi.headers.get('content-type')).toBe('application/json');
    expect(fromJson(await fromUi.json()).map((p) => defaultPayloadConverter.fromPayload(p))).toEqual([{ password: SECRET }]);

    const fromCli = await post('/decode', toJson(encoded));
    expect(fromCli.status).toBe(200);
    expect(fromCli.headers.get('access-control-allow-origin')).toBeNull();
    expect(fromJson(await fromCli.json()).map((p) => defaultPayloadConverter.fromPayload(p))).toEqual([{ password: SECRET }]);
  });

  it('encodes under any path prefix; the worker codec decodes the result', async () => {
    const res = await post('/codec/default/encode', toJson([defaultPayloadConverter.toPayload('signal arg')!]), { origin: UI });
    expect(res.status).toBe(200);
    const encoded = fromJson(await res.json());
    expect(Buffer.from(encoded[0]!.metadata!.encoding!).toString()).toBe('binary/encrypted');
    expect((await codec.decode(encoded)).map((p) => defaultPayloadConverter.fromPayload(p))).toEqual(['signal arg']);
  });

  it('answers the Web UI preflight', async () => {
    const res = await fetch(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: {
        origin: UI,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-namespace',
        'access-control-request-private-network': 'true',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(UI);
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('access-control-allow-headers')!.toLowerCase().split(/,\s*/)).toEqual(expect.arrayContaining(['content-type', 'x-namespace']));
    expect(res.headers.get('access-control-allow-private-network')).toBe('true');
  });

  it('refuses every other origin, preflight or not', async () => {
    const encoded = await codec.encode([defaultPayloadConverter.toPayload(SECRET)!]);
    for (const origin of ['http://localhost:8234', 'https://evil.example', 'null']) {
      const res = await post('/decode', toJson(encoded), { origin, 'content-type': 'text/plain' });
      expect(res.status).toBe(403);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(await res.text()).not.toContain(SECRET);
      const preflight = await fetch(`${server.url}/decode`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
      expect(preflight.status).toBe(403);
      expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it('without a configured origin, no browser may call it', async () => {
    const cli = await startCodecServer({ keys, host: '127.0.0.1', port: 0 });
    try {
      const res = await fetch(`${cli.url}/decode`, { method: 'POST', headers: { origin: UI }, body: '{"payloads":[]}' });
      expect(res.status).toBe(403);
    } finally {
      await cli.close();
    }
  });

  it('answers 400 for bad input or a codec error, 404/405 for anything but POST …/encode|decode', async () => {
    const other = await new EncryptionCodec(parsePayloadKeys(`k9:${crypto.randomBytes(32).toString('base64')}`)).encode([
      defaultPayloadConverter.toPayload('x')!,
    ]);
    const unknownKey = await post('/decode', toJson(other));
    expect(unknownKey.status).toBe(400);
    expect(((await unknownKey.json()) as { error: string }).error).toContain('key id "k9"');
    expect((await post('/decode', { nope: 1 })).status).toBe(400);
    expect((await post('/decode', { payloads: [{ data: 7 }] })).status).toBe(400);
    expect((await fetch(`${server.url}/decode`, { method: 'POST', body: '{' })).status).toBe(400);
    expect((await fetch(`${server.url}/decode`)).status).toBe(405);
    expect((await post('/other', { payloads: [] })).status).toBe(404);
  });
});

describe('codec server config', () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'codec-server-')), 'keys');
  fs.writeFileSync(file, `k1:${crypto.randomBytes(32).toString('base64')}\n`);

  it('binds 127.0.0.1:8888 by default', () => {
    const c = loadCodecServerConfig({ TEMPORAL_PAYLOAD_KEYS_FILE: file, CODEC_SERVER_UI_ORIGIN: 'https://temporal.example.com/' });
    expect(c).toMatchObject({ host: '127.0.0.1', port: 8888, uiOrigin: 'https://temporal.example.com' });
    expect(c.keys.activeId).toBe('k1');
  });

  it('needs the keys file and a bare origin', () => {
    let error: unknown;
    try {
      loadCodecServerConfig({ CODEC_SERVER_UI_ORIGIN: 'http://localhost:8233/ui' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues).toEqual([
      'TEMPORAL_PAYLOAD_KEYS_FILE: required: the keys file the worker and the trigger use',
      'CODEC_SERVER_UI_ORIGIN: must be the Web UI origin, scheme://host[:port] with no path (e.g. http://localhost:8233) (got "http://localhost:8233/ui")',
    ]);
  });
});
