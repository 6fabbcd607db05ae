// The limits and rules of the VMDistributedCluster spec (documented in docs/cr-reference.md; keep
// them in sync): bounds, duration defaults and ranges, name patterns, the names the VM operator
// derives, and the messages that validateSpec (api/validate.ts) and the CRD's CEL rules
// (api/spec-schema.ts) share.
import { durationMs } from './duration';
import type { Strategy } from './types';

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

export type StrategyDurationField =
  | 'readDrainDelay'
  | 'queueDrainedFor'
  | 'pollInterval'
  | 'zoneTimeout'
  | 'pauseBetweenZones'
  | 'expectedDowntime'
  | 'canaryBake'
  | 'canaryInterval'
  | 'canaryMaxIngestionLag'
  | 'sampleParityLag';

export interface DurationRule {
  default: string;
  min: string;
  max: string;
  description: string;
  /** Where the field is under spec.strategy, when not at its top (by its own name). */
  path?: readonly string[];
}

/** Where a strategy duration is written, under spec.strategy. */
export const durationPath = (field: StrategyDurationField): readonly string[] => DURATION_RULES[field].path ?? [field];

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
    description: 'The vmagent queues for the zone must stay at or below queueEmptyBytes this long, without a break, before the zone rejoins reads.',
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
    description: 'Budget of each step of a zone; a step that exhausts it marks the zone Failed. Longer than readDrainDelay and queueDrainedFor.',
  },
  pauseBetweenZones: {
    default: '0s',
    min: '0s',
    max: '24h',
    description: 'Wait between one zone finishing and the next one starting.',
  },
  expectedDowntime: {
    default: '0s',
    min: '0s',
    max: '168h',
    description:
      "How long each zone's vmagent queue must be able to hold the zone's writes, by the queueHeadroom preflight; 0s means zoneTimeout (as long as the rollout waits for a zone before failing it).",
  },
  canaryBake: {
    default: '5m',
    min: '1s',
    max: '24h',
    description: 'How long the canary zone is analysed, upgraded and drained but still out of reads, before it rejoins them.',
    path: ['canary', 'bake'],
  },
  canaryInterval: {
    default: '30s',
    min: '1s',
    max: '1h',
    description: 'How often the analysis measures the canary against the baseline zone during the bake. At most bake.',
    path: ['canary', 'analysis', 'interval'],
  },
  canaryMaxIngestionLag: {
    default: '30s',
    min: '1s',
    max: '1h',
    description:
      "How far the canary's newest sample of freshnessSelector may be behind the baseline's; also how far in the past the queries are compared (data older than this must be the same in both zones).",
    path: ['canary', 'analysis', 'maxIngestionLag'],
  },
  sampleParityLag: {
    default: '30s',
    min: '0s',
    max: '1h',
    description:
      "The zone's window is compared up to this long ago: samples that old must be searchable in both zones (vmselect's -search.latencyOffset, 30s by default, hides newer ones).",
    path: ['sampleParity', 'lag'],
  },
};

export const DEFAULT_ORDER = 'Shuffle' as const;
/** The modes of the checks around a zone's window (queueHeadroom, dataCompleteness): Enforce holds the zone; Off skips the check. */
export const CHECK_MODES = ['Enforce', 'Off'] as const;
export const DEFAULT_QUEUE_EMPTY_BYTES = 0;

/** The capacity guard's bounds (strategy.capacityGuard). */
export const CAPACITY_LIMITS = {
  defaultMaxErrorRatio: 0.01,
  defaultMaxLatencyRatio: 3,
} as const;

/** The sample parity check's bounds (strategy.sampleParity). */
export const SAMPLE_PARITY_LIMITS = {
  /** Tenants named in the spec, and tenants compared when vmselect lists them (/admin/tenants). */
  maxTenants: 50,
  defaultSelector: '{__name__!=""}',
  defaultTolerance: 0.001,
} as const;

/** The canary analysis's bounds (strategy.canary.analysis). */
export const CANARY_LIMITS = {
  /** Queries the SRE names, and recent ones replayed from the baseline's top_queries. */
  maxQueries: 20,
  maxRecentQueries: 20,
  defaultRecentQueries: 5,
  /** VictoriaMetrics' own -search.maxQueryLen default is 16 KiB; a named query longer than this is a mistake. */
  queryMaxLength: 4096,
  selectorMaxLength: 1024,
  defaultTenant: '0',
  tenantPattern: '^[0-9]{1,10}(:[0-9]{1,10})?$',
  defaultMaxLatencyRatio: 2,
  defaultTolerance: 0.01,
} as const;

/** The rules' durations in ms, parsed once at load. */
export const DURATION_RULES_MS = Object.fromEntries(
  Object.entries(DURATION_RULES).map(([field, rule]) => [field, { default: durationMs(rule.default), min: durationMs(rule.min), max: durationMs(rule.max) }]),
) as Record<StrategyDurationField, { default: number; min: number; max: number }>;

/** The strategy a spec without `strategy` gets. */
export const DEFAULT_STRATEGY: Strategy = {
  order: DEFAULT_ORDER,
  readDrainDelayMs: DURATION_RULES_MS.readDrainDelay.default,
  queueDrainedForMs: DURATION_RULES_MS.queueDrainedFor.default,
  queueEmptyBytes: DEFAULT_QUEUE_EMPTY_BYTES,
  pollIntervalMs: DURATION_RULES_MS.pollInterval.default,
  zoneTimeoutMs: DURATION_RULES_MS.zoneTimeout.default,
  pauseBetweenZonesMs: DURATION_RULES_MS.pauseBetweenZones.default,
};

/** Lowercase RFC 1123 subdomain (Kubernetes object names). */
export const DNS1123_SUBDOMAIN_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
/** Lowercase RFC 1123 label (zone names: they end up in labels, ids and metric labels). */
export const DNS1123_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
/** A container image tag (OCI distribution spec grammar). */
export const IMAGE_TAG_PATTERN = '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$';

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
  VMSingle: { prefixes: ['vmsingle-'], kind: 'Service' },
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

export function derivedList(kind: ManagedKind): string {
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

export const BOTH_FORMS_MESSAGE = 'set either overrideSpec (patch the existing object) or spec (create it with this name), not both';
export const ADOPT_MESSAGE = 'adopt applies to the full-spec form only (set spec, or remove adopt)';

export const REMOTE_WRITE_URL_UNIQUE_MESSAGE =
  'remoteWriteURL must be unique across zones (compared normalized: host case-insensitive, default port dropped, empty path as /)';

/** The message of a duration outside its rule's range (the same in validateSpec and the CRD). */
export function rangeMessage(rule: DurationRule): string {
  return `must be between ${rule.min} and ${rule.max}`;
}
