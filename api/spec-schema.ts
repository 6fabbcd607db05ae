// The VMDistributedCluster spec as zod schemas: the shapes validateSpec (api/validate.ts) checks and
// the source of the CRD (api/crd.ts generates its OpenAPI schema from them).
//
// Rules that JSON Schema cannot express (uniqueness, exactly-one-of, duration ranges and whole
// milliseconds, cross-field duration rules, derived-name limits, the remoteWriteURL grammar of
// api/url.ts) are checked by validateSpec AND carried into the CRD as CEL `x-kubernetes-validations`
// through `.meta()`, so the API server rejects them too. Both sides accept exactly the same specs:
// test/fixtures/bad-specs.ts runs a table of bad specs and generated near-valid values through
// validateSpec and a real API server. The one rule no CRD can express, the nesting depth of
// free-form values, is the API server's own JSON limit, which validateSpec applies exactly.
import { EQUALITY_SELECTOR_PATTERN, SELECTOR_MAX_LENGTH } from './label-selector';
import { MAX_LATENCY_RATIO } from './latency';
import { z } from 'zod';
import { DURATION_FORMAT_MESSAGE, DURATION_MAX_LENGTH, DURATION_PATTERN, DURATION_WHOLE_MS_CEL, DURATION_WHOLE_MS_MESSAGE } from './duration';
import { describe, findNonJson, isPlainObject } from './json-value';
import {
  ADOPT_MESSAGE,
  BOTH_FORMS_MESSAGE,
  DEFAULT_ORDER,
  DEFAULT_QUEUE_EMPTY_BYTES,
  DERIVED_NAMES,
  derivedList,
  derivedNameMaxLength,
  derivedNameMessages,
  DNS1123_LABEL_PATTERN,
  DNS1123_SUBDOMAIN_PATTERN,
  DURATION_RULES,
  CHECK_MODES,
  CANARY_LIMITS,
  CAPACITY_LIMITS,
  SAMPLE_PARITY_LIMITS,
  IMAGE_TAG_PATTERN,
  LIMITS,
  rangeMessage,
  REMOTE_WRITE_URL_UNIQUE_MESSAGE,
  type DurationRule,
  type ManagedKind,
  type StrategyDurationField,
} from './limits';
import { checkHttpURL, HTTP_URL_MESSAGE, HTTP_URL_PATTERN, remoteWriteURLKeyCel } from './url';
import { GATES, type JsonObject } from './types';
import { CANARY_HELD_MESSAGE, READ_ONLY_MESSAGE, SERVES_READS_CEL, SERVING_ZONE_MESSAGE, TRAFFIC_MODES } from './traffic-mode';

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

/**
 * A free-form JSON object (a VMCluster/VMUser/VMAgent spec or an overlay). Not an array, not null,
 * not a scalar. In the CRD: `type: object` + `x-kubernetes-preserve-unknown-fields`.
 */
function jsonObject(description: string) {
  return (
    z
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
      .meta({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true, 'x-kubernetes-map-type': 'atomic', description })
  );
}

