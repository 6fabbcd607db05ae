// Temporal's remote codec protocol over the payload keys, for the Web UI's "codec endpoint" setting
// and `temporal --codec-endpoint`: POST …/encode and …/decode with a Payloads message as proto JSON
// ({"payloads":[{"metadata":{k: base64}, "data": base64}]}), 400 on bad input or a codec error.
// It decrypts for anyone who can reach it, so it binds 127.0.0.1 by default (each SRE runs their own)
// and answers browsers only from the one configured Web UI origin: any other Origin gets 403, so no
// other web page can use it (not even with a request that needs no CORS preflight).
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Payload } from '@temporalio/common';
import { z } from 'zod';
import { emptyToUndefined, parseEnv, payloadKeysFile, port, withDefault } from './env';
import { EncryptionCodec, type PayloadKeys } from './payload-codec';

export interface CodecServerConfig {
  keys: PayloadKeys;
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** The Web UI's origin (scheme://host[:port]); undefined → no browser may call (the CLI still can). */
  uiOrigin?: string;
}

const origin = z.preprocess(
  emptyToUndefined,
  z
    .string()
    .trim()
    .transform((s, ctx) => {
      try {
        const u = new URL(s);
        if ((u.protocol === 'http:' || u.protocol === 'https:') && `${u.origin}/` === u.href) return u.origin;
      } catch {
        /* reported below */
      }
      ctx.addIssue({ code: 'custom', message: 'must be the Web UI origin, scheme://host[:port] with no path (e.g. http://localhost:8233)' });
      return z.NEVER;
    })
    .optional(),
);

const envSchema = z.object({
  TEMPORAL_PAYLOAD_KEYS_FILE: payloadKeysFile.pipe(z.custom<PayloadKeys>((k) => k !== undefined, 'required: the keys file the worker and the trigger use')),
  CODEC_SERVER_HOST: withDefault('127.0.0.1', z.string().trim().min(1)),
  CODEC_SERVER_PORT: port('8888'),
  CODEC_SERVER_UI_ORIGIN: origin,
});

/** Parses and validates the codec server's environment. Throws ConfigError listing every problem. */
export function loadCodecServerConfig(env: NodeJS.ProcessEnv = process.env): CodecServerConfig {
  const e = parseEnv('codec server', envSchema, env);
  return { keys: e.TEMPORAL_PAYLOAD_KEYS_FILE, host: e.CODEC_SERVER_HOST, port: e.CODEC_SERVER_PORT, uiOrigin: e.CODEC_SERVER_UI_ORIGIN };
}

/**
 * One request: a Payloads message of one history field. Temporal refuses a gRPC message over 4 MiB
 * and a blob over 2 MiB by default; in base64 and JSON that is below 8 MiB.
 */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;
/** Payloads in one request: a field holds a handful (one per argument); 1,000 is far beyond any. */
export const MAX_PAYLOADS = 1_000;
/**
 * The bytes that open an object or array or separate two values (`{`, `[`, `,`). Base64 has none,
 * so counting them as the body arrives bounds the values JSON.parse would build: a payload takes 3
 * plus one per metadata entry (at most 5 in practice), so 8 a payload leaves room. 9 MiB of empty
 * payloads (`{},` 3 million times) held the event loop for 69 s; such a body is now refused with the
 * first chunk that passes the count (~12 KiB of it).
 */
const MAX_STRUCTURAL_BYTES = 8 * MAX_PAYLOADS;

class BadRequest extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function fromJson(body: unknown): Payload[] {
  if (!isRecord(body) || !Array.isArray(body.payloads)) throw new BadRequest('body must be {"payloads": [...]}');
  if (body.payloads.length > MAX_PAYLOADS) throw new BadRequest(`more than ${MAX_PAYLOADS} payloads (${body.payloads.length})`, 413);
  return body.payloads.map((p: unknown, i) => {
    const metadata = isRecord(p) ? (p.metadata ?? {}) : undefined;
    const data = isRecord(p) ? (p.data ?? '') : undefined;
    if (!isRecord(metadata) || typeof data !== 'string' || !Object.values(metadata).every((v) => typeof v === 'string')) {
      throw new BadRequest(`payloads[${i}] must be {"metadata": {name: base64}, "data": base64}`);
    }
    return {
      metadata: Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, Buffer.from(v as string, 'base64')])),
      data: Buffer.from(data, 'base64'),
    };
  });
}

