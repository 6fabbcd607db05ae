// The VMDistributedCluster status as zod schemas: written by vmrollout only; the schema documents it
// and shapes the CRD (api/crd.ts).
import { z } from 'zod';
import { ANALYSIS_VERDICTS, GATES, PHASES, QUERY_VERDICTS, ZONE_PHASES } from './types';

const timestamp = (description: string) => z.string().meta({ format: 'date-time' }).describe(description);
const count = (description: string) => z.number().int().min(0).meta({ format: 'int64' }).describe(description);
const generation = (description: string) => z.number().int().min(0).meta({ format: 'int64' }).describe(description);

export const conditionSchema = z.object({
  type: z.enum(['Ready', 'Progressing', 'Paused', 'Valid', 'Drifted', 'RecordsVerified']).describe('Condition type.'),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string().max(1024).describe('CamelCase reason.'),
  message: z.string().max(32768),
  lastTransitionTime: timestamp('When the condition last changed status.'),
  observedGeneration: generation('The metadata.generation the condition was set for.').optional(),
});

export const zoneStatusSchema = z.object({
  name: z.string(),
  phase: z.enum(ZONE_PHASES),
  storageKind: z.enum(['VMSingle']).describe("Set when the zone's storage is a VMSingle (spec.zones[].vmsingle); unset: a VMCluster.").optional(),
  vmclusterGeneration: generation("The generation of the zone's VMCluster (or VMSingle) the upgrade patch produced.").optional(),
  startedAt: timestamp('When the zone started.').optional(),
  stepStartedAt: timestamp("When the zone's current step began (a Failed zone keeps the failed step's).").optional(),
  finishedAt: timestamp('When the zone finished.').optional(),
  message: z.string().optional(),
  trafficMode: z
    .enum(['write-only', 'maintenance'])
    .describe('Set while its spec.zones[].trafficMode holds it out of reads: it left, and no rollout puts it back until the mode is read-write.')
    .optional(),
  queueHeadroom: z
    .object({
      at: timestamp('When the vmagent pages were read.'),
      fits: z.boolean().describe("Whether every vmagent pod's queue for the zone holds the expected downtime."),
      horizonSeconds: z.number().int().min(0).describe('The expected downtime predicted for (strategy.expectedDowntime, or zoneTimeout), in seconds.'),
      pods: z.number().int().min(0).describe('vmagent pods read.'),
      pod: z.string().describe('The tightest pod (the least room left after its need).').optional(),
      rateBytesPerSecond: z.number().min(0).describe("That pod's intake for the zone, bytes per second (average since it started).").optional(),
      needBytes: z.number().int().min(0).meta({ format: 'int64' }).describe('What that intake adds over the expected downtime.').optional(),
      roomBytes: z
        .number()
        .int()
        .min(0)
        .meta({ format: 'int64' })
        .describe("What that pod's queue can still take (vm_persistentqueue_free_disk_space_bytes; 0 with the on-disk queue off).")
        .optional(),
      message: z.string(),
    })
    .describe('The latest queue headroom preflight of the zone (strategy.queueHeadroom), before it left reads.')
    .optional(),
  dataCompleteness: z
    .object({
      at: timestamp('When the counters were read.'),
      complete: z.boolean().describe('Whether nothing was dropped for the zone in the window, and every vmagent pod can say so.'),
      since: timestamp('The start of the window (the reading before the zone left reads); absent: since each vmagent pod started.').optional(),
      dropped: z
        .object({
          samples: count('Samples refused by a full in-memory-only queue (vmagent_remotewrite_samples_dropped_total).'),
          bytes: count('Bytes dropped from a full on-disk queue (vm_persistentqueue_bytes_dropped_total).'),
          blocks: count('The blocks those bytes were in (vm_persistentqueue_blocks_dropped_total).'),
          packets: count('Blocks the zone refused for good (vmagent_remotewrite_packets_dropped_total).'),
        })
        .describe('Dropped in the window, summed over the vmagent pods.'),
      unverifiedPods: count('vmagent pods that restarted or went away in the window: what they lost cannot be told.'),
      message: z.string(),
    })
    .describe('Whether vmagent dropped anything for the zone while it was out (strategy.dataCompleteness), checked before it rejoined.')
    .optional(),
  sampleParity: z
    .object({
      at: timestamp('When the samples were counted.'),
      complete: z.boolean().describe('Whether no tenant of the zone lacks more than strategy.sampleParity.tolerance of what the healthy zone has.'),
      healthy: z.string().describe('The zone in reads it was compared with; absent: none was in reads (not compared).').optional(),
      from: timestamp('The start of the window: when the zone left reads.'),
      to: timestamp('The end of the window (strategy.sampleParity.lag before `at`).'),
      tenants: z
        .array(
          z.object({
            tenant: z.string().describe('accountID:projectID'),
            samples: count("The tenant's samples in the window on the zone (count_over_time of the selector)."),
            healthySamples: count('The same on the healthy zone.'),
            missing: count('How many the zone lacks (0 when it has as many or more).'),
          }),
        )
        .max(20)
        .describe('The tenants compared, those short first (at most 20 shown).'),
      tenantCount: count('Tenants compared in all.'),
      message: z.string(),
    })
    .describe('Whether the zone has the samples per tenant a zone in reads has for its window (strategy.sampleParity), counted before it rejoined.')
    .optional(),
  analysis: z
    .object({
      verdict: z.enum(ANALYSIS_VERDICTS).describe('Running, Successful (it rejoins reads), Failed (it stays out), Inconclusive (a person decides).'),
      baseline: z.string().describe('The zone it is compared with: at the previous version, in reads.').optional(),
      startedAt: timestamp('When the analysis started.'),
      bakeSeconds: z.number().int().min(0).describe('strategy.canary.bake, in seconds.'),
      measurements: count('Measurements taken.'),
      failed: count('Measurements that were Failed.'),
      inconclusive: count('Measurements that were Inconclusive.'),
      latest: z
        .object({
          at: timestamp('When it was taken.'),
          verdict: z.enum(['Successful', 'Failed', 'Inconclusive']),
          queries: z.array(
            z.object({
              query: z.string().describe('The query (its first 200 characters).'),
              source: z
                .enum(['spec', 'recent', 'freshness'])
                .describe("spec: analysis.queries; recent: the baseline's top_queries; freshness: freshnessSelector."),
              verdict: z.enum(QUERY_VERDICTS),
              baselineMs: z.number().int().min(0).describe('How long the baseline took, ms.').optional(),
              canaryMs: z.number().int().min(0).describe('How long the canary took, ms.').optional(),
              baselineSeries: count('Series in the baseline result.').optional(),
              canarySeries: count('Series in the canary result.').optional(),
              detail: z.string().optional(),
            }),
          ),
          lagSeconds: z.number().describe("How far the canary's newest freshnessSelector sample is behind the baseline's, seconds.").optional(),
          message: z.string(),
        })
        .describe('The deciding measurement (the first Failed one), else the latest.')
        .optional(),
      promoted: z.literal(true).describe('Inconclusive, and a person promoted the canary (kubectl vmdc promote): it rejoins reads.').optional(),
      message: z.string(),
    })
    .describe('The canary analysis of the zone (strategy.canary), against a zone still at the previous version.')
    .optional(),
  capacity: z
    .object({
      at: timestamp('When the pods were read.'),
      breached: z.boolean().describe('Whether the reads the other zones carried breached strategy.capacityGuard (or could not be read).'),
      requests: count('Reads in the window judged, over every vmauth and vmselect pod read.'),
      errorRatio: z.number().min(0).describe('Failed reads / reads in the window.').optional(),
      latencyMs: z.number().min(0).describe("vmauth's mean read latency in the window, ms.").optional(),
      baselineLatencyMs: z.number().min(0).describe("vmauth's mean read latency before the zone left, ms.").optional(),
      message: z.string(),
    })
    .describe('The capacity guard (strategy.capacityGuard): the reads the other zones carried while this zone was out, as last judged.')
    .optional(),
});