function managedObject(kind: ManagedKind, what: string) {
  return z
    .strictObject({
      name: objectName(kind, `Name of the ${kind} (in the namespace of this object).`),
      overrideSpec: jsonObject(`Overlay (JSON merge patch, RFC 7386) applied to the existing ${kind}'s spec. Exclusive with spec.`).optional(),
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

/** A latency ratio (1 to MAX_LATENCY_RATIO) with its default: how many times slower counts as slower (api/latency.ts). */
function latencyRatio(dflt: number, description: string) {
  return z
    .number()
    .min(1, { error: 'must be at least 1' })
    .max(MAX_LATENCY_RATIO, { error: `must be at most ${MAX_LATENCY_RATIO}` })
    .default(dflt)
    .describe(description);
}

/** A share (a ratio from 0 to 1) with its default. */
function share(dflt: number, description: string) {
  return z.number().min(0, { error: 'must not be negative' }).max(1, { error: 'must be at most 1' }).default(dflt).describe(description);
}

function durationRangeRule(rule: DurationRule): string {
  return `duration(self) >= duration('${rule.min}') && duration(self) <= duration('${rule.max}')`;
}

/**
 * A strategy duration: its type, default, and the CRD's pattern and CEL rules. Its grammar and range
 * are checked by validateSpec (api/validate.ts), which parses each duration of a spec once and
 * hands the results on to normalize().
 */
function durationField(field: StrategyDurationField) {
  const rule = DURATION_RULES[field];
  return z
    .string({ error: (iss) => (iss.input === undefined ? undefined : `${DURATION_FORMAT_MESSAGE}, as a string (got ${describe(iss.input)})`) })
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

/** The uniqueness rule only looks at URLs that start like one (others fail their own rule). */
const HTTP_SCHEME_CEL = (v: string) => `(${v}.remoteWriteURL.startsWith('http://') || ${v}.remoteWriteURL.startsWith('https://'))`;

/** `!has(self.x) || ...` guards keep the rules correct even if defaulting did not run. */
const STRATEGY_CEL_RULES = [
  {
    rule: '!has(self.pollInterval) || !has(self.queueDrainedFor) || duration(self.pollInterval) <= duration(self.queueDrainedFor)',
    message: 'pollInterval must not be longer than queueDrainedFor',
    fieldPath: '.pollInterval',
  },
  {
    rule: '!has(self.zoneTimeout) || !has(self.queueDrainedFor) || duration(self.zoneTimeout) > duration(self.queueDrainedFor)',
    message: 'zoneTimeout must be longer than queueDrainedFor',
    fieldPath: '.zoneTimeout',
  },
  {
    rule: '!has(self.zoneTimeout) || !has(self.readDrainDelay) || duration(self.zoneTimeout) > duration(self.readDrainDelay)',
    message: 'zoneTimeout must be longer than readDrainDelay',
    fieldPath: '.zoneTimeout',
  },
];

const ZONES_CEL_RULES = [
  {
    rule: 'self.all(a, !has(a.vmcluster) || self.exists_one(b, has(b.vmcluster) && b.vmcluster.name == a.vmcluster.name))',
    message: 'every zone must have its own VMCluster (vmcluster.name must be unique)',
  },
  {
    rule: 'self.all(a, !has(a.vmsingle) || self.exists_one(b, has(b.vmsingle) && b.vmsingle.name == a.vmsingle.name))',
    message: 'every zone must have its own VMSingle (vmsingle.name must be unique)',
  },
  {
    rule: 'self.all(a, !has(a.vmuser) || self.exists_one(b, has(b.vmuser) && b.vmuser.name == a.vmuser.name))',
    message: 'vmuser.name must be unique across zones',
  },
  {
    rule: `self.all(a, !has(a.remoteWriteURL) || !${HTTP_SCHEME_CEL('a')} || self.exists_one(b, has(b.remoteWriteURL) && ${HTTP_SCHEME_CEL('b')} && ${remoteWriteURLKeyCel('b.remoteWriteURL')} == ${remoteWriteURLKeyCel('a.remoteWriteURL')}))`,
    message: REMOTE_WRITE_URL_UNIQUE_MESSAGE,
  },
  { rule: `self.exists(z, ${SERVES_READS_CEL('z')})`, message: SERVING_ZONE_MESSAGE },
  {
    rule: 'self.all(a, !has(a.vmagent) || self.exists_one(b, has(b.vmagent) && b.vmagent.name == a.vmagent.name))',
    message: 'vmagent.name must be unique across zones',
  },
];

export const ZONE_VMAGENT_MESSAGE = "must not name spec.vmagent's VMAgent";
const ZONE_VMAGENT_CEL = '!self.zones.exists(z, has(z.vmagent) && z.vmagent.name == self.vmagent.name)';

export const SINGLE_VERSION_MESSAGE = "is required when a zone has a vmsingle: the image tag every zone's VMSingle gets, e.g. v1.150.0";
const SINGLE_VERSION_CEL = 'has(self.singleVersion) || !self.zones.exists(z, has(z.vmsingle))';
export const SINGLE_PARITY_MESSAGE = 'is not supported with VMSingle zones: a VMSingle lists no tenants to count (strategy.dataCompleteness still applies)';
const SINGLE_PARITY_CEL = '!has(self.strategy) || !has(self.strategy.sampleParity) || !self.zones.exists(z, has(z.vmsingle))';
export const ONE_STORAGE_MESSAGE = 'exactly one of vmcluster and vmsingle must be set';

export const CANARY_ZONE_MESSAGE = 'must name a zone of spec.zones';
const CANARY_NAMED = '!has(self.strategy) || !has(self.strategy.canary) || !has(self.strategy.canary.zone)';
const CANARY_ZONE_CEL = `${CANARY_NAMED} || self.zones.exists(z, z.name == self.strategy.canary.zone)`;
const CANARY_HELD_CEL = `${CANARY_NAMED} || self.zones.all(z, z.name != self.strategy.canary.zone || ${SERVES_READS_CEL('z')})`;

/** The URL rule in CEL: the grammar of api/url.ts, as a raw string (the pattern has no `"`). */
export const REMOTE_WRITE_URL_CEL = `self == '' || self.matches(r"${HTTP_URL_PATTERN}")`;

const zoneNameSchema = z
  .string()
  .min(1, { error: 'must not be empty' })
  .max(LIMITS.zoneNameMaxLength, { error: `must be at most ${LIMITS.zoneNameMaxLength} characters` })
  .regex(new RegExp(DNS1123_LABEL_PATTERN), {
    error: "must be a lowercase DNS-1123 label (a-z, 0-9 and '-', starting and ending with a letter or digit), e.g. az-a",
  });

/** A fleet or region name (spec.fleet): a DNS-1123 label, as zone names. */
const fleetLabelSchema = (what: string) =>
  z
    .string()
    .min(1, { error: 'must not be empty' })
    .max(LIMITS.zoneNameMaxLength, { error: `must be at most ${LIMITS.zoneNameMaxLength} characters` })
    .regex(new RegExp(DNS1123_LABEL_PATTERN), { error: `must be a lowercase DNS-1123 label (a-z, 0-9 and '-'), e.g. ${what}` });

export const fleetSchema = z
  .strictObject({
    name: fleetLabelSchema('prod').describe(
      'The fleet: the VMDistributedClusters of this namespace naming the same fleet are rolled out by one parent workflow.',
    ),
    region: fleetLabelSchema('eu-west').describe(
      'The region of this object: the fleet runs one rollout per region at a time (one zone out per region), regions in parallel.',
    ),
  })
  .describe(
    "Rollouts of this object wait for their turn in a fleet (docs/operations.md#fleets-specfleet): the trigger hands each generation to the fleet's parent workflow, " +
      'which starts it as a child once no other member of its region rolls out.',
  );

export const canaryAnalysisSchema = z
  .strictObject({
    interval: durationField('canaryInterval'),
    tenant: z
      .string()
      .regex(new RegExp(CANARY_LIMITS.tenantPattern), {
        error: 'must be a tenant as vmselect paths write it: accountID or accountID:projectID, e.g. 0 or 42:1',
      })
      .default(CANARY_LIMITS.defaultTenant)
      .describe('The tenant whose data is compared (/select/<tenant>/prometheus). Default 0.'),
    queries: z
      .array(
        z
          .string()
          .min(1, { error: 'must not be empty' })
          .max(CANARY_LIMITS.queryMaxLength, { error: `must be at most ${CANARY_LIMITS.queryMaxLength} characters` }),
      )
      .max(CANARY_LIMITS.maxQueries, { error: `must list at most ${CANARY_LIMITS.maxQueries} queries` })
      .default([])
      .describe(
        'MetricsQL queries compared between the canary and the baseline zone in every measurement (instant queries, maxIngestionLag in the past): ' +
          'their errors, latency and results.',
      ),
    recentQueries: z
      .number()
      .int({ error: 'must be a whole number' })
      .min(0, { error: 'must not be negative' })
      .max(CANARY_LIMITS.maxRecentQueries, { error: `must be at most ${CANARY_LIMITS.maxRecentQueries}` })
      .default(CANARY_LIMITS.defaultRecentQueries)
      .describe("How many of the baseline's most frequent recent queries (its /api/v1/status/top_queries) are compared too, beside `queries`. 0 to 20."),
    maxLatencyRatio: latencyRatio(
      CANARY_LIMITS.defaultMaxLatencyRatio,
      "The canary fails when its queries take longer than this many times the baseline's (and over 100 ms more). 1 to 100.",
    ),
    tolerance: share(
      CANARY_LIMITS.defaultTolerance,
      "How far apart the canary's and the baseline's values of one series may be, relative to the larger (0.01: 1%). 0 to 1.",
    ),
    freshnessSelector: z
      .string()
      .min(1, { error: 'must not be empty' })
      .max(CANARY_LIMITS.selectorMaxLength, { error: `must be at most ${CANARY_LIMITS.selectorMaxLength} characters` })
      .optional()
      .describe(
        'A series selector every zone ingests continuously (e.g. up{job="vmagent"}): the canary\'s newest sample of it may be at most maxIngestionLag behind the baseline\'s. Unset: ingestion lag is not measured.',
      ),
    maxIngestionLag: durationField('canaryMaxIngestionLag'),
  })
  .describe('What the canary is measured by, against a zone still at the previous version and in reads.');

export const canarySchema = z
  .strictObject({
    zone: zoneNameSchema
      .optional()
      .describe(
        'The zone upgraded first and analysed (a name in spec.zones). Unset: the first zone this rollout upgrades (not one it takes over from the route records).',
      ),
    bake: durationField('canaryBake'),
    analysis: canaryAnalysisSchema.default(() => canaryAnalysisSchema.parse({})),
  })
  .describe(
    'A canary zone: upgraded first, then analysed for `bake` while still out of reads (MetricsQL against its vmselect and a not-yet-upgraded zone). ' +
      'Failed: the rollout stops with the canary out of reads and the numbers in its status. Inconclusive: it waits for kubectl vmdc promote (rejoin, go on) or abort.',
  );

export const capacityGuardSchema = z
  .strictObject({
    maxErrorRatio: share(
      CAPACITY_LIMITS.defaultMaxErrorRatio,
      "The share of reads that may fail (vmauth errors and the carriers' vmselect errors) while a zone is out. 0 to 1, default 0.01.",
    ),
    maxLatencyRatio: latencyRatio(
      CAPACITY_LIMITS.defaultMaxLatencyRatio,
      "How many times vmauth's mean read latency before the zone left it may become (and 100 ms more) while the zone is out. 1 to 100, default 3.",
    ),
  })
  .describe(
    'The capacity guard: while a zone is out of reads, before each of its next steps, the reads the other zones carry are measured on every vmauth pod ' +
      'and on their vmselect pods; a breach of either bound waits for kubectl vmdc promote (go on) or abort (the zone fails, out of reads).',
  );

export const sampleParitySchema = z
  .strictObject({
    tenants: z
      .array(z.string().regex(new RegExp(CANARY_LIMITS.tenantPattern), { error: 'must be a tenant: accountID or accountID:projectID' }))
      .max(SAMPLE_PARITY_LIMITS.maxTenants, { error: `must list at most ${SAMPLE_PARITY_LIMITS.maxTenants} tenants` })
      .refine((t) => new Set(t).size === t.length, { error: 'must not list a tenant twice' })
      .default([])
      .describe(
        `The tenants compared (accountID or accountID:projectID). Empty: every tenant the healthy zone's vmselect lists for the window (/admin/tenants), at most ${SAMPLE_PARITY_LIMITS.maxTenants}.`,
      )
      .meta({ 'x-kubernetes-list-type': 'set' }),
    selector: z
      .string()
      .min(1, { error: 'must not be empty' })
      .max(CANARY_LIMITS.selectorMaxLength, { error: `must be at most ${CANARY_LIMITS.selectorMaxLength} characters` })
      .default(SAMPLE_PARITY_LIMITS.defaultSelector)
      .describe(
        'The series counted (every series by default). Narrow it on large tenants: the count reads every sample of the window once per zone, and series written to one zone only (not through vmagent) must be left out.',
      ),
    tolerance: share(
      SAMPLE_PARITY_LIMITS.defaultTolerance,
      "The share of a tenant's samples the zone may lack against the healthy zone (0.001: 0.1%). 0 to 1.",
    ),
    lag: durationField('sampleParityLag'),
  })
  .describe(
    "Before a zone rejoins reads, its samples ingested per tenant over its window (from leaving reads to `lag` ago) are counted on its vmselect and on a zone in reads' (count_over_time of `selector`); " +
      'a zone short by more than `tolerance` stays out of reads, Failed, with the numbers (backfill it with vmctl from the healthy zone: docs/operations.md). Unset: not counted.',
  );

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
      .describe("A zone's queue counts as empty at or below this many pending bytes, summed over vmagent pods. 0 to 1 GiB."),
    pollInterval: durationField('pollInterval'),
    zoneTimeout: durationField('zoneTimeout'),
    pauseBetweenZones: durationField('pauseBetweenZones'),
    gates: z
      .array(z.enum(GATES))
      .refine((g) => new Set(g).size === g.length, { error: 'must not list a gate twice' })
      .default([])
      .describe(
        'Where the rollout waits for a person (kubectl vmdc promote / abort), every zone in reads: BeforeFirstZone, ' +
          'AfterFirstZone (after the first zone it upgraded), BeforeEachZone. Empty: never.',
      )
      .meta({ 'x-kubernetes-list-type': 'set' }),
    queueHeadroom: z
      .enum(CHECK_MODES)
      .default('Enforce')
      .describe(
        "Before a zone leaves reads, whether every vmagent pod's queue for it can hold what it takes in over expectedDowntime " +
          "(its intake since the pod started, against vmagent's own room: -remoteWrite.maxDiskUsagePerURL or the free disk). " +
          'Enforce: a zone whose queue would overflow fails while still in reads, naming the numbers. Off: no check.',
      ),
    expectedDowntime: durationField('expectedDowntime'),
    dataCompleteness: z
      .enum(CHECK_MODES)
      .default('Enforce')
      .describe(
        'Before a zone rejoins reads, whether vmagent dropped anything for it since it left (its drop counters: samples refused by a full ' +
          'in-memory queue, bytes dropped from a full on-disk queue, blocks refused for good), or cannot tell (a vmagent pod restarted or gone). ' +
          'Enforce: such a zone stays out of reads, Failed, with the numbers. Off: no check.',
      ),
    dryRun: z
      .boolean()
      .default(false)
      .describe(
        'true: this generation plans its rollout into status.plan (zone order, zones skipped, route edits, queue headroom, gates) ' +
          'and changes nothing; phase Planned. Like any spec change it supersedes a rollout in flight.',
      ),
    canary: canarySchema.optional(),
    capacityGuard: capacityGuardSchema.optional(),
    sampleParity: sampleParitySchema.optional(),
  })
  .describe('How the rollout proceeds. All fields are optional.')
  .meta({ 'x-kubernetes-validations': STRATEGY_CEL_RULES });

export const zoneSchema = z
  .strictObject({
    name: zoneNameSchema.describe('Zone name, unique in the list (e.g. az-a).'),
    vmcluster: managedObject('VMCluster', "The zone's VMCluster (exactly one of vmcluster and vmsingle)").optional(),
    vmsingle: managedObject(
      'VMSingle',
      "The zone's VMSingle (exactly one of vmcluster and vmsingle): its reads go to vmsingle-<name>:8428/prometheus",
    ).optional(),
    vmuser: managedObject('VMUser', 'Optional VMUser that routes reads to this zone').optional(),
    vmagent: managedObject(
      'VMAgent',
      "Optional VMAgent of this zone (VMDistributed's layout: one per zone, each writing to every zone): every zone's backlog is read in it as in spec.vmagent's",
    ).optional(),
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
    trafficMode: z
      .enum(TRAFFIC_MODES)
      .refine((m) => m !== 'read-only', { error: READ_ONLY_MESSAGE })
      // maxLength bounds the CEL rule's cost (the API server does not count enums)
      .meta({
        maxLength: Math.max(...TRAFFIC_MODES.map((m) => m.length)),
        'x-kubernetes-validations': [{ rule: "self != 'read-only'", message: READ_ONLY_MESSAGE }],
      })
      .optional()
      .describe(
        'The traffic the zone takes, kept across rollouts (named as VMDistributed names them). read-write (default): reads and writes. ' +
          'write-only: held out of reads (recorded on the routes like a zone being upgraded), still written and upgraded by rollouts. ' +
          'maintenance: held out of reads and left alone by rollouts (its VMCluster is not changed). ' +
          'Back to read-write: the next rollout upgrades it if needed, waits for its queue and its data checks, and puts it back. read-only is refused.',
      ),
  })
  .meta({ 'x-kubernetes-validations': [{ rule: 'has(self.vmcluster) != has(self.vmsingle)', message: ONE_STORAGE_MESSAGE }] });

/** Where a notification goes (spec.notifications[].type). */
export const NOTIFICATION_TYPES = ['Slack', 'GrafanaAnnotation'] as const;
/** What can be notified: the worker's status Events (docs/operations.md#events), and the rollout's start. */
export const NOTIFIED_REASONS = [
  'RolloutStarted',
  'ZoneLeftReads',
  'ZoneUpgraded',
  'ZoneOperational',
  'ZoneDrained',
  'CanaryPassed',
  'ZoneRejoined',
  'ZoneReleased',
  'ZoneHeld',
  'ZoneFailed',
  'RouteRecordsUnverified',
  'RolloutAwaitingApproval',
  'RolloutPromoted',
  'RolloutSucceeded',
  'RolloutFailed',
  'RolloutCancelled',
  'RolloutAborted',
  'RolloutPlanned',
  'RolloutPaused',
  'RolloutResumed',
] as const;
/** Without `on`: started, zone out and in, awaiting approval, failed, finished. */
export const DEFAULT_NOTIFIED: readonly (typeof NOTIFIED_REASONS)[number][] = [
  'RolloutStarted',
  'ZoneLeftReads',
  'ZoneRejoined',
  'ZoneFailed',
  'RolloutAwaitingApproval',
  'RolloutSucceeded',
  'RolloutFailed',
  'RolloutCancelled',
  'RolloutAborted',
];

export const notificationSchema = z.strictObject({
  type: z
    .enum(NOTIFICATION_TYPES)
    .describe(
      'Slack: a Slack-compatible incoming webhook ({"text": ...}); GrafanaAnnotation: an annotation through Grafana\'s HTTP API (POST /api/annotations).',
    ),
  secretName: z
    .string()
    .min(1, { error: 'must not be empty' })
    .max(LIMITS.secretNameMaxLength, { error: `must be at most ${LIMITS.secretNameMaxLength} characters` })
    .regex(new RegExp(DNS1123_SUBDOMAIN_PATTERN), { error: 'must be a Secret name: a lowercase DNS-1123 subdomain' })
    .describe(
      "A Secret in this object's namespace holding `url` (the webhook URL, or Grafana's base URL) and, for Grafana, `token` (a service account token): " +
        'the URL and its credential together, so no spec can send a credential elsewhere. The worker reads only the Secrets the chart grants (notificationSecrets).',
    ),
  on: z
    .array(z.enum(NOTIFIED_REASONS))
    .refine((r) => new Set(r).size === r.length, { error: 'must not list a reason twice' })
    .optional()
    .describe(
      'The Event reasons notified (and RolloutStarted). Unset: RolloutStarted, ZoneLeftReads, ZoneRejoined, ZoneFailed, RolloutAwaitingApproval and the ends.',
    )
    .meta({ 'x-kubernetes-list-type': 'set' }),
});

export const vmDistributedClusterSpecSchema = z
  .strictObject({
    paused: z.boolean().default(false).describe('true: stop at the next safe point; false: go on.'),
    clusterVersion: z
      .string({ error: (iss) => (iss.input === undefined ? "is required: the image tag every zone's VMCluster gets, e.g. v1.150.0-cluster" : undefined) })
      .min(1, { error: "must not be empty: the image tag every zone's VMCluster gets, e.g. v1.150.0-cluster" })
      .max(LIMITS.clusterVersionMaxLength, { error: `must be at most ${LIMITS.clusterVersionMaxLength} characters` })
      .regex(new RegExp(IMAGE_TAG_PATTERN), {
        error: "must be an image tag (letters, digits, '_', '.' and '-', not starting with '.' or '-'), e.g. v1.150.0-cluster",
      })
      .describe("Image tag set as every zone's VMCluster spec.clusterVersion, e.g. v1.150.0-cluster."),
    singleVersion: z
      .string()
      .min(1, { error: "must not be empty: the image tag every zone's VMSingle gets, e.g. v1.150.0" })
      .max(LIMITS.clusterVersionMaxLength, { error: `must be at most ${LIMITS.clusterVersionMaxLength} characters` })
      .regex(new RegExp(IMAGE_TAG_PATTERN), {
        error: "must be an image tag (letters, digits, '_', '.' and '-', not starting with '.' or '-'), e.g. v1.150.0",
      })
      .optional()
      .describe(
        "Image tag set as every VMSingle zone's spec.image.tag, e.g. v1.150.0 (single-node releases have no -cluster suffix). Required when a zone has a vmsingle.",
      ),
    overrideSpec: jsonObject("Global VMCluster spec overlay (JSON merge patch, RFC 7386), applied before each zone's overlay.").default({}),
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
    vmagent: managedObject('VMAgent', 'The VMAgent that writes to every zone (with one per zone: any of them, the others in zones[].vmagent)'),
    vmuserSelector: z
      .string()
      .max(SELECTOR_MAX_LENGTH, { error: `must be at most ${SELECTOR_MAX_LENGTH} characters` })
      .regex(new RegExp(EQUALITY_SELECTOR_PATTERN), { error: 'must be a label selector of key=value terms, comma-separated (e.g. vmrollout.io/reads=global)' })
      .optional()
      .describe(
        'A label selector (key=value terms, comma-separated, as kubectl -l): every VMUser of the namespace whose labels match is a read route too, ' +
          "beside the VMAuth and the zones' vmuser: a zone leaving reads is taken out of each such VMUser that routes to it (found afresh before each zone leaves), " +
          'so no reader keeps reading from a zone being upgraded.',
      ),
    fleet: fleetSchema.optional(),
    retainOnDelete: z
      .boolean()
      .optional()
      .describe(
        'true: the objects of full specs are not owned, and stay when this object is deleted; false: deleting this object deletes them. ' +
          'Unset: false, but an adopted object (adopt: true) is retained: adopting must never let a delete take what someone else created.',
      ),
    forceConflicts: z
      .boolean()
      .default(false)
      .describe(
        'true: take over fields of the managed objects that another field manager owns (server-side apply force). ' +
          'false: such a conflict fails the zone while it is still in reads, naming the field and the manager.',
      ),
    strategy: strategySchema.default(() => strategySchema.parse({})),
    notifications: z
      .array(notificationSchema)
      .max(4, { error: 'must list at most 4 notifications' })
      .optional()
      .describe(
        "Where the rollout's transitions are also told: Slack-compatible webhooks, Grafana annotations. Best effort: a notification that fails is a Warning Event, never a failed rollout.",
      ),
  })
  .describe('Desired state of a VictoriaMetrics deployment spread over zones.')
  .meta({
    'x-kubernetes-validations': [
      { rule: CANARY_ZONE_CEL, message: CANARY_ZONE_MESSAGE, fieldPath: '.strategy.canary.zone' },
      { rule: CANARY_HELD_CEL, message: CANARY_HELD_MESSAGE, fieldPath: '.strategy.canary.zone' },
      { rule: ZONE_VMAGENT_CEL, message: `zones[].vmagent ${ZONE_VMAGENT_MESSAGE}`, fieldPath: '.zones' },
      { rule: SINGLE_VERSION_CEL, message: SINGLE_VERSION_MESSAGE, fieldPath: '.singleVersion' },
      { rule: SINGLE_PARITY_CEL, message: SINGLE_PARITY_MESSAGE, fieldPath: '.strategy.sampleParity' },
    ],
  });

/** The spec as written in a custom resource (defaults not applied, durations as strings). */
export type VMDistributedClusterSpecInput = z.input<typeof vmDistributedClusterSpecSchema>;
/** The spec as the schema parses it (defaults applied, durations still strings): what normalize() takes. */
export type VMDistributedClusterSpecOutput = z.output<typeof vmDistributedClusterSpecSchema>;
