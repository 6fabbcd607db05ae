// The VMDistributedCluster schema: the single source of truth for validation (validateSpec, used by
// the trigger) and for the CRD (api/crd.ts generates the OpenAPI schema from these zod schemas).
//
// Rules that JSON Schema cannot express (uniqueness, exactly-one-of, duration ranges and whole
// milliseconds, cross-field duration rules, derived-name limits, the remoteWriteURL grammar of
// api/url.ts) are checked here AND carried into the CRD as CEL `x-kubernetes-validations` through
// `.meta()`, so the API server rejects them too. Both sides accept exactly the same specs:
// test/fixtures/bad-specs.ts runs a table of bad specs and generated near-valid values through
// validateSpec and a real API server. The one rule no CRD can express, the nesting depth of
// free-form values, is the API server's own JSON limit, which validateSpec applies exactly.
import { z } from 'zod';
import {
  DURATION_FORMAT_MESSAGE,
  DURATION_MAX_LENGTH,
  DURATION_PATTERN,
  DURATION_WHOLE_MS_CEL,
  DURATION_WHOLE_MS_MESSAGE,
  formatDuration,
  parseDuration,
  type DurationParseResult,
} from './duration';
import { checkHttpURL, HTTP_URL_MESSAGE, HTTP_URL_PATTERN, normalizeURL, redactURL, redactURLsIn, remoteWriteURLKeyCel } from './url';
import type {
  JsonObject,
  JsonValue,
  ManagedObject,
  NormalizedSpec,
  Strategy,
  ZoneSpec,
} from './types';
import { PHASES, ZONE_PHASES } from './types';

// ---------------------------------------------------------------------------------------------
// Limits and rules (documented in docs/cr-reference.md; keep them in sync)

export const LIMITS = {
  minZones: 2,
  /** Bounds the O(n²) CEL uniqueness rules; no real deployment spans more zones. */
  maxZones: 16,
  nameMaxLength: 253,
  zoneNameMaxLength: 63,
  clusterVersionMaxLength: 128,
  urlMaxLength: 2048,
  /** 1 GiB: "empty" thresholds above that are a mistake (e.g. a unit confusion). */
  queueEmptyBytesMax: 1024 * 1024 * 1024,
  /**
   * The API server's own nesting limit: it refuses a request whose JSON objects and arrays nest more
   * than 10000 levels deep, counted from the object's root (level 1; `spec` is level 2).
   */
  serverJsonMaxDepth: 10000,
  /**
   * vmrollout's limit, the one rule stricter than the CRD (no CRD rule can limit the depth of
   * free-form `x-kubernetes-preserve-unknown-fields` values): a value nested deeper cannot be
   * carried safely through the JSON serializers, copies and merges between the API server, Temporal
   * and the workflow (Node's recursive ones overflow the stack near 2000 levels). Refused here, it
   * is a clear Invalid naming the field instead of a trigger or workflow that cannot proceed.
   */
  jsonMaxDepth: 1000,
  /** A Kubernetes Service name: a DNS-1035 label of at most 63 characters. */
  serviceNameMaxLength: 63,
  /** A Kubernetes Secret name: a DNS-1123 subdomain of at most 253 characters. */
  secretNameMaxLength: 253,
} as const;

/** `spec`'s own level in the object (the object's root is level 1). */
const SPEC_LEVEL = 2;

export type StrategyDurationField =
  | 'readDrainDelay'
  | 'queueDrainedFor'
  | 'pollInterval'
  | 'zoneTimeout'
  | 'pauseBetweenZones';

export interface DurationRule {
  default: string;
  min: string;
  max: string;
  description: string;
}

/** Defaults and inclusive ranges of the strategy durations. */
export const DURATION_RULES: Record<StrategyDurationField, DurationRule> = {
  readDrainDelay: {
    default: '30s',
    min: '0s',
    max: '1h',
    description:
      "After every vmauth pod runs the config without a zone, the longest wait for the zone's vmselects to see no new /select/ request for two polls (in-flight queries finish); 0s skips it.",
  },
  queueDrainedFor: {
    default: '1m',
    min: '1s',
    max: '6h',
    description:
      "The vmagent queues for the zone must stay at or below queueEmptyBytes this long, without a break, before the zone rejoins reads.",
  },
  pollInterval: {
    default: '5s',
    min: '100ms',
    max: '5m',
    description: 'How often object statuses and vmagent metrics are polled. At most queueDrainedFor.',
  },
  zoneTimeout: {
    default: '30m',
    min: '1s',
    max: '24h',
    description:
      'Budget of each step of a zone; a step that exhausts it marks the zone Failed. Longer than readDrainDelay and queueDrainedFor.',
  },
  pauseBetweenZones: {
    default: '0s',
    min: '0s',
    max: '24h',
    description: 'Wait between one zone finishing and the next one starting.',
  },
};

export const DEFAULT_ORDER = 'Shuffle' as const;
export const DEFAULT_QUEUE_EMPTY_BYTES = 0;

function ms(d: string): number {
  const r = parseDuration(d);
  if (!r.ok) throw new Error(`bad built-in duration ${d}`);
  return r.ms;
}

/** The rules' durations in ms, parsed once at load. */
const RULE_MS = Object.fromEntries(
  Object.entries(DURATION_RULES).map(([field, rule]) => [field, { default: ms(rule.default), min: ms(rule.min), max: ms(rule.max) }]),
) as Record<StrategyDurationField, { default: number; min: number; max: number }>;

/**
 * The durations parsed during the current validateSpec call, by text: the zod refinement parses a
 * strategy duration, and the cross-field rules and normalize() reuse that result, so each string
 * is parsed once per validation. Set only while validateSpec runs (synchronously); outside it
 * (e.g. strategySchema.parse) parseDurationOnce just parses.
 */
