// The VMDistributedCluster schema: the single source of truth for validation (validateSpec, used by
// the trigger) and for the CRD (api/crd.ts generates the OpenAPI schema from these zod schemas).
//
// Rules that JSON Schema cannot express (uniqueness, exactly-one-of, duration ranges, cross-field
// duration rules) are checked by `crossFieldIssues` below AND carried into the CRD as CEL
// `x-kubernetes-validations` through `.meta()`, so the API server rejects them too.
import { z } from 'zod';
import {
  DURATION_FORMAT_MESSAGE,
  DURATION_MAX_LENGTH,
  DURATION_PATTERN,
  formatDuration,
  parseDuration,
  type DurationParseResult,
} from './duration';
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
  /** Nesting depth of free-form objects (overlays, full specs). */
  jsonMaxDepth: 64,
} as const;

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
      'After a zone leaves read rotation and the VMAuth applied the change, wait this long so in-flight queries finish elsewhere.',
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
/** Coarse shape for the CRD; the full check (parseable, http/https, has a host) is in code and CEL. */
export const REMOTE_WRITE_URL_PATTERN = '^(https?://[^\\s/?#]+.*)?$';

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

function objectName(kind: string, description: string) {
  return z
    .string()
    .min(1, { error: 'must not be empty' })
    .max(LIMITS.nameMaxLength, { error: `must be at most ${LIMITS.nameMaxLength} characters` })
    .regex(new RegExp(DNS1123_SUBDOMAIN_PATTERN), {
      error: `must be a valid ${kind} name: a lowercase DNS-1123 subdomain (a-z, 0-9, '-' and '.', starting and ending with a letter or digit)`,
    })
    .describe(description);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  // Realm-independent: an object literal's prototype is an Object.prototype (of any realm) or null.
  if (Object.prototype.toString.call(v) !== '[object Object]') return false;
  const proto = Object.getPrototypeOf(v) as object | null;
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/** Finds the first non-JSON value inside a candidate JSON value; returns its relative path. */
function findNonJson(v: unknown, path: (string | number)[], depth: number): { path: (string | number)[]; why: string } | undefined {
  if (depth > LIMITS.jsonMaxDepth) return { path, why: `is nested more than ${LIMITS.jsonMaxDepth} levels deep` };
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return undefined;
  if (typeof v === 'number') return Number.isFinite(v) ? undefined : { path, why: `must be a JSON value (got ${String(v)})` };
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      if (!(i in v)) return { path: [...path, i], why: 'must be a JSON value (got an empty array slot)' };
      const bad = findNonJson(v[i], [...path, i], depth + 1);
      if (bad) return bad;
    }
    return undefined;
  }
  if (isPlainObject(v)) {
    for (const key of Object.keys(v)) {
      const bad = findNonJson(v[key], [...path, key], depth + 1);
      if (bad) return bad;
    }
    return undefined;
  }
  return { path, why: `must be a JSON value (got ${describe(v)})` };
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
      const bad = findNonJson(v, [], 1);
      if (bad) ctx.addIssue({ code: 'custom', message: bad.why, path: bad.path });
    })
    .meta({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true, description });
}

const BOTH_FORMS_MESSAGE =
  'set either overrideSpec (patch the existing object) or spec (create it with this name), not both';

function managedObject(kind: string, what: string) {
  return z
    .strictObject({
      name: objectName(kind, `Name of the ${kind} (in the namespace of this object).`),
      overrideSpec: jsonObject(
        `Overlay (JSON merge patch, RFC 7386) applied to the existing ${kind}'s spec. Exclusive with spec.`,
      ).optional(),
      spec: jsonObject(`A full ${kind} spec; the ${kind} is created with this name if it does not exist. Exclusive with overrideSpec.`).optional(),
    })
    .describe(`${what}: a reference to an existing ${kind} (name, optionally with overrideSpec) or a full spec to create it (name + spec).`)
    .meta({
      'x-kubernetes-validations': [{ rule: '!(has(self.overrideSpec) && has(self.spec))', message: BOTH_FORMS_MESSAGE }],
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
      'x-kubernetes-validations': [{ rule: durationRangeRule(rule), message: rangeMessage(rule) }],
    })
    .default(rule.default);
}

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
    rule: "self.all(a, !has(a.remoteWriteURL) || a.remoteWriteURL == '' || self.exists_one(b, has(b.remoteWriteURL) && b.remoteWriteURL == a.remoteWriteURL))",
    message: 'remoteWriteURL must be unique across zones',
  },
];

