// What vmrollout last applied to an object, recorded on the object itself (annotation
// vmrollout.io/applied, written by the same server-side apply as the fields): which VMDistributedCluster
// applied it, in which form, and a hash of every field it set. It is how a later rollout tells a field
// someone changed behind vmrollout's back (drift: taken back) from a field another manager always
// owned (a conflict), how the trigger detects drift without a copy of the spec, and how an object
// created from a full spec is recognised as this VMDistributedCluster's when it carries no
// ownerReference (spec.retainOnDelete). Hashes, not values: a VMUser spec may hold a password.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../api/canonical-json';
import { dataObject, ownValue } from '../api/data-object';
import type { JsonObject, JsonValue } from '../api/types';

export const APPLIED_ANNOTATION = 'vmrollout.io/applied';

/** The form the object is managed in: a full spec (created and owned) or an overlay on an existing object. */
export type ManagedForm = 'spec' | 'overlay';

export interface AppliedRecord {
  /** The VMDistributedCluster that applied it. */
  vmdc: { name: string; uid: string; generation: number };
  form: ManagedForm;
  /** Field path (keys from the object's root) → hash of the value applied there. */
  fields: Array<[string[], string]>;
}

const isObject = (v: JsonValue | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

export function valueHash(v: JsonValue): string {
  return createHash('sha256').update(canonicalJson(v)).digest('hex').slice(0, 16);
}

/**
 * The leaves of an applied value: every non-object value, and every empty object, with its path.
 * Lists are leaves: the VM operator's lists are atomic (a list is owned and compared as a whole).
 */
export function leafFields(v: JsonObject, base: string[] = []): Array<{ path: string[]; value: JsonValue }> {
  const out: Array<{ path: string[]; value: JsonValue }> = [];
  for (const k of Object.keys(v)) {
    const x = v[k];
    if (x === undefined) continue;
    if (isObject(x) && Object.keys(x).length > 0) out.push(...leafFields(x, [...base, k]));
    else out.push({ path: [...base, k], value: x });
  }
  return out;
}

/** A path as the API server names fields in server-side apply conflicts: `.spec.vmstorage.replicaCount`. */
export function fieldPathString(path: readonly string[]): string {
  return path.map((k) => `.${k}`).join('');
}

/** The record of applying `spec` (the object's `.spec`) for a VMDistributedCluster, as the annotation's value. */
export function appliedRecord(vmdc: AppliedRecord['vmdc'], form: ManagedForm, spec: JsonObject): string {
  const record: AppliedRecord = { vmdc, form, fields: leafFields(spec, ['spec']).map((f) => [f.path, valueHash(f.value)]) };
  return JSON.stringify(record);
}

/** The record on an object, or undefined when it has none or it is not one (never throws). */
export function readAppliedRecord(obj: { metadata?: object }): AppliedRecord | undefined {
  const annotations = (obj.metadata as { annotations?: JsonValue } | undefined)?.annotations;
  const text = isObject(annotations) ? annotations[APPLIED_ANNOTATION] : undefined;
  if (typeof text !== 'string') return undefined;
  try {
    const r = JSON.parse(text) as Partial<AppliedRecord>;
    const okVmdc = isObject(r.vmdc as JsonValue) && typeof r.vmdc?.uid === 'string' && typeof r.vmdc?.name === 'string';
    const okFields =
      Array.isArray(r.fields) &&
      r.fields.every((f) => Array.isArray(f) && Array.isArray(f[0]) && f[0].every((k) => typeof k === 'string') && typeof f[1] === 'string');
    return okVmdc && okFields && (r.form === 'spec' || r.form === 'overlay') ? (r as AppliedRecord) : undefined;
  } catch {
    return undefined;
  }
}

function valueAt(obj: JsonValue, path: readonly string[]): JsonValue | undefined {
  let cur: JsonValue | undefined = obj;
  for (const k of path) {
    if (!isObject(cur) || !Object.prototype.hasOwnProperty.call(cur, k)) return undefined;
    cur = cur[k];
  }
  return cur;
}

/** The fields of the record whose live value is no longer what was applied (changed or removed), as field paths. */
export function driftedFields(record: AppliedRecord, live: JsonObject): string[] {
  return record.fields
    .filter(([path, hash]) => {
      const v = valueAt(live, path);
      return v === undefined || valueHash(v) !== hash;
    })
    .map(([path]) => fieldPathString(path));
}

/** Whether two field paths name the same field, or one lies inside the other (`.a.b` in `.a`, `.a[k="x"]` in `.a`). */
function overlaps(a: string, b: string): boolean {
  const within = (x: string, y: string) => x.startsWith(`${y}.`) || x.startsWith(`${y}[`);
  return a === b || within(a, b) || within(b, a);
}

/**
 * The fields a record says vmrollout applied that `next` (the spec about to be applied) no longer
 * sets, with their live values, as an apply configuration of the object (`{ spec: ... }`), or
 * undefined when there are none. Handed over to another manager before the apply, they stay on the
 * object instead of being removed with vmrollout's ownership.
 */
export function releasedFields(record: AppliedRecord, live: JsonObject, next: JsonObject): JsonObject | undefined {
  const kept = leafFields(next, ['spec']).map((f) => fieldPathString(f.path));
  const released = record.fields
    .map(([path]) => path)
    .filter((path) => path.length > 0 && !kept.some((k) => overlaps(k, fieldPathString(path))) && valueAt(live, path) !== undefined);
  // A field inside another released one goes with it; so every object walked below is one made here.
  const names = new Set(released.map((path) => JSON.stringify(path)));
  const out = dataObject();
  for (const path of released) {
    if (path.slice(1).some((_, i) => names.has(JSON.stringify(path.slice(0, i + 1))))) continue;
    // Data objects all the way down: the keys are the object's own (`__proto__` is a legal key in a
    // free-form subtree) or the annotation's, and become data, never a prototype.
    let cur = out;
    for (const k of path.slice(0, -1)) {
      const inner = ownValue(cur, k);
      cur = isObject(inner) ? inner : (cur[k] = dataObject());
    }
    cur[path[path.length - 1]!] = valueAt(live, path)!;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * Whether a conflict on `field` (a path as the API server reports it) is drift of a field the record
 * says vmrollout applied: the field, something inside it (an atomic map or list vmrollout set), or
 * something it lies in, changed since.
 */
export function isDrift(field: string, record: AppliedRecord | undefined, live: JsonObject): boolean {
  return !!record && driftedFields(record, live).some((p) => overlaps(p, field));
}