function toJson(payloads: Payload[]): { payloads: JsonPayload[] } {
  const b64 = (b?: Uint8Array | null) => Buffer.from(b ?? []).toString('base64');
  return {
    payloads: payloads.map((p) => ({ metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, b64(v)])), data: b64(p.data) })),
  };
}

function countStructural(chunk: Buffer): number {
  let n = 0;
  for (let i = 0; i < chunk.length; i++) {
    const b = chunk[i];
    if (b === 0x7b || b === 0x5b || b === 0x2c) n++;
  }
  return n;
}

/**
 * The body as JSON, refused (413) as soon as it is larger than MAX_BODY_BYTES (a larger
 * Content-Length unread) or holds more values than MAX_PAYLOADS could need: what has not come yet is
 * never read (the connection is closed after the answer).
 */
function readBody(req: http.IncomingMessage): Promise<unknown> {
  const declared = Number(req.headers['content-length']);
  if (declared > MAX_BODY_BYTES) return Promise.reject(new BadRequest(`body larger than ${MAX_BODY_BYTES} bytes (Content-Length ${declared})`, 413));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let structural = 0;
    const stop = (err: BadRequest) => {
      req.off('data', onData).off('end', onEnd).pause();
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      structural += countStructural(chunk);
      if (size > MAX_BODY_BYTES) return stop(new BadRequest(`body larger than ${MAX_BODY_BYTES} bytes`, 413));
      if (structural > MAX_STRUCTURAL_BYTES)
        return stop(new BadRequest(`more than ${MAX_PAYLOADS} payloads (${structural} of "{", "[", "," in its first ${size} bytes)`, 413));
      chunks.push(chunk);
    };
    const onEnd = () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        reject(new BadRequest('body is not JSON'));
      }
    };
    req.on('data', onData).on('end', onEnd).on('error', reject);
  });
}

export interface CodecServer {
  url: string;
  close(): Promise<void>;
}

export async function startCodecServer(cfg: CodecServerConfig): Promise<CodecServer> {
  const codec = new EncryptionCodec(cfg.keys);
  const send = (res: http.ServerResponse, status: number, body?: unknown) => {
    if (body === undefined) res.writeHead(status).end();
    else res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const from = req.headers.origin;
    if (from !== undefined && from !== cfg.uiOrigin) return send(res, 403, { error: `origin ${from} is not the configured Web UI origin` });
    if (from !== undefined) {
      res.setHeader('access-control-allow-origin', from);
      res.setHeader('access-control-allow-credentials', 'true');
      res.setHeader('vary', 'Origin');
    }
    if (req.method === 'OPTIONS') {
      res.setHeader('access-control-allow-methods', 'POST, OPTIONS');
      res.setHeader('access-control-allow-headers', 'Content-Type, X-Namespace, Authorization');
      res.setHeader('access-control-max-age', '600');
      // Chrome asks before a public page (the Web UI) may call a loopback address.
      if (req.headers['access-control-request-private-network'] === 'true') res.setHeader('access-control-allow-private-network', 'true');
      return send(res, 204);
    }
    // Only the last path segment counts, so the endpoints may sit under any prefix.
    const op = /\/(encode|decode)$/.exec(new URL(req.url ?? '/', 'http://codec').pathname)?.[1] as 'encode' | 'decode' | undefined;
    if (!op) return send(res, 404, { error: 'POST …/encode or …/decode' });
    if (req.method !== 'POST') return send(res, 405, { error: 'POST only' });
    try {
      const payloads = fromJson(await readBody(req));
      let result: Payload[];
      try {
        result = await codec[op](payloads);
      } catch (err) {
        throw new BadRequest(err instanceof Error ? err.message : String(err));
      }
      send(res, 200, toJson(result));
    } catch (err) {
      if (!(err instanceof BadRequest)) throw err;
      // The rest of a refused body is not read: the connection goes with the answer.
      if (!req.complete) res.setHeader('connection', 'close');
      send(res, err.status, { error: err.message });
    }
  };
  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, { error: String(err) });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(cfg.port, cfg.host, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address.includes(':') ? `[${address}]` : address}:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
