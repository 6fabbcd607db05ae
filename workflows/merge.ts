// Desired specs as composed JSON merge patches (RFC 7386). Pure: no Temporal imports, safe in
// the workflow sandbox (json-merge-patch is plain JS and bundles fine) and in unit tests.
import { apply, merge } from 'json-merge-patch';
import type { JsonObject, JsonValue, ManagedObject, NormalizedSpec, ZoneSpec } from '../api/types';

function clone<T extends JsonValue | undefined>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

/** Deep structural equality of JSON values (key order ignored, array order significant). */
export function jsonEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as JsonValue[];
    return a.length === bb.length && a.every((x, i) => jsonEqual(x, bb[i]));
  }
  const ao = a as JsonObject;
  const bo = b as JsonObject;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => Object.prototype.hasOwnProperty.call(bo, k) && jsonEqual(ao[k], bo[k]));
}

/**
 * Compose merge patches left to right into one patch: applying the result equals applying each in
 * turn, except for one case RFC 7386 cannot express in a single patch: a key deleted (`null`) by an
 * earlier patch and set to an object by a later one merges into the target's old object instead of
 * replacing it. Empty / undefined patches are ignored.
 */
export function composePatches(...patches: (JsonObject | undefined)[]): JsonObject {
  let out: JsonObject = {};
  for (const p of patches) {
    if (!p) continue;
    out = merge(out, clone(p)) as JsonObject;
  }
  return out;
}

/** Apply a merge patch to a copy of `target` (the input is never mutated). */
export function applyPatch(target: JsonObject | undefined, patch: JsonObject): JsonObject {
  return apply(clone(target ?? {}), clone(patch)) as JsonObject;
}

/** True when applying `patch` to `current` changes nothing. */
export function isUpToDate(current: JsonObject | undefined, patch: JsonObject): boolean {
  return jsonEqual(applyPatch(current, patch), current ?? {});
}

/**
 * The VMCluster patch of one zone: zone full `spec` (if given) → global `overrideSpec` → zone
 * `overrideSpec` → `{ clusterVersion }`.
 */
export function desiredClusterPatch(spec: Pick<NormalizedSpec, 'overrideSpec' | 'clusterVersion'>, zone: ZoneSpec): JsonObject {
  return composePatches(zone.vmcluster.spec, spec.overrideSpec, zone.vmcluster.overrideSpec, {
    clusterVersion: spec.clusterVersion,
  });
}

/** The VMCluster is created (with the zone's full spec) when absent only in the full-spec form. */
export function createsObject(obj: ManagedObject | undefined): boolean {
  return !!obj?.spec;
}

/**
 * The patch for a VMAgent or VMUser: its full `spec`, or its `overrideSpec`. `undefined` when there
 * is nothing to apply (a bare reference, or an empty overlay).
 */
export function managedObjectPatch(obj: ManagedObject | undefined): JsonObject | undefined {
  if (!obj) return undefined;
  const p = composePatches(obj.spec, obj.overrideSpec);
  return Object.keys(p).length > 0 || obj.spec ? p : undefined;
}