let durationMemo: Map<string, DurationParseResult> | undefined;

function parseDurationOnce(value: unknown): DurationParseResult {
  if (typeof value !== 'string' || durationMemo === undefined) return parseDuration(value);
  let r = durationMemo.get(value);
  if (r === undefined) {
    r = parseDuration(value);
    durationMemo.set(value, r);
  }
  return r;
}

/** The strategy a spec without `strategy` gets. */
export const DEFAULT_STRATEGY: Strategy = {
  order: DEFAULT_ORDER,
  readDrainDelayMs: ms(DURATION_RULES.readDrainDelay.default),
  queueDrainedForMs: ms(DURATION_RULES.queueDrainedFor.default),
  queueEmptyBytes: DEFAULT_QUEUE_EMPTY_BYTES,
  pollIntervalMs: ms(DURATION_RULES.pollInterval.default),
  zoneTimeoutMs: ms(DURATION_RULES.zoneTimeout.default),
  pauseBetweenZonesMs: ms(DURATION_RULES.pauseBetweenZones.default),
};

/** Lowercase RFC 1123 subdomain (Kubernetes object names). */
export const DNS1123_SUBDOMAIN_PATTERN =
  '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
/** Lowercase RFC 1123 label (zone names: they end up in labels, ids and metric labels). */
export const DNS1123_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
/** A container image tag (OCI distribution spec grammar). */
export const IMAGE_TAG_PATTERN = '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$';

// ---------------------------------------------------------------------------------------------
// Building blocks

function describe(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'an array';
  switch (typeof input) {
    case 'string':
      return input.length > 40 ? `a string` : `string ${JSON.stringify(input)}`;
    case 'number':
      return `number ${String(input)}`;
    case 'boolean':
      return `boolean ${String(input)}`;
    case 'object':
      return 'an object';
    case 'undefined':
      return 'nothing';
    default:
      return `a ${typeof input}`;
  }
}

/**
 * A name the VM operator derives from an object's name, that vmrollout relies on: the operator's
 * default (prefixed) naming, e.g. `vminsert-<VMCluster name>` (VMCluster.PrefixedName), or
 * `vmagent-<name>` / `vmauth-<name>` (VMAgent/VMAuth.PrefixedName), `vmuser-<name>` (VMUser's Secret).
 */
export interface DerivedName {
  /** e.g. `vminsert-` */
  prefixes: readonly string[];
  /** What the derived names must be. */
  kind: 'Service' | 'Secret';
}

/** The names vmrollout derives per managed kind, and the limits that follow. */
export const DERIVED_NAMES = {
  VMCluster: { prefixes: ['vminsert-', 'vmselect-'], kind: 'Service' },
  VMAgent: { prefixes: ['vmagent-'], kind: 'Service' },
  VMAuth: { prefixes: ['vmauth-'], kind: 'Service' },
  VMUser: { prefixes: ['vmuser-'], kind: 'Secret' },
} as const satisfies Record<string, DerivedName>;
export type ManagedKind = keyof typeof DERIVED_NAMES;

/** The longest name of `kind` whose derived names all fit. */
export function derivedNameMaxLength(kind: ManagedKind): number {
  const d: DerivedName = DERIVED_NAMES[kind];
  const limit = d.kind === 'Service' ? LIMITS.serviceNameMaxLength : LIMITS.secretNameMaxLength;
  return limit - Math.max(...d.prefixes.map((p) => p.length));
}

function derivedList(kind: ManagedKind): string {
  return DERIVED_NAMES[kind].prefixes.map((p) => `${p}<name>`).join(' and ');
}

/** The messages of the derived-name rules (the same in validateSpec and the CRD). */
export function derivedNameMessages(kind: ManagedKind): { length: string; dots?: string } {
  const d: DerivedName = DERIVED_NAMES[kind];
  const max = derivedNameMaxLength(kind);
  const names = derivedList(kind);
  if (d.kind === 'Secret') {
    return { length: `must be at most ${max} characters: ${names} must fit a ${LIMITS.secretNameMaxLength}-character Secret name` };
  }
  return {
    length: `must be at most ${max} characters: ${names} must fit a ${LIMITS.serviceNameMaxLength}-character Service name`,
    dots: `must not contain '.': ${names} must be a valid Service name (a DNS-1035 label)`,
  };
}

