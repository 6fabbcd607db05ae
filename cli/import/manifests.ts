// `kubectl vmdc import`'s reading of a file someone else wrote: YAML (or JSON, which is YAML) text to
// plain JSON documents. Pure. The file is hostile input: it is capped in size and depth, YAML aliases
// are refused (a few lines of anchors expand to gigabytes), tags beyond the core schema are refused,
// and every mapping becomes a null-prototype object (dataObject), so `__proto__` is a key like any other.
import { isAlias, isMap, isScalar, isSeq, parseAllDocuments, visit, type Node } from 'yaml';
import { dataObject } from '../../api/data-object';
import type { JsonValue } from '../../api/types';

/** No VMDistributed comes near it; `kubectl get -o yaml` of a large one is a few hundred KiB. */
export const MAX_INPUT_BYTES = 1024 * 1024;
/** Nesting of the documents (a VMDistributed with full specs is ~20 levels deep). */
export const MAX_INPUT_DEPTH = 100;
/** Documents in one stream. */
export const MAX_DOCUMENTS = 100;

export class InputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InputError';
  }
}

function toJson(node: unknown, depth: number, where: string): JsonValue {
  if (depth > MAX_INPUT_DEPTH) throw new InputError(`${where}: nested more than ${MAX_INPUT_DEPTH} levels deep`);
  if (isMap(node)) {
    const out = dataObject();
    for (const pair of node.items) {
      const k = pair.key;
      if (!isScalar(k) || (typeof k.value !== 'string' && typeof k.value !== 'number' && typeof k.value !== 'boolean'))
        throw new InputError(`${where}: a mapping key that is not a string`);
      const key = String(k.value);
      if (Object.hasOwn(out, key)) throw new InputError(`${where}: key ${JSON.stringify(key)} is given twice`);
      out[key] = toJson(pair.value, depth + 1, `${where}.${key}`);
    }
    return out;
  }
  if (isSeq(node)) return node.items.map((x, i) => toJson(x, depth + 1, `${where}[${i}]`));
  if (isScalar(node)) {
    const v = node.value;
    if (v === null || v === undefined) return null;
    if (typeof v === 'string' || typeof v === 'boolean') return v;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw new InputError(`${where}: ${String(v)} is not a JSON number`);
      return v;
    }
    throw new InputError(`${where}: a value of type ${typeof v} (not JSON)`);
  }
  if (node === null || node === undefined) return null;
  throw new InputError(`${where}: not a YAML mapping, list or scalar`);
}

/** Every document of a YAML stream as JSON; throws InputError saying what was refused. */
export function parseManifests(text: string): JsonValue[] {
  if (Buffer.byteLength(text, 'utf8') > MAX_INPUT_BYTES) throw new InputError(`input is larger than ${MAX_INPUT_BYTES} bytes`);
  let docs: ReturnType<typeof parseAllDocuments>;
  try {
    docs = parseAllDocuments(text, { schema: 'core', uniqueKeys: true, prettyErrors: false, customTags: [] });
  } catch (err) {
    // The parser recurses per level: thousands of `[` exhaust the stack before any depth check of ours.
    if (err instanceof RangeError) throw new InputError('input is nested too deep to parse');
    throw err;
  }
  if (!Array.isArray(docs)) throw new InputError('input is not a YAML stream');
  if (docs.length > MAX_DOCUMENTS) throw new InputError(`input has more than ${MAX_DOCUMENTS} documents`);
  return docs.map((doc, i) => {
    const where = `document ${i + 1}`;
    if (doc.errors.length > 0) throw new InputError(`${where}: not valid YAML: ${doc.errors[0]!.message}`);
    visit(doc, {
      Node(_key, node: Node) {
        if (isAlias(node)) throw new InputError(`${where}: YAML aliases (*${node.source}) are refused: write the value out`);
        if (node.tag !== undefined && !node.tag.startsWith('tag:yaml.org,2002:')) throw new InputError(`${where}: the YAML tag ${node.tag} is refused`);
      },
    });
    return toJson(doc.contents, 1, where);
  });
}