const REMOTE_WRITE_URL_CEL =
  "self == '' || (isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHostname() != '')";

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
      const message = checkHttpUrl(v);
      if (message) ctx.addIssue({ code: 'custom', message });
    })
    .meta({
      pattern: REMOTE_WRITE_URL_PATTERN,
      'x-kubernetes-validations': [{ rule: REMOTE_WRITE_URL_CEL, message: 'must be an http:// or https:// URL with a host' }],
    })
    .describe(
      "This zone's URL in the VMAgent's spec.remoteWrite list, when it is not the zone's vminsert service URL. Empty means unset.",
    )
    .optional(),
});

export function checkHttpUrl(v: string): string | undefined {
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    return `must be an http:// or https:// URL (got ${JSON.stringify(v.slice(0, 80))})`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `must be an http:// or https:// URL (got scheme ${JSON.stringify(url.protocol.slice(0, -1))})`;
  }
  if (!url.hostname) return 'must be an http:// or https:// URL with a host';
  if (/\s/.test(v)) return 'must not contain whitespace';
  return undefined;
}

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
    vmauth: z
      .strictObject({ name: objectName('VMAuth', 'Name of the global VMAuth whose read routes are switched.') })
      .describe('The global VMAuth in front of the zones (reference only).'),
    vmagent: managedObject('VMAgent', 'The one VMAgent that writes to every zone'),
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
  type: z.enum(['Ready', 'Progressing', 'Paused', 'Valid']).describe('Condition type.'),
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
  startedAt: timestamp('When the zone step started.').optional(),
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
    ) => {
      if (typeof value !== 'string' || value === '') return;
      const p = formatPath(path);
      const first = map.get(value);
      if (first !== undefined) issues.push({ path: p, message: `${what(value)} is used twice (also ${first})` });
      else map.set(value, p);
    };
    zones.forEach((zone: unknown, i) => {
      unique(seen.name, get(zone, 'name'), ['zones', i, 'name'], (v) => `zone name ${JSON.stringify(v)}`);
      const vmcluster = get(zone, 'vmcluster');
      unique(seen.vmcluster, get(vmcluster, 'name'), ['zones', i, 'vmcluster', 'name'], (v) => `VMCluster name ${JSON.stringify(v)}`);
      bothForms(vmcluster, ['zones', i, 'vmcluster']);
      const vmuser = get(zone, 'vmuser');
      unique(seen.vmuser, get(vmuser, 'name'), ['zones', i, 'vmuser', 'name'], (v) => `VMUser name ${JSON.stringify(v)}`);
      bothForms(vmuser, ['zones', i, 'vmuser']);
      unique(seen.url, get(zone, 'remoteWriteURL'), ['zones', i, 'remoteWriteURL'], (v) => `remoteWriteURL ${JSON.stringify(v)}`);
    });
  }
  bothForms(raw.vmagent, ['vmagent']);

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

function cloneJson<T extends JsonValue>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

function normalizeManaged(m: { name: string; overrideSpec?: JsonObject | undefined; spec?: JsonObject | undefined }): ManagedObject {
  const out: ManagedObject = { name: m.name };
  if (m.spec !== undefined) out.spec = cloneJson(m.spec);
  else if (m.overrideSpec !== undefined) out.overrideSpec = cloneJson(m.overrideSpec);
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
    vmauth: { name: s.vmauth.name },
    vmagent: normalizeManaged(s.vmagent),
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

/**
 * Validates the `spec` of a VMDistributedCluster (as read from the API server or a YAML file) and
 * returns it normalized (defaults applied, durations in ms), or every problem found with its path.
 * Never throws.
 */
export function validateSpec(spec: unknown): ValidationResult {
  const outerMemo = durationMemo;
  durationMemo = new Map();
  try {
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
    if (!parsed.success || issues.length > 0) return { success: false, issues };
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