function objectName(kind: ManagedKind, description: string) {
  const max = derivedNameMaxLength(kind);
  const messages = derivedNameMessages(kind);
  const rules: { rule: string; message: string }[] = [{ rule: `self.size() <= ${max}`, message: messages.length }];
  let schema = z
    .string()
    .min(1, { error: 'must not be empty' })
    .max(LIMITS.nameMaxLength, { error: `must be at most ${LIMITS.nameMaxLength} characters` })
    .regex(new RegExp(DNS1123_SUBDOMAIN_PATTERN), {
      error: `must be a valid ${kind} name: a lowercase DNS-1123 subdomain (a-z, 0-9, '-' and '.', starting and ending with a letter or digit)`,
    })
    .refine((v) => v.length <= max, { error: messages.length });
  if (messages.dots !== undefined) {
    schema = schema.refine((v) => !v.includes('.'), { error: messages.dots });
    rules.push({ rule: "!self.contains('.')", message: messages.dots });
  }
  const fit = DERIVED_NAMES[kind].prefixes.length > 1 ? 'fit' : 'fits';
  return schema.describe(`${description} At most ${max} characters, so that ${derivedList(kind)} ${fit}.`).meta({ 'x-kubernetes-validations': rules });
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  // Realm-independent: an object literal's prototype is an Object.prototype (of any realm) or null.
  if (Object.prototype.toString.call(v) !== '[object Object]') return false;
  const proto = Object.getPrototypeOf(v) as object | null;
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/** The children of a JSON container: [key, value] pairs (array slots included, empty ones as undefined). */
function childrenOf(v: object): [string | number, unknown][] {
  if (Array.isArray(v)) return Array.from({ length: v.length }, (_, i) => [i, v[i]] as [number, unknown]);
  return Object.keys(v).map((k) => [k, (v as Record<string, unknown>)[k]]);
}

function isContainer(v: unknown): v is object {
  return Array.isArray(v) || isPlainObject(v);
}

/** The path from the root to a node of an iterative walk. */
interface Trail {
  key: string | number;
  parent: Trail | undefined;
}

function trailPath(t: Trail | undefined): (string | number)[] {
  const out: (string | number)[] = [];
  for (let n = t; n; n = n.parent) out.push(n.key);
  return out.reverse();
}

/**
 * Finds the first non-JSON value inside a candidate JSON value (a value JSON cannot carry, an empty
 * array slot, or a cycle); returns its relative path. Iterative: depth is bounded only by memory.
 */
function findNonJson(root: unknown): { path: (string | number)[]; why: string } | undefined {
  const done = new Set<object>();
  const onPath = new Set<object>();
  // Depth-first, children after parents; a container is left (exit) once its children are done.
  const stack: { v: unknown; trail: Trail | undefined; exit?: boolean; slot?: boolean }[] = [{ v: root, trail: undefined }];
  while (stack.length > 0) {
    const { v, trail, exit, slot } = stack.pop()!;
    if (exit) {
      onPath.delete(v as object);
      done.add(v as object);
      continue;
    }
    if (slot) return { path: trailPath(trail), why: 'must be a JSON value (got an empty array slot)' };
    if (v === null || typeof v === 'string' || typeof v === 'boolean') continue;
    if (typeof v === 'number') {
      if (Number.isFinite(v)) continue;
      return { path: trailPath(trail), why: `must be a JSON value (got ${String(v)})` };
    }
    if (!isContainer(v)) return { path: trailPath(trail), why: `must be a JSON value (got ${describe(v)})` };
    if (onPath.has(v)) return { path: trailPath(trail), why: 'must be a JSON value (got a reference to an enclosing object: a cycle)' };
    if (done.has(v)) continue; // shared (not cyclic): already checked
    onPath.add(v);
    stack.push({ v, trail, exit: true });
    const kids = childrenOf(v);
    for (let i = kids.length - 1; i >= 0; i--) {
      const [key, child] = kids[i]!;
      const t = { key, parent: trail };
      stack.push(Array.isArray(v) && !(key in v) ? { v: undefined, trail: t, slot: true } : { v: child, trail: t });
    }
  }
  return undefined;
}

/**
 * How many levels of JSON objects and arrays `root` nests (a scalar: 0; `{}`: 1; `{"a": []}`: 2),
 * iteratively; shared sub-values are measured once, cycles count as infinitely deep.
 */
export function jsonDepth(root: unknown): number {
  const height = new Map<object, number>();
  const stack: { v: object; exit: boolean }[] = [];
  if (isContainer(root)) stack.push({ v: root, exit: false });
  while (stack.length > 0) {
    const { v, exit } = stack.pop()!;
    if (exit) {
      let h = 0;
      for (const [, child] of childrenOf(v)) {
        if (isContainer(child)) h = Math.max(h, height.get(child) ?? Infinity);
      }
      height.set(v, h + 1);
      continue;
    }
    if (height.has(v)) continue;
    height.set(v, Infinity); // in progress: a cycle back to it stays infinite
    stack.push({ v, exit: true });
    for (const [, child] of childrenOf(v)) if (isContainer(child) && !height.has(child)) stack.push({ v: child, exit: false });
  }
  return isContainer(root) ? (height.get(root) ?? Infinity) : 0;
}

/**
 * The problem with a spec nested deeper than vmrollout accepts (LIMITS.jsonMaxDepth), reported at the top of the
 * deepest branch (e.g. `spec.overrideSpec` or `spec.zones[1].vmcluster.spec`), or undefined.
 */
function depthIssue(spec: unknown): ValidationIssue | undefined {
  const max = LIMITS.jsonMaxDepth - SPEC_LEVEL + 1;
  const depth = jsonDepth(spec);
  if (depth <= max) return undefined;
  // Follow the deepest branch down to the free-form field it is in (at most 4 keys below spec).
  const path: (string | number)[] = [];
  let node: unknown = spec;
  while (path.length < 4 && isContainer(node)) {
    let best: [string | number, unknown] | undefined;
    let bestDepth = -1;
    for (const [key, child] of childrenOf(node)) {
      const d = jsonDepth(child);
      if (d > bestDepth) [best, bestDepth] = [[key, child], d];
    }
    if (!best || bestDepth === 0) break;
    path.push(best[0]);
    node = best[1];
    if (typeof best[0] === 'string' && (best[0] === 'overrideSpec' || best[0] === 'spec')) break;
  }
  const levels = depth === Infinity ? 'without end (a cycle)' : `${depth + SPEC_LEVEL - 1} levels deep`;
  return {
    path: formatPath(path),
    message: `is nested too deep: vmrollout refuses JSON objects and arrays nested more than ${LIMITS.jsonMaxDepth} levels deep, counted from the object's root (this value reaches ${levels}; the API server's own limit is ${LIMITS.serverJsonMaxDepth})`,
  };
}

/**
 * A free-form JSON object (a VMCluster/VMUser/VMAgent spec or an overlay). Not an array, not null,
 * not a scalar. In the CRD: `type: object` + `x-kubernetes-preserve-unknown-fields`.
 */
function jsonObject(description: string) {
  return z
    .custom<JsonObject>()
    .superRefine((v, ctx) => {
      if (!isPlainObject(v)) {
        ctx.addIssue({ code: 'custom', message: `must be an object (a map of fields), not ${describe(v)}` });
        return;
      }
      const bad = findNonJson(v);
      if (bad) ctx.addIssue({ code: 'custom', message: bad.why, path: bad.path });
    })
    // atomic: server-side apply owns the value as a whole, so managedFields do not mirror its nesting
    // (an object nested near the API server's JSON depth limit would otherwise be stored with
    // managedFields one level too deep to read back, breaking every LIST and watch of the resource).
    .meta({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true, 'x-kubernetes-map-type': 'atomic', description });
}

const BOTH_FORMS_MESSAGE =
  'set either overrideSpec (patch the existing object) or spec (create it with this name), not both';
export const ADOPT_MESSAGE = 'adopt applies to the full-spec form only (set spec, or remove adopt)';

function managedObject(kind: ManagedKind, what: string) {
  return z
    .strictObject({
      name: objectName(kind, `Name of the ${kind} (in the namespace of this object).`),
      overrideSpec: jsonObject(
        `Overlay (JSON merge patch, RFC 7386) applied to the existing ${kind}'s spec. Exclusive with spec.`,
      ).optional(),
      spec: jsonObject(
        `A full ${kind} spec: the ${kind} is created with this name if it does not exist, and owned by this object (see retainOnDelete). Exclusive with overrideSpec.`,
      ).optional(),
      adopt: z
        .boolean()
        .optional()
        .describe(`With spec only: take over an existing ${kind} that this object does not own yet (without it, such an object is refused).`),
    })
    .describe(`${what}: a reference to an existing ${kind} (name, optionally with overrideSpec) or a full spec to create it (name + spec).`)
    .meta({
      'x-kubernetes-validations': [
        { rule: '!(has(self.overrideSpec) && has(self.spec))', message: BOTH_FORMS_MESSAGE },
        { rule: '!has(self.adopt) || !self.adopt || has(self.spec)', message: ADOPT_MESSAGE },
      ],
    });
}

function durationRangeRule(rule: DurationRule): string {
  return `duration(self) >= duration('${rule.min}') && duration(self) <= duration('${rule.max}')`;
}

function rangeMessage(rule: DurationRule): string {
  return `must be between ${rule.min} and ${rule.max}`;
}

function durationField(field: StrategyDurationField) {
  const rule = DURATION_RULES[field];
  const { min: minMs, max: maxMs } = RULE_MS[field];
  return z
    .string({ error: (iss) => (iss.input === undefined ? undefined : `${DURATION_FORMAT_MESSAGE}, as a string (got ${describe(iss.input)})`) })
    .superRefine((v, ctx) => {
      const r = parseDurationOnce(v);
      if (!r.ok) {
        ctx.addIssue({ code: 'custom', message: `${r.message} (got ${JSON.stringify(v.slice(0, 40))})` });
      } else if (r.ms < minMs || r.ms > maxMs) {
        ctx.addIssue({ code: 'custom', message: `${rangeMessage(rule)} (got ${v})` });
      }
    })
    .meta({
      pattern: DURATION_PATTERN,
      maxLength: DURATION_MAX_LENGTH,
      description: `${rule.description} A duration like 30s, 1m or 1h30m; ${rule.min} to ${rule.max}. Default ${rule.default}.`,
      'x-kubernetes-validations': [
        { rule: DURATION_WHOLE_MS_CEL, message: DURATION_WHOLE_MS_MESSAGE },
        { rule: durationRangeRule(rule), message: rangeMessage(rule) },
      ],
    })
    .default(rule.default);
}

export const REMOTE_WRITE_URL_UNIQUE_MESSAGE =
  'remoteWriteURL must be unique across zones (compared normalized: host case-insensitive, default port dropped, empty path as /)';

/** The uniqueness rule only looks at URLs that start like one (others fail their own rule). */
const HTTP_SCHEME_CEL = (v: string) => `(${v}.remoteWriteURL.startsWith('http://') || ${v}.remoteWriteURL.startsWith('https://'))`;

/** `!has(self.x) || ...` guards keep the rules correct even if defaulting did not run. */
const STRATEGY_CEL_RULES = [
  {
    rule: "!has(self.pollInterval) || !has(self.queueDrainedFor) || duration(self.pollInterval) <= duration(self.queueDrainedFor)",
    message: 'pollInterval must not be longer than queueDrainedFor',
    fieldPath: '.pollInterval',
  },
  {
    rule: "!has(self.zoneTimeout) || !has(self.queueDrainedFor) || duration(self.zoneTimeout) > duration(self.queueDrainedFor)",
    message: 'zoneTimeout must be longer than queueDrainedFor',
    fieldPath: '.zoneTimeout',
  },
  {
    rule: "!has(self.zoneTimeout) || !has(self.readDrainDelay) || duration(self.zoneTimeout) > duration(self.readDrainDelay)",
    message: 'zoneTimeout must be longer than readDrainDelay',
    fieldPath: '.zoneTimeout',
  },
];

const ZONES_CEL_RULES = [
  {
    rule: 'self.all(a, self.exists_one(b, b.vmcluster.name == a.vmcluster.name))',
    message: 'every zone must have its own VMCluster (vmcluster.name must be unique)',
  },
  {
    rule: 'self.all(a, !has(a.vmuser) || self.exists_one(b, has(b.vmuser) && b.vmuser.name == a.vmuser.name))',
    message: 'vmuser.name must be unique across zones',
  },
  {
    rule: `self.all(a, !has(a.remoteWriteURL) || !${HTTP_SCHEME_CEL('a')} || self.exists_one(b, has(b.remoteWriteURL) && ${HTTP_SCHEME_CEL('b')} && ${remoteWriteURLKeyCel('b.remoteWriteURL')} == ${remoteWriteURLKeyCel('a.remoteWriteURL')}))`,
    message: REMOTE_WRITE_URL_UNIQUE_MESSAGE,
  },
];

/** The URL rule in CEL: the grammar of api/url.ts, as a raw string (the pattern has no `"`). */
export const REMOTE_WRITE_URL_CEL = `self == '' || self.matches(r"${HTTP_URL_PATTERN}")`;

// ---------------------------------------------------------------------------------------------
// The spec

export const strategySchema = z
  .strictObject({
    order: z
      .enum(['Shuffle', 'Declared'])
      .default(DEFAULT_ORDER)
      .describe('Zone order: Shuffle (a deterministic shuffle seeded per generation) or Declared (as listed).'),
    readDrainDelay: durationField('readDrainDelay'),
    queueDrainedFor: durationField('queueDrainedFor'),
    queueEmptyBytes: z
      .number()
      .int({ error: 'must be a whole number of bytes' })
      .min(0, { error: 'must not be negative' })
      .max(LIMITS.queueEmptyBytesMax, { error: `must be at most ${LIMITS.queueEmptyBytesMax} (1 GiB)` })
      .default(DEFAULT_QUEUE_EMPTY_BYTES)
      .describe('A zone\'s queue counts as empty at or below this many pending bytes, summed over vmagent pods. 0 to 1 GiB.'),
    pollInterval: durationField('pollInterval'),
    zoneTimeout: durationField('zoneTimeout'),
    pauseBetweenZones: durationField('pauseBetweenZones'),
  })
  .describe('How the rollout proceeds. All fields are optional.')
  .meta({ 'x-kubernetes-validations': STRATEGY_CEL_RULES });

export const zoneSchema = z.strictObject({
  name: z
    .string()
    .min(1, { error: 'must not be empty' })
    .max(LIMITS.zoneNameMaxLength, { error: `must be at most ${LIMITS.zoneNameMaxLength} characters` })
    .regex(new RegExp(DNS1123_LABEL_PATTERN), {
      error: "must be a lowercase DNS-1123 label (a-z, 0-9 and '-', starting and ending with a letter or digit), e.g. az-a",
    })
    .describe('Zone name, unique in the list (e.g. az-a).'),
  vmcluster: managedObject('VMCluster', "The zone's VMCluster"),
  vmuser: managedObject('VMUser', 'Optional VMUser that routes reads to this zone').optional(),
  remoteWriteURL: z
    .string()
    .max(LIMITS.urlMaxLength, { error: `must be at most ${LIMITS.urlMaxLength} characters` })
    .superRefine((v, ctx) => {
      if (v === '') return;
      const message = checkHttpURL(v);
      if (message) ctx.addIssue({ code: 'custom', message });
    })
    .meta({
      // A CEL rule rather than `pattern`: the API server's pattern error quotes the value, and a
      // remoteWriteURL may carry credentials. CEL errors name the rule, not the value.
      'x-kubernetes-validations': [{ rule: REMOTE_WRITE_URL_CEL, message: HTTP_URL_MESSAGE }],
    })
    .describe(
      "This zone's URL in the VMAgent's spec.remoteWrite list, when it is not the zone's vminsert service URL. Empty means unset. " +
        'May carry credentials (https://user:password@host/...); vmrollout never displays them.',
    )
    .optional(),
});


export const vmDistributedClusterSpecSchema = z
  .strictObject({
    paused: z
      .boolean()
      .default(false)
      .describe('true: stop at the next safe point; false: go on.'),
    clusterVersion: z
      .string({ error: (iss) => (iss.input === undefined ? 'is required: the image tag every zone\'s VMCluster gets, e.g. v1.150.0-cluster' : undefined) })
      .min(1, { error: 'must not be empty: the image tag every zone\'s VMCluster gets, e.g. v1.150.0-cluster' })
      .max(LIMITS.clusterVersionMaxLength, { error: `must be at most ${LIMITS.clusterVersionMaxLength} characters` })
      .regex(new RegExp(IMAGE_TAG_PATTERN), {
        error: "must be an image tag (letters, digits, '_', '.' and '-', not starting with '.' or '-'), e.g. v1.150.0-cluster",
      })
      .describe("Image tag set as every zone's VMCluster spec.clusterVersion, e.g. v1.150.0-cluster."),
    overrideSpec: jsonObject('Global VMCluster spec overlay (JSON merge patch, RFC 7386), applied before each zone\'s overlay.').default(
      {},
    ),
    zones: z
      .array(zoneSchema)
      .min(LIMITS.minZones, { error: `must list at least ${LIMITS.minZones} zones` })
      .max(LIMITS.maxZones, { error: `must list at most ${LIMITS.maxZones} zones` })
      .describe('The zones, one VMCluster each; at least 2, names unique.')
      .meta({
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        'x-kubernetes-validations': ZONES_CEL_RULES,
      }),
    vmauth: managedObject('VMAuth', 'The global VMAuth in front of the zones, whose read routes are switched'),
    vmagent: managedObject('VMAgent', 'The one VMAgent that writes to every zone'),
    retainOnDelete: z
      .boolean()
      .default(false)
      .describe('true: the objects created from full specs are not owned, and stay when this object is deleted; false: deleting this object deletes them.'),
    forceConflicts: z
      .boolean()
      .default(false)
      .describe(
        'true: take over fields of the managed objects that another field manager owns (server-side apply force). ' +
          'false: such a conflict fails the zone while it is still in reads, naming the field and the manager.',
      ),
    strategy: strategySchema.default(() => strategySchema.parse({})),
  })
  .describe('Desired state of a VictoriaMetrics deployment spread over zones.');

/** The spec as written in a custom resource (defaults not applied, durations as strings). */
export type VMDistributedClusterSpecInput = z.input<typeof vmDistributedClusterSpecSchema>;
type SpecOutput = z.output<typeof vmDistributedClusterSpecSchema>;

// ---------------------------------------------------------------------------------------------
// The status (written by vmrollout only; the schema documents it and shapes the CRD)

const timestamp = (description: string) => z.string().meta({ format: 'date-time' }).describe(description);
const generation = (description: string) => z.number().int().min(0).meta({ format: 'int64' }).describe(description);

export const conditionSchema = z.object({
  type: z.enum(['Ready', 'Progressing', 'Paused', 'Valid', 'Drifted']).describe('Condition type.'),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string().max(1024).describe('CamelCase reason.'),
  message: z.string().max(32768),
  lastTransitionTime: timestamp('When the condition last changed status.'),
  observedGeneration: generation('The metadata.generation the condition was set for.').optional(),
});

export const zoneStatusSchema = z.object({
  name: z.string(),
  phase: z.enum(ZONE_PHASES),
  vmclusterGeneration: generation('The VMCluster generation the upgrade patch produced.').optional(),
  startedAt: timestamp('When the zone started.').optional(),
  stepStartedAt: timestamp("When the zone's current step began (a Failed zone keeps the failed step's).").optional(),
  finishedAt: timestamp('When the zone finished.').optional(),
  message: z.string().optional(),
});

export const vmDistributedClusterStatusSchema = z
  .object({
    observedGeneration: generation('The metadata.generation the trigger last acted on.').optional(),
    phase: z
      .enum(PHASES)
      .optional(),
    message: z.string().optional(),
    workflow: z
      .object({ id: z.string(), runId: z.string() })
      .describe('The Temporal workflow of the observed generation.')
      .optional(),
    currentZone: z.string().optional(),
    zonesOutOfRotation: z.array(z.string()).describe('Zones currently removed from read routes.').optional(),
    zones: z
      .array(zoneStatusSchema)
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] })
      .optional(),
    conditions: z
      .array(conditionSchema)
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] })
      .optional(),
  })
  .describe('Observed state, written by vmrollout.');

