// A spec as the API server stores it and as the workflow takes it: nulls in declared fields dropped
// (pruneNulls, before validation, as the API server does), then defaults applied, free-form values
// copied and durations in ms (normalize, after validation).
import { isPlainObject } from './json-value';
import type { StrategyDurationField } from './limits';
import {
  canaryAnalysisSchema,
  canarySchema,
  capacityGuardSchema,
  sampleParitySchema,
  strategySchema,
  vmDistributedClusterSpecSchema,
  zoneSchema,
  type VMDistributedClusterSpecOutput,
} from './spec-schema';
import type { Canary, JsonObject, JsonValue, ManagedObject, NormalizedSpec, SampleParitySpec, ZoneSpec } from './types';

/** A deep copy of a (validated, acyclic) JSON value; iterative, so any depth the API server accepts is fine. */
function cloneJson<T extends JsonValue>(v: T): T {
  if (typeof v !== 'object' || v === null) return v;
  const copies = new Map<object, JsonValue>();
  const copyOf = (x: object): JsonValue => {
    let c = copies.get(x);
    if (c === undefined) {
      c = Array.isArray(x) ? [] : {};
      copies.set(x, c);
      pending.push([x, c]);
    }
    return c;
  };
  const pending: [object, JsonValue][] = [];
  const out = copyOf(v);
  while (pending.length > 0) {
    const [from, to] = pending.pop()!;
    if (Array.isArray(from)) {
      const arr = to as JsonValue[];
      for (let i = 0; i < from.length; i++) {
        const x = from[i] as JsonValue;
        arr.push(typeof x === 'object' && x !== null ? copyOf(x) : x);
      }
    } else {
      const obj = to as Record<string, JsonValue>;
      for (const [k, x] of Object.entries(from as Record<string, JsonValue>)) {
        // defineProperty: a "__proto__" key stays a plain own property, as JSON.parse makes it.
        Object.defineProperty(obj, k, { value: typeof x === 'object' && x !== null ? copyOf(x) : x, enumerable: true, writable: true, configurable: true });
      }
    }
  }
  return out as T;
}

function normalizeManaged(m: {
  name: string;
  overrideSpec?: JsonObject | undefined;
  spec?: JsonObject | undefined;
  adopt?: boolean | undefined;
}): ManagedObject {
  const out: ManagedObject = { name: m.name };
  if (m.spec !== undefined) {
    out.spec = cloneJson(m.spec);
    if (m.adopt) out.adopt = true;
  } else if (m.overrideSpec !== undefined) out.overrideSpec = cloneJson(m.overrideSpec);
  return out;
}

/**
 * The validated spec as the workflow takes it: defaults applied, the free-form values copied, the
 * strategy durations in ms (`durationsMs`, as validateSpec parsed them).
 */
export function normalize(s: VMDistributedClusterSpecOutput, durationsMs: Record<StrategyDurationField, number>): NormalizedSpec {
  const zones: ZoneSpec[] = s.zones.map((z) => {
    const zone: ZoneSpec = z.vmsingle ? { name: z.name, vmsingle: normalizeManaged(z.vmsingle) } : { name: z.name, vmcluster: normalizeManaged(z.vmcluster!) };
    if (z.vmuser) zone.vmuser = normalizeManaged(z.vmuser);
    if (z.vmagent) zone.vmagent = normalizeManaged(z.vmagent);
    if (z.remoteWriteURL) zone.remoteWriteURL = z.remoteWriteURL;
    if (z.trafficMode) zone.trafficMode = z.trafficMode;
    return zone;
  });
  const vmauth = normalizeManaged(s.vmauth);
  const vmagent = normalizeManaged(s.vmagent);
  const adopts = [...zones.flatMap((z) => [z.vmcluster, z.vmsingle, z.vmuser, z.vmagent]), vmauth, vmagent].some((m) => m?.adopt);
  return {
    paused: s.paused,
    clusterVersion: s.clusterVersion,
    ...(s.singleVersion !== undefined ? { singleVersion: s.singleVersion } : {}),
    overrideSpec: cloneJson(s.overrideSpec),
    zones,
    vmauth,
    vmagent,
    ...(s.vmuserSelector !== undefined ? { vmuserSelector: s.vmuserSelector } : {}),
    ...(s.fleet ? { fleet: { name: s.fleet.name, region: s.fleet.region } } : {}),
    // Unset stays unset only where it means something else than false (an adopted object is
    // retained): every other spec normalizes, and hashes, as it did when unset meant false.
    ...(s.retainOnDelete !== undefined || !adopts ? { retainOnDelete: s.retainOnDelete ?? false } : {}),
    forceConflicts: s.forceConflicts,
    strategy: {
      order: s.strategy.order,
      readDrainDelayMs: durationsMs.readDrainDelay,
      queueDrainedForMs: durationsMs.queueDrainedFor,
      // -0 passes every check (an integer, not below 0) but is not JSON: JSON.stringify writes it as 0, so a
      // spec carrying it would not survive the trip to the workflow (or a spec hash) unchanged. A byte count is 0.
      queueEmptyBytes: Object.is(s.strategy.queueEmptyBytes, -0) ? 0 : s.strategy.queueEmptyBytes,
      pollIntervalMs: durationsMs.pollInterval,
      zoneTimeoutMs: durationsMs.zoneTimeout,
      pauseBetweenZonesMs: durationsMs.pauseBetweenZones,
      ...(s.strategy.gates.length ? { gates: [...s.strategy.gates] } : {}),
      ...(s.strategy.queueHeadroom === 'Off' ? { queueHeadroom: 'Off' as const } : {}),
      ...(s.strategy.dataCompleteness === 'Off' ? { dataCompleteness: 'Off' as const } : {}),
      ...(s.strategy.dryRun ? { dryRun: true as const } : {}),
      ...(durationsMs.expectedDowntime > 0 ? { expectedDowntimeMs: durationsMs.expectedDowntime } : {}),
      ...(s.strategy.canary ? { canary: normalizeCanary(s.strategy.canary, durationsMs) } : {}),
      ...(s.strategy.capacityGuard ? { capacityGuard: { ...s.strategy.capacityGuard } } : {}),
      ...(s.strategy.sampleParity ? { sampleParity: normalizeSampleParity(s.strategy.sampleParity, durationsMs) } : {}),
    },
  };
}

