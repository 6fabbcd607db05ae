// Desired specs as composed JSON merge patches (RFC 7386). Pure: no Temporal imports, no Node APIs,
// safe in the workflow sandbox and in unit tests.
//
// Every key is plain data. The VM operator's specs are free-form maps, so `__proto__`,
// `constructor`, `prototype`, `toString`... are keys like any other (JSON.parse makes `__proto__` an
// own property; so does the API server's JSON). Hence: every object built here has a null
// prototype (assigning `__proto__` to it creates a data property, nothing is inherited, no global
// prototype can be reached), keys are only ever enumerated with Object.keys (own, enumerable) and
// read after an own-property check. Null-prototype objects serialize with JSON.stringify exactly
// like plain ones, so Temporal's JSON payload converter and the Kubernetes client carry them as is.
import { dataObject, ownValue } from '../api/data-object';
import type { JsonObject, JsonValue, ManagedObject, NormalizedSpec, ZoneSpec } from '../api/types';
import { STORAGE, versionFor, zoneStorage } from '../api/storage';

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A deep copy; objects get a null prototype; `undefined` members are dropped (as JSON would). */
function copy(v: JsonValue): JsonValue {
  if (Array.isArray(v)) return v.map((x) => (x === undefined ? null : copy(x)));
  if (!isObject(v)) return v;
  const out = dataObject();
  for (const k of Object.keys(v)) {
    const x = v[k];
    if (x !== undefined) out[k] = copy(x);
  }
  return out;
}

/** RFC 7386 MergePatch(target, patch) into a fresh value; neither input is touched. */
function applyValue(target: JsonValue | undefined, patch: JsonValue): JsonValue {
  if (!isObject(patch)) return copy(patch);
  const out = dataObject();
  const t = isObject(target) ? target : undefined;
  // Target keys first, then new ones: the order the API server's merge patch produces.
  if (t) {
    for (const k of Object.keys(t)) {
      const tv = t[k];
      if (tv === undefined) continue;
      const pv = ownValue(patch, k);
      if (pv === undefined) out[k] = copy(tv);
      else if (pv !== null) out[k] = applyValue(tv, pv);
    }
  }
  for (const k of Object.keys(patch)) {
    const pv = patch[k];
    if (pv === undefined || pv === null || (t && ownValue(t, k) !== undefined)) continue;
    out[k] = applyValue(undefined, pv);
  }
  return out;
}

/** One patch equivalent to `a` then `b` (see composePatches for the one case it is not). */
function mergePatches(a: JsonValue | undefined, b: JsonValue): JsonValue {
  if (!isObject(a) || !isObject(b)) return copy(b);
  const out = dataObject();
  for (const k of Object.keys(a)) {
    const av = a[k];
    if (av === undefined) continue;
    const bv = ownValue(b, k);
    out[k] = bv === undefined ? copy(av) : mergePatches(av, bv);
  }
  for (const k of Object.keys(b)) {
    const bv = b[k];
    if (bv !== undefined && !Object.hasOwn(out, k)) out[k] = copy(bv);
  }
  return out;
}

/**
 * Compose merge patches left to right into one patch: applying the result equals applying each in
 * turn, except where RFC 7386 cannot express it in a single patch: a key an earlier patch deletes
 * (`null`) or sets to a non-object, and a later patch sets to an object, merges into the target's
 * old object instead of replacing it. Empty / undefined patches are ignored. The result has null
 * prototypes throughout.
 */
export function composePatches(...patches: (JsonObject | undefined)[]): JsonObject {
  let out: JsonObject = dataObject();
  for (const p of patches) {
    if (!p) continue;
    out = mergePatches(out, p) as JsonObject;
  }
  return out;
}

/** Apply a merge patch to a copy of `target` (the inputs are never mutated). */
export function applyPatch(target: JsonObject | undefined, patch: JsonObject): JsonObject {
  return applyValue(target ?? dataObject(), patch) as JsonObject;
}

/**
 * The storage patch of one zone. A VMCluster: zone full `spec` (if given) → global `overrideSpec` →
 * zone `overrideSpec` → `{ clusterVersion }`. A VMSingle: zone full `spec` → zone `overrideSpec` →
 * `{ image: { tag: singleVersion } }` (the global overlay is a VMCluster spec's).
 */
export function desiredClusterPatch(spec: Pick<NormalizedSpec, 'overrideSpec' | 'clusterVersion' | 'singleVersion'>, zone: ZoneSpec): JsonObject {
  const { kind, object } = zoneStorage(zone);
  const version = STORAGE[kind].versionPatch(versionFor(spec, kind));
  if (kind === 'VMSingle') return composePatches(object.spec, object.overrideSpec, version);
  return composePatches(object.spec, spec.overrideSpec, object.overrideSpec, version);
}

/** The VMCluster is created (with the zone's full spec) when absent only in the full-spec form. */
export function createsObject(obj: ManagedObject | undefined): boolean {
  return !!obj?.spec;
}

/**
 * The server-side apply configuration of a merge patch: a `null` there means "vmrollout does not set
 * this key" (apply has no delete: a key vmrollout stops setting is removed when no other manager
 * owns it), so nulls are dropped, and so are objects left empty by dropping them.
 */
export function appliedConfig(patch: JsonObject): JsonObject {
  const out = dataObject();
  for (const k of Object.keys(patch)) {
    const v = patch[k];
    if (v === undefined || v === null) continue;
    if (!isObject(v)) {
      out[k] = copy(v);
      continue;
    }
    const inner = appliedConfig(v);
    if (Object.keys(inner).length > 0 || Object.keys(v).length === 0) out[k] = inner;
  }
  return out;
}