// ---------------------------------------------------------------------------------------------
// Validation

export interface ValidationIssue {
  /** e.g. `spec.zones[1].vmcluster.name` */
  path: string;
  message: string;
}

export type ValidationResult =
  | { success: true; spec: NormalizedSpec }
  | { success: false; issues: ValidationIssue[] };

const IDENT_RE = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** `['zones', 1, 'vmcluster', 'name']` → `spec.zones[1].vmcluster.name` */
export function formatPath(path: readonly PropertyKey[], root = 'spec'): string {
  let out = root;
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (typeof seg === 'string' && IDENT_RE.test(seg)) out += `.${seg}`;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out;
}

/** Messages for issues whose schema has no message of its own. */
function genericMessage(iss: {
  code?: string;
  input?: unknown;
  expected?: string;
  values?: readonly unknown[];
  minimum?: unknown;
  maximum?: unknown;
  origin?: string;
}): string | undefined {
  switch (iss.code) {
    case 'invalid_type':
      if (iss.input === undefined) return 'is required';
      return `must be ${article(iss.expected ?? 'value')} (got ${describe(iss.input)})`;
    case 'invalid_value':
      return `must be one of ${(iss.values ?? []).map((v) => JSON.stringify(v)).join(', ')} (got ${describe(iss.input)})`;
    case 'too_small':
      return `must be at least ${String(iss.minimum)}${iss.origin === 'string' ? ' characters' : ''}`;
    case 'too_big':
      return `must be at most ${String(iss.maximum)}${iss.origin === 'string' ? ' characters' : ''}`;
    default:
      return undefined;
  }
}