export const vmDistributedClusterStatusSchema = z
  .object({
    observedGeneration: generation('The metadata.generation the trigger last acted on.').optional(),
    phase: z.enum(PHASES).optional(),
    message: z.string().optional(),
    workflow: z.object({ id: z.string(), runId: z.string() }).describe('The Temporal workflow of the observed generation.').optional(),
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
    lastSucceeded: z
      .object({
        clusterVersion: z.string().describe('spec.clusterVersion of that rollout.'),
        generation: generation('The metadata.generation it rolled out.'),
      })
      .describe('The last rollout of this object that Succeeded (kept until another succeeds): what `kubectl vmdc undo` rolls out again.')
      .optional(),
    plan: z
      .object({
        generation: generation('The generation planned.'),
        at: timestamp('When it was planned.'),
        order: z.array(z.string()).describe('The zone order the rollout would take.'),
        zones: z.array(
          z.object({
            zone: z.string(),
            would: z
              .enum(['skip', 'upgrade', 'adopt', 'hold', 'fail'])
              .describe(
                'skip: up to date; upgrade; adopt: out of reads (recorded), taken first; hold: its trafficMode holds it out of reads (write-only: upgraded there; maintenance: left alone); fail: would fail, in reads.',
              ),
            reason: z.string(),
            gates: z.array(z.enum(GATES)).describe('The gates that would hold before the zone.'),
            routes: z.array(z.string()).describe('The read route objects its leaving would edit (Kind/name).'),
            removedRefs: count('How many targetRef entries its leaving would remove.'),
            queueHeadroom: zoneStatusSchema.shape.queueHeadroom,
            canary: z.literal(true).describe('It would be the canary (strategy.canary), analysed before it rejoins reads.').optional(),
          }),
        ),
      })
      .describe('What a rollout of this generation would do (strategy.dryRun: true), nothing changed.')
      .optional(),
    awaiting: z
      .object({
        gates: z.array(z.enum(GATES)).describe('The gates (spec.strategy.gates) that hold here.'),
        nextZone: z.string().describe('The zone that starts once promoted (for a canary: the canary, which rejoins reads).'),
        canary: z
          .string()
          .describe('Set when the canary analysis was Inconclusive: promote puts the canary back into reads and goes on; abort fails it, out of reads.')
          .optional(),
        capacity: z
          .string()
          .describe('Set when the capacity guard breached while nextZone is out (why): promote goes on, abort fails the zone, out of reads.')
          .optional(),
        since: timestamp('When the rollout reached the gate.'),
      })
      .describe('Set while the rollout waits at a gate for `kubectl vmdc promote` (go on) or `kubectl vmdc abort` (end here, every zone in reads).')
      .optional(),
  })
  .describe('Observed state, written by vmrollout.');
