// JSON with object keys sorted (and undefined keys dropped): equal values serialize equally whatever
// their key order. The one serialization every vmrollout hash is taken over; its output must never
// change, since hashes of it are stored (applied-field records on objects, spec hashes in memos).
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJson(x ?? null)).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}