function article(expected: string): string {
  if (expected === 'object' || expected === 'array' || expected === 'integer') return `an ${expected}`;
  if (expected === 'record') return 'an object';
  if (expected === 'nonoptional') return 'set';
  return `a ${expected}`;
}

function get(v: unknown, key: string): unknown {
  return isPlainObject(v) && Object.prototype.hasOwnProperty.call(v, key) ? v[key] : undefined;
}

/** Rules across fields, checked on the raw input (whatever its shape), so all problems are reported at once. */
function crossFieldIssues(raw: unknown): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (!isPlainObject(raw)) return issues;

  const bothForms = (obj: unknown, path: (string | number)[]) => {
    if (get(obj, 'overrideSpec') !== undefined && get(obj, 'spec') !== undefined) {
      issues.push({ path: formatPath(path), message: BOTH_FORMS_MESSAGE });
    }
    if (get(obj, 'adopt') === true && get(obj, 'spec') === undefined) issues.push({ path: formatPath(path), message: ADOPT_MESSAGE });
  };

  const zones = raw.zones;
  if (Array.isArray(zones)) {
    const seen = {
      name: new Map<string, string>(),
      vmcluster: new Map<string, string>(),
      vmuser: new Map<string, string>(),
      url: new Map<string, string>(),
    };
    const unique = (
      map: Map<string, string>,
      value: unknown,
      path: (string | number)[],
      what: (v: string) => string,
      key: (v: string) => string | undefined = (v) => v,
    ) => {
      if (typeof value !== 'string' || value === '') return;
      const k = key(value);
      if (k === undefined) return;
      const p = formatPath(path);
      const first = map.get(k);
      if (first !== undefined) issues.push({ path: p, message: `${what(value)} is used twice (also ${first})` });
      else map.set(k, p);
    };
    // As the CRD's rule: URLs that start like one, compared normalized; displayed redacted.
    const urlKey = (v: string) => (v.startsWith('http://') || v.startsWith('https://') ? normalizeURL(v) : undefined);
    const urlWhat = (v: string) =>
      `remoteWriteURL ${JSON.stringify(redactURL(v))}${normalizeURL(v) === v ? '' : ` (normalized ${JSON.stringify(redactURL(normalizeURL(v)))})`}`;
    zones.forEach((zone: unknown, i) => {
      unique(seen.name, get(zone, 'name'), ['zones', i, 'name'], (v) => `zone name ${JSON.stringify(v)}`);
      const vmcluster = get(zone, 'vmcluster');
      unique(seen.vmcluster, get(vmcluster, 'name'), ['zones', i, 'vmcluster', 'name'], (v) => `VMCluster name ${JSON.stringify(v)}`);
      bothForms(vmcluster, ['zones', i, 'vmcluster']);
      const vmuser = get(zone, 'vmuser');
      unique(seen.vmuser, get(vmuser, 'name'), ['zones', i, 'vmuser', 'name'], (v) => `VMUser name ${JSON.stringify(v)}`);
      bothForms(vmuser, ['zones', i, 'vmuser']);
      unique(seen.url, get(zone, 'remoteWriteURL'), ['zones', i, 'remoteWriteURL'], urlWhat, urlKey);
    });
  }
  bothForms(raw.vmagent, ['vmagent']);
  bothForms(raw.vmauth, ['vmauth']);

  const deep = depthIssue(raw);
  if (deep) issues.push(deep);

  // Strategy: only when the involved durations are individually valid (else they already have an issue).
  const strategy = raw.strategy === undefined ? {} : raw.strategy;
  if (isPlainObject(strategy)) {
    const d = (field: StrategyDurationField): { ms: number; text: string } | undefined => {
      const rule = DURATION_RULES[field];
      const limits = RULE_MS[field];
      const value = get(strategy, field);
      if (value === undefined) return { ms: limits.default, text: `${rule.default} (default)` };
      const r = parseDurationOnce(value);
      if (!r.ok || r.ms < limits.min || r.ms > limits.max) return undefined;
      return { ms: r.ms, text: String(value) };
    };
    const poll = d('pollInterval');
    const drained = d('queueDrainedFor');
    const drain = d('readDrainDelay');
    const timeout = d('zoneTimeout');
    if (poll && drained && poll.ms > drained.ms) {
      issues.push({
        path: 'spec.strategy.pollInterval',
        message: `must not be longer than strategy.queueDrainedFor (${poll.text} > ${drained.text}), or the queues are never sampled twice`,
      });
    }
    if (timeout && drained && timeout.ms <= drained.ms) {
      issues.push({
        path: 'spec.strategy.zoneTimeout',
        message: `must be longer than strategy.queueDrainedFor (${timeout.text} <= ${drained.text}), or no zone can ever finish`,
      });
    }
    if (timeout && drain && timeout.ms <= drain.ms) {
      issues.push({
        path: 'spec.strategy.zoneTimeout',
        message: `must be longer than strategy.readDrainDelay (${timeout.text} <= ${drain.text}), or no zone can ever finish`,
      });
    }
  }
  return issues;
}

