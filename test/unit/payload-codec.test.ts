import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ApplicationFailure, defaultPayloadConverter, METADATA_ENCODING_KEY, type Payload } from '@temporalio/common';
import {
  decodeFromPayloadsAtIndex,
  decodeOptionalFailureToOptionalError,
  encodeErrorToFailure,
  encodeToPayload,
  loadDataConverter,
} from '@temporalio/common/lib/internal-non-workflow';
import { temporal } from '@temporalio/proto';
import { ConfigError } from '../../process/env';
import {
  ENCODING_ENCRYPTED,
  EncryptionCodec,
  METADATA_KEY_ID,
  parsePayloadKeys,
  payloadDataConverter,
  PayloadKeysError,
  type PayloadKeys,
} from '../../process/payload-codec';
import { loadConfig as loadTriggerConfig } from '../../trigger/config';
import { loadConfig as loadWorkerConfig } from '../../worker/config';

const SECRET = 'hunter2-fixture-secret';
const newKey = () => crypto.randomBytes(32).toString('base64');
const keysOf = (...lines: string[]): PayloadKeys => parsePayloadKeys(lines.join('\n'));
const json = (v: unknown): Payload => defaultPayloadConverter.toPayload(v)!;
const text = (b?: Uint8Array | null) => Buffer.from(b ?? []).toString('utf8');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'payload-keys-'));
function keysFile(name: string, content: string): string {
  const p = path.join(tmp, name);
  fs.writeFileSync(p, content);
  return p;
}

describe('EncryptionCodec', () => {
  const keys = keysOf(`k1:${newKey()}`);
  const codec = new EncryptionCodec(keys);

  it('round-trips payloads, metadata included, and hides their content', async () => {
    const payloads = [json({ vmuser: { password: SECRET } }), json('https://user:' + SECRET + '@vm.example/api/v1/write'), json(undefined)];
    const encoded = await codec.encode(payloads);
    for (const e of encoded) {
      expect(text(e.metadata?.[METADATA_ENCODING_KEY])).toBe(ENCODING_ENCRYPTED);
      expect(text(e.metadata?.[METADATA_KEY_ID])).toBe('k1');
      expect(Object.keys(e.metadata ?? {}).sort()).toEqual([METADATA_ENCODING_KEY, METADATA_KEY_ID].sort());
      expect(text(e.data)).not.toContain(SECRET);
    }
    const decoded = await codec.decode(encoded);
    expect(decoded.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual([
      { vmuser: { password: SECRET } },
      'https://user:' + SECRET + '@vm.example/api/v1/write',
      undefined,
    ]);
    expect(text(decoded[0]!.metadata?.[METADATA_ENCODING_KEY])).toBe('json/plain');
  });

  it('uses a fresh IV for every payload', async () => {
    const [a, b] = await codec.encode([json(SECRET), json(SECRET)]);
    expect(Buffer.from(a!.data!).equals(Buffer.from(b!.data!))).toBe(false);
  });

  it('passes payloads without the encrypted encoding through unchanged (histories recorded before encryption)', async () => {
    const plain = [json({ spec: 'old' }), { metadata: {}, data: Buffer.from('raw') }, {}];
    expect(await codec.decode(plain)).toEqual(plain);
  });

  it('refuses an altered IV, ciphertext or tag, and truncated data', async () => {
    const [e] = await codec.encode([json(SECRET)]);
    const data = Buffer.from(e!.data!);
    for (const i of [0, 12, data.length - 20, data.length - 1]) {
      const altered = Buffer.from(data);
      altered[i]! ^= 1;
      await expect(codec.decode([{ ...e, data: altered }])).rejects.toThrow('payload encrypted with key id "k1" failed authentication');
    }
    await expect(codec.decode([{ ...e, data: data.subarray(0, 20) }])).rejects.toThrow('payload encrypted with key id "k1" is truncated');
  });

  it('rotation: old payloads decrypt after a new key became active; a dropped key is named', async () => {
    const [k1, k2] = [newKey(), newKey()];
    const [old] = await new EncryptionCodec(keysOf(`k1:${k1}`)).encode([json('written with k1')]);
    const rotated = new EncryptionCodec(keysOf(`k2:${k2}`, `k1:${k1}`));
    const [fresh] = await rotated.encode([json('written with k2')]);
    expect(text(fresh!.metadata?.[METADATA_KEY_ID])).toBe('k2');
    expect((await rotated.decode([old!, fresh!])).map((p) => defaultPayloadConverter.fromPayload(p))).toEqual(['written with k1', 'written with k2']);
    await expect(new EncryptionCodec(keysOf(`k2:${k2}`)).decode([old!])).rejects.toThrow(
      'payload encrypted with key id "k1", which is not in TEMPORAL_PAYLOAD_KEYS_FILE (ids k2)',
    );
  });

  it('a key id naming another key is refused, not decrypted to garbage', async () => {
    const [e] = await new EncryptionCodec(keysOf(`k1:${newKey()}`)).encode([json(SECRET)]);
    await expect(codec.decode([e!])).rejects.toThrow('failed authentication');
  });

  it('with payloadDataConverter, failure messages and stack traces travel encrypted', async () => {
    const converter = loadDataConverter(payloadDataConverter(keys));
    const failure = await encodeErrorToFailure(converter, ApplicationFailure.create({ message: `cannot reach ${SECRET}`, type: 'ObjectNotFound' }));
    expect(failure.message).toBe('Encoded failure');
    expect(failure.stackTrace).toBe('');
    expect(text(failure.encodedAttributes?.metadata?.[METADATA_ENCODING_KEY])).toBe(ENCODING_ENCRYPTED);
    expect(Buffer.from(temporal.api.failure.v1.Failure.encode(failure).finish()).includes(SECRET)).toBe(false);
    const err = await decodeOptionalFailureToOptionalError(converter, failure);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).message).toBe(`cannot reach ${SECRET}`);
    expect((err as ApplicationFailure).type).toBe('ObjectNotFound');
    expect(await decodeFromPayloadsAtIndex(converter, 0, [await encodeToPayload(converter, SECRET)])).toBe(SECRET);
  });

  it('without keys: the SDK defaults (plaintext)', () => {
    expect(payloadDataConverter(undefined)).toBeUndefined();
  });
});