function normalizeCanary(c: NonNullable<VMDistributedClusterSpecOutput['strategy']['canary']>, durationsMs: Record<StrategyDurationField, number>): Canary {
  const a = c.analysis;
  return {
    ...(c.zone !== undefined ? { zone: c.zone } : {}),
    bakeMs: durationsMs.canaryBake,
    analysis: {
      intervalMs: durationsMs.canaryInterval,
      tenant: a.tenant,
      queries: [...a.queries],
      recentQueries: a.recentQueries,
      maxLatencyRatio: a.maxLatencyRatio,
      tolerance: Object.is(a.tolerance, -0) ? 0 : a.tolerance,
      ...(a.freshnessSelector !== undefined ? { freshnessSelector: a.freshnessSelector } : {}),
      maxIngestionLagMs: durationsMs.canaryMaxIngestionLag,
    },
  };
}

function normalizeSampleParity(
  p: NonNullable<VMDistributedClusterSpecOutput['strategy']['sampleParity']>,
  durationsMs: Record<StrategyDurationField, number>,
): SampleParitySpec {
  return { tenants: [...p.tenants], selector: p.selector, tolerance: Object.is(p.tolerance, -0) ? 0 : p.tolerance, lagMs: durationsMs.sampleParityLag };
}

/** The declared fields of a structural (non-free-form) object of the spec, and its structural children. */
interface Shape {
  keys: readonly string[];
  children?: ReadonlyArray<readonly [string, Shape]>;
}
const MANAGED: Shape = { keys: ['name', 'overrideSpec', 'spec', 'adopt'] };
const STRATEGY: Shape = {
  keys: Object.keys(strategySchema.shape),
  children: [
    ['canary', { keys: Object.keys(canarySchema.shape), children: [['analysis', { keys: Object.keys(canaryAnalysisSchema.shape) }]] }],
    ['capacityGuard', { keys: Object.keys(capacityGuardSchema.shape) }],
    ['sampleParity', { keys: Object.keys(sampleParitySchema.shape) }],
  ],
};
const SPEC: Shape = {
  keys: Object.keys(vmDistributedClusterSpecSchema.shape),
  children: [
    ['vmauth', MANAGED],
    ['vmagent', MANAGED],
    ['strategy', STRATEGY],
  ],
};
const ZONE: Shape = {
  keys: Object.keys(zoneSchema.shape),
  children: [
    ['vmcluster', MANAGED],
    ['vmuser', MANAGED],
    ['vmagent', MANAGED],
  ],
};

/** `obj` without its declared fields that are null (a copy when there are some). */
function withoutNulls(obj: unknown, keys: readonly string[]): unknown {
  if (!isPlainObject(obj) || !keys.some((k) => Object.prototype.hasOwnProperty.call(obj, k) && obj[k] === null)) return obj;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(obj)) {
    if (obj[k] === null && keys.includes(k)) continue;
    Object.defineProperty(out, k, { value: obj[k], enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** `obj` without the declared nulls of `shape`, down its structural children (a copy where there are some). */
function shapedWithoutNulls(raw: unknown, shape: Shape): unknown {
  const top = withoutNulls(raw, shape.keys);
  if (!isPlainObject(top)) return top;
  let obj: Record<string, unknown> = top;
  for (const [key, child] of shape.children ?? []) {
    const value = obj[key];
    const pruned = isPlainObject(value) ? shapedWithoutNulls(value, child) : value;
    if (pruned !== value) obj = { ...obj, [key]: pruned };
  }
  return obj;
}

/**
 * What the API server does first with a custom resource: a null in a declared field that is not
 * `nullable` is dropped (the field then counts as absent: defaulted, or "Required"). Not inside
 * free-form values (overlays, full specs), where null means "delete this field". The input is not
 * modified.
 */
export function pruneNulls(raw: unknown): unknown {
  const spec = shapedWithoutNulls(raw, SPEC);
  if (!isPlainObject(spec) || !Array.isArray(spec.zones)) return spec;
  const zones = spec.zones.map((z: unknown) => shapedWithoutNulls(z, ZONE));
  return zones.some((z, i) => z !== (spec.zones as unknown[])[i]) ? { ...spec, zones } : spec;
}