function toIssues(error: z.ZodError): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const iss of error.issues) {
    if (iss.code === 'unrecognized_keys') {
      for (const key of iss.keys) out.push({ path: formatPath([...iss.path, key]), message: `unknown field ${JSON.stringify(key)}` });
    } else if (iss.code === 'invalid_union') {
      out.push({ path: formatPath(iss.path), message: 'must be a JSON value' });
    } else {
      out.push({ path: formatPath(iss.path), message: iss.message });
    }
  }
  return out;
}

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

function normalizeManaged(m: { name: string; overrideSpec?: JsonObject | undefined; spec?: JsonObject | undefined; adopt?: boolean | undefined }): ManagedObject {
  const out: ManagedObject = { name: m.name };
  if (m.spec !== undefined) {
    out.spec = cloneJson(m.spec);
    if (m.adopt) out.adopt = true;
  } else if (m.overrideSpec !== undefined) out.overrideSpec = cloneJson(m.overrideSpec);
  return out;
}

function normalize(s: SpecOutput): NormalizedSpec {
  const durationMs = (v: string) => {
    const r = parseDurationOnce(v);
    if (!r.ok) throw new Error(`unreachable: ${v} passed validation`);
    return r.ms;
  };
  const zones: ZoneSpec[] = s.zones.map((z) => {
    const zone: ZoneSpec = { name: z.name, vmcluster: normalizeManaged(z.vmcluster) };
    if (z.vmuser) zone.vmuser = normalizeManaged(z.vmuser);
    if (z.remoteWriteURL) zone.remoteWriteURL = z.remoteWriteURL;
    return zone;
  });
  return {
    paused: s.paused,
    clusterVersion: s.clusterVersion,
    overrideSpec: cloneJson(s.overrideSpec),
    zones,
    vmauth: normalizeManaged(s.vmauth),
    vmagent: normalizeManaged(s.vmagent),
    retainOnDelete: s.retainOnDelete,
    forceConflicts: s.forceConflicts,
    strategy: {
      order: s.strategy.order,
      readDrainDelayMs: durationMs(s.strategy.readDrainDelay),
      queueDrainedForMs: durationMs(s.strategy.queueDrainedFor),
      // -0 passes every check (an integer, not below 0) but is not JSON: JSON.stringify writes it as 0, so a
      // spec carrying it would not survive the trip to the workflow (or a spec hash) unchanged. A byte count is 0.
      queueEmptyBytes: Object.is(s.strategy.queueEmptyBytes, -0) ? 0 : s.strategy.queueEmptyBytes,
      pollIntervalMs: durationMs(s.strategy.pollInterval),
      zoneTimeoutMs: durationMs(s.strategy.zoneTimeout),
      pauseBetweenZonesMs: durationMs(s.strategy.pauseBetweenZones),
    },
  };
}