describe('payload keys file', () => {
  const k = newKey();

  it('first key encrypts, all decrypt; comments and blank lines are ignored', () => {
    const keys = parsePayloadKeys(`# rotated 2026-11\n\nk2:${newKey()}\r\n  k1 : ${k}  \n`);
    expect(keys.activeId).toBe('k2');
    expect([...keys.byId.keys()]).toEqual(['k2', 'k1']);
    expect(keys.byId.get('k1')!.export().toString('base64')).toBe(k);
  });

  it.each([
    ['an empty file', '', ['no key (one <key id>:<base64 key> a line)']],
    ['only comments', '# only a comment\n', ['no key (one <key id>:<base64 key> a line)']],
    ['a key without id', k, ['line 1: must be <key id>:<base64 key>, the id 1-64 of [A-Za-z0-9._-]']],
    ['a bad id', `bad id:${k}`, ['line 1: must be <key id>:<base64 key>, the id 1-64 of [A-Za-z0-9._-]']],
    [
      'a 16-byte key',
      `k1:${crypto.randomBytes(16).toString('base64')}`,
      ['line 1: key "k1" must be 32 bytes in base64 (openssl rand -base64 32), got 16 bytes'],
    ],
    ['a key not in base64', 'k1:not base64!', ['line 1: key "k1" must be 32 bytes in base64 (openssl rand -base64 32)']],
    ['duplicate ids', `k1:${k}\nk2:${newKey()}\nk1:${newKey()}`, ['line 3: duplicate key id "k1" (also on line 1)']],
  ])('refuses %s', (_, content, problems) => {
    let error: unknown;
    try {
      parsePayloadKeys(content);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(PayloadKeysError);
    expect((error as PayloadKeysError).problems).toEqual(problems);
  });
});

describe('TEMPORAL_PAYLOAD_KEYS_FILE', () => {
  const load = { worker: loadWorkerConfig, trigger: loadTriggerConfig };

  it.each(Object.entries(load))('%s: unset → no keys; set → the parsed keys', (_, loadConfig) => {
    expect(loadConfig({}).temporal.payloadKeys).toBeUndefined();
    expect(loadConfig({ TEMPORAL_PAYLOAD_KEYS_FILE: ' ' }).temporal.payloadKeys).toBeUndefined();
    const keys = loadConfig({ TEMPORAL_PAYLOAD_KEYS_FILE: keysFile('good', `a:${newKey()}\nb:${newKey()}\n`) }).temporal.payloadKeys;
    expect(keys?.activeId).toBe('a');
    expect([...keys!.byId.keys()]).toEqual(['a', 'b']);
  });

  const short = crypto.randomBytes(31).toString('base64');
  it.each([
    ['missing', path.join(tmp, 'missing'), ['cannot read the keys file: ENOENT']],
    ['a directory', tmp, ['cannot read the keys file: EISDIR']],
    ['bad key length', keysFile('short', `a:${short}\n`), ['line 1: key "a" must be 32 bytes in base64 (openssl rand -base64 32), got 31 bytes']],
    ['duplicate ids', keysFile('dup', `a:${newKey()}\na:${newKey()}\n`), ['line 2: duplicate key id "a" (also on line 1)']],
  ])('worker and trigger refuse a keys file: %s', (_, file, problems) => {
    for (const loadConfig of Object.values(load)) {
      let error: unknown;
      try {
        loadConfig({ TEMPORAL_PAYLOAD_KEYS_FILE: file });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).issues).toEqual(problems.map((p) => `TEMPORAL_PAYLOAD_KEYS_FILE: ${p} (got ${JSON.stringify(file)})`));
      expect((error as ConfigError).message).not.toContain(short);
    }
  });
});
