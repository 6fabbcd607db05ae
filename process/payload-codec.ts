// Encryption of every Temporal payload (workflow input and result, activity inputs, results and
// heartbeats, signals, queries, memos, encoded failure messages) with AES-256-GCM. The workflow
// input is the whole normalized spec, and a full spec can carry a VMUser's password or bearer token
// or a credentialed remoteWriteURL: without this they sit readable in Temporal's history, its
// database and its Web UI.
//
// Keys file (TEMPORAL_PAYLOAD_KEYS_FILE, mounted from a Kubernetes Secret): one key a line,
// `<key id>:<base64 of 32 random bytes>`; blank lines and `#` comments are ignored. The first key
// encrypts, every key decrypts. Rotation: put a new key on the first line, keep the old ones until
// no history encrypted with them is still needed.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import { METADATA_ENCODING_KEY, type DataConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

export const ENCODING_ENCRYPTED = 'binary/encrypted';
export const METADATA_KEY_ID = 'encryption-key-id';

/**
 * The failure converter that moves messages and stack traces into a payload (so the codec encrypts
 * them too). Resolved when asked for: a single-file bundle that never asks (kubectl vmdc) has no
 * such file to resolve.
 */
export const failureConverterPath = (): string => require.resolve('../workflows/failure-converter');

const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface PayloadKeys {
  /** Encrypts: the file's first key. */
  activeId: string;
  /** Every key of the file: all decrypt. KeyObjects never print their material. */
  byId: ReadonlyMap<string, crypto.KeyObject>;
}

/** A keys file that cannot be used; `problems` name lines and key ids, never key material. */
export class PayloadKeysError extends Error {
  constructor(readonly problems: string[]) {
    super(`payload keys: ${problems.join('; ')}`);
    this.name = 'PayloadKeysError';
  }
}

export function parsePayloadKeys(text: string): PayloadKeys {
  const problems: string[] = [];
  const byId = new Map<string, crypto.KeyObject>();
  const lineOf = new Map<string, number>();
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    const n = i + 1;
    if (line === '' || line.startsWith('#')) continue;
    const colon = line.indexOf(':');
    const id = colon < 0 ? '' : line.slice(0, colon).trim();
    const b64 = line.slice(colon + 1).trim();
    const bytes = BASE64.test(b64) ? Buffer.from(b64, 'base64') : undefined;
    if (!KEY_ID.test(id)) problems.push(`line ${n}: must be <key id>:<base64 key>, the id 1-64 of [A-Za-z0-9._-]`);
    else if (bytes?.length !== 32) {
      problems.push(`line ${n}: key "${id}" must be 32 bytes in base64 (openssl rand -base64 32)${bytes ? `, got ${bytes.length} bytes` : ''}`);
    } else if (lineOf.has(id)) problems.push(`line ${n}: duplicate key id "${id}" (also on line ${lineOf.get(id)})`);
    else {
      lineOf.set(id, n);
      byId.set(id, crypto.createSecretKey(bytes));
    }
  }
  if (problems.length === 0 && byId.size === 0) problems.push('no key (one <key id>:<base64 key> a line)');
  if (problems.length > 0) throw new PayloadKeysError(problems);
  return { activeId: byId.keys().next().value!, byId };
}

export function readPayloadKeys(path: string): PayloadKeys {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (err) {
    throw new PayloadKeysError([`cannot read the keys file: ${(err as NodeJS.ErrnoException).code ?? String(err)}`]);
  }
  return parsePayloadKeys(text);
}

/**
 * Encodes each payload (the serialized Payload, its metadata included) as one AES-256-GCM
 * ciphertext, `iv | ciphertext | tag`, with metadata `encoding: binary/encrypted` and the key id.
 * Decoding passes payloads without that encoding through unchanged: histories recorded before
 * encryption was turned on, and signals or queries sent by clients without the codec.
 */
export class EncryptionCodec implements PayloadCodec {
  constructor(private readonly keys: PayloadKeys) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => this.encrypt(p));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => this.decrypt(p));
  }

  private encrypt(payload: Payload): Payload {
    const id = this.keys.activeId;
    const iv = crypto.randomBytes(IV_BYTES);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.keys.byId.get(id)!, iv);
    const plain = temporal.api.common.v1.Payload.encode(payload).finish();
    return {
      metadata: { [METADATA_ENCODING_KEY]: Buffer.from(ENCODING_ENCRYPTED), [METADATA_KEY_ID]: Buffer.from(id) },
      data: Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]),
    };
  }

  private decrypt(payload: Payload): Payload {
    const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
    if (!encoding || Buffer.from(encoding).toString() !== ENCODING_ENCRYPTED) return payload;
    const id = Buffer.from(payload.metadata?.[METADATA_KEY_ID] ?? []).toString();
    const key = this.keys.byId.get(id);
    if (!key) {
      throw new Error(
        `payload encrypted with key id ${JSON.stringify(id)}, which is not in TEMPORAL_PAYLOAD_KEYS_FILE (ids ${[...this.keys.byId.keys()].join(', ')}): ` +
          'keep an old key in the file as long as histories encrypted with it are read',
      );
    }
    const data = Buffer.from(payload.data ?? []);
    if (data.length < IV_BYTES + TAG_BYTES) throw new Error(`payload encrypted with key id ${JSON.stringify(id)} is truncated`);
    const decipher = crypto.createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new Error(
        `payload encrypted with key id ${JSON.stringify(id)} failed authentication: it was altered, or that id names a different key than it was encrypted with`,
      );
    }
    return temporal.api.common.v1.Payload.decode(plain);
  }
}

/**
 * The data converter of every Temporal client and worker of vmrollout: with keys, payloads are
 * encrypted and failure messages and stack traces go into an (encrypted) payload; without keys,
 * the SDK's defaults (plaintext).
 */
export function payloadDataConverter(keys: PayloadKeys | undefined): DataConverter | undefined {
  return keys ? { payloadCodecs: [new EncryptionCodec(keys)], failureConverterPath: failureConverterPath() } : undefined;
}