/** The declared fields of each structural (non-free-form) object of the spec. */
const MANAGED_KEYS: readonly string[] = ['name', 'overrideSpec', 'spec', 'adopt'];
const STRUCTURAL_KEYS = {
  spec: Object.keys(vmDistributedClusterSpecSchema.shape),
  zone: Object.keys(zoneSchema.shape),
  strategy: Object.keys(strategySchema.shape),
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

/**
 * What the API server does first with a custom resource: a null in a declared field that is not
 * `nullable` is dropped (the field then counts as absent: defaulted, or "Required"). Not inside
 * free-form values (overlays, full specs), where null means "delete this field". The input is not
 * modified.
 */
function pruneNulls(raw: unknown): unknown {
  const spec = withoutNulls(raw, STRUCTURAL_KEYS.spec);
  if (!isPlainObject(spec)) return spec;
  const out: Record<string, unknown> = spec === raw ? { ...spec } : spec;
  let changed = spec !== raw;
  const set = (key: string, value: unknown) => {
    if (value !== out[key]) {
      out[key] = value;
      changed = true;
    }
  };
  if (Array.isArray(spec.zones)) {
    const zones = spec.zones.map((z: unknown) => {
      const zone = withoutNulls(z, STRUCTURAL_KEYS.zone);
      if (!isPlainObject(zone)) return zone;
      const vmcluster = withoutNulls(zone.vmcluster, MANAGED_KEYS);
      const vmuser = withoutNulls(zone.vmuser, MANAGED_KEYS);
      if (vmcluster === zone.vmcluster && vmuser === zone.vmuser) return zone;
      const copy: Record<string, unknown> = zone === z ? { ...zone } : zone;
      if (vmcluster !== undefined) copy.vmcluster = vmcluster;
      if (vmuser !== undefined) copy.vmuser = vmuser;
      return copy;
    });
    if (zones.some((z, i) => z !== (spec.zones as unknown[])[i])) set('zones', zones);
  }
  if (spec.vmauth !== undefined) set('vmauth', withoutNulls(spec.vmauth, MANAGED_KEYS));
  if (spec.vmagent !== undefined) set('vmagent', withoutNulls(spec.vmagent, MANAGED_KEYS));
  if (spec.strategy !== undefined) set('strategy', withoutNulls(spec.strategy, STRUCTURAL_KEYS.strategy));
  return changed ? out : raw;
}

/**
 * Validates the `spec` of a VMDistributedCluster (as read from the API server or a YAML file) and
 * returns it normalized (defaults applied, durations in ms), or every problem found with its path.
 * Accepts exactly what the API server accepts with the generated CRD (nulls in declared fields are
 * dropped first, as the API server does). Never throws.
 */
export function validateSpec(input: unknown): ValidationResult {
  const outerMemo = durationMemo;
  durationMemo = new Map();
  try {
    const spec = pruneNulls(input);
    const parsed = vmDistributedClusterSpecSchema.safeParse(spec, {
      error: (iss) => genericMessage(iss as Parameters<typeof genericMessage>[0]),
    });
    const issues: ValidationIssue[] = parsed.success ? [] : toIssues(parsed.error);
    const seen = new Set(issues.map((i) => `${i.path}\u0000${i.message}`));
    for (const i of crossFieldIssues(spec)) {
      const key = `${i.path}\u0000${i.message}`;
      if (!seen.has(key)) {
        seen.add(key);
        issues.push(i);
      }
    }
    // No message or path ever shows credentials, whatever field a URL with user:password@ was put in.
    if (!parsed.success || issues.length > 0) return { success: false, issues: issues.map((i) => ({ path: redactURLsIn(i.path), message: redactURLsIn(i.message) })) };
    return { success: true, spec: normalize(parsed.data) };
  } catch (err) {
    return {
      success: false,
      issues: [{ path: 'spec', message: `could not be validated: ${err instanceof Error ? err.message : String(err)}` }],
    };
  } finally {
    durationMemo = outerMemo;
  }
}

const MAX_LISTED = 10;
const MAX_LINE = 1000;

/** One human-readable line for status.message, conditions and Kubernetes Events. */
export function formatIssues(issues: readonly ValidationIssue[]): string {
  if (issues.length === 0) return 'spec is valid';
  const parts = issues.slice(0, MAX_LISTED).map((i) => `${i.path}: ${i.message}`.replace(/\s+/g, ' '));
  let line = issues.length === 1 ? `invalid spec: ${parts[0]}` : `invalid spec (${issues.length} problems): ${parts.join('; ')}`;
  if (issues.length > MAX_LISTED) line += `; and ${issues.length - MAX_LISTED} more`;
  if (line.length > MAX_LINE) line = `${line.slice(0, MAX_LINE - 1)}…`;
  return line;
}

/** For messages that mention durations in ms (e.g. from a NormalizedSpec). */
export { formatDuration };
