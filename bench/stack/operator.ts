// The real-operator bed (test/infra/harness/operator-bed/): its start-up, and one 3-zone rollout of
// vmrollout under the real VictoriaMetrics operator, each run from nothing.
//
// Start-up: ms from nothing to each part ready, the last being the demo's VM objects served by the
// operator's pods (every vmauth pod loaded the config with every zone). Rollout: the demo's
// VMDistributedCluster created at the version every zone runs (every zone skipped), then bumped;
// its time, each zone's time (status startedAt → finishedAt), and the Temporal history of the
// bumped generation's workflow: events per zone (history length ÷ zones, everything included) and
// events by type.
//
// Runs inside the bed's network namespace (`make bench-operator`). Prints ONE JSON document (also
// written to .tmp/bench/operator.json); never asserts a time.
import type { VMDistributedClusterStatus } from '../../api/types';
import { createObjects, DEMO_CLUSTERS, mergePatch, V1, V2, waitVmdcPhase } from '../../test/e2e/support';
import { startRealOperatorBed } from '../../test/infra/harness/operator-bed';
import { applyDemo } from '../../test/infra/harness/operator-bed/demo';
import { startVmrollout } from '../../test/infra/harness/operator-bed/vmrollout';
import { stopAll } from '../../test/infra/harness/processes';
import { quantile, round } from '../analysis/stats';
import { eventTypeCounts, fullHistory } from '../support/history';
import { provenance } from '../support/provenance';
import { writeBenchDocument } from '../support/document';

const NS = 'default';
const VMAUTH = 'vm-global';
const VMDC = 'bench';

interface Run {
  startupMs: Record<string, number>;
  rolloutMs: number;
  zoneMs: Record<string, number>;
  eventsPerZone: number;
  events: number;
  eventTypes: Record<string, number>;
}

async function oneRun(): Promise<Run> {
  const t0 = Date.now();
  const bed = await startRealOperatorBed({ namespace: NS, zones: DEMO_CLUSTERS, vmauth: VMAUTH });
  try {
    const demo = await applyDemo(bed, { namespace: NS, initialVersion: V1, vmauthPods: 2, vmdcName: VMDC });
    const startupMs = { ...bed.timings, 'demo objects served by the operator pods': Date.now() - t0 };
    const vr = await startVmrollout({ kc: bed.kc, namespace: NS, vmauth: VMAUTH });
    try {
      // The strategy of test/operator/real-operator.test.ts.
      demo.vmdc.spec!.strategy = { order: 'Declared', readDrainDelay: '2s', queueDrainedFor: '6s', pollInterval: '250ms', zoneTimeout: '3m' };
      await createObjects(bed.kc, [demo.vmdc]);
      await waitVmdcPhase(bed.kc, NS, VMDC, 1, ['Succeeded'], { timeoutMs: 120_000, fresh: true });
      const r0 = Date.now();
      const generation = (await mergePatch(bed.kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: V2 } })).metadata.generation!;
      const final = (await waitVmdcPhase(bed.kc, NS, VMDC, generation, ['Succeeded', 'Failed'], { timeoutMs: 8 * 60_000 })) as VMDistributedClusterStatus;
      const rolloutMs = Date.now() - r0;
      if (final.phase !== 'Succeeded') throw new Error(`the rollout ended ${final.phase}: ${final.message ?? ''}`);
      const zones = final.zones ?? [];
      const zoneMs = Object.fromEntries(zones.map((z) => [z.name, Date.parse(z.finishedAt ?? '') - Date.parse(z.startedAt ?? '')]));
      const { events } = await fullHistory(vr.client, final.workflow!.id, final.workflow!.runId);
      return { startupMs, rolloutMs, zoneMs, eventsPerZone: round(events.length / zones.length), events: events.length, eventTypes: eventTypeCounts(events) };
    } finally {
      await vr.stop();
    }
  } finally {
    await bed.stop();
  }
}

async function main(): Promise<void> {
  const runsArg = process.argv.find((a) => a.startsWith('--runs='));
  const runs = Number(runsArg?.slice('--runs='.length) ?? 3);
  const prov = provenance();
  const results: Run[] = [];
  for (let i = 0; i < runs; i++) results.push(await oneRun());
  const steps = Object.keys(results[0]!.startupMs);
  const doc = {
    benchmark: 'operator',
    what: "test/infra/harness/operator-bed: the bed's start-up (ms from nothing to each part ready), then a 3-zone clusterVersion rollout of the demo's VMDistributedCluster under the real operator v0.74.1: its time, each zone's, and the Temporal history of its workflow",
    ...prov,
    runs: results,
    median: {
      startupMs: Object.fromEntries(
        steps.map((k) => [
          k,
          round(
            quantile(
              results.map((r) => r.startupMs[k]!),
              0.5,
            ),
          ),
        ]),
      ),
      rolloutMs: round(
        quantile(
          results.map((r) => r.rolloutMs),
          0.5,
        ),
      ),
      eventsPerZone: round(
        quantile(
          results.map((r) => r.eventsPerZone),
          0.5,
        ),
      ),
    },
  };
  writeBenchDocument('operator', doc);
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => void stopAll().then(() => process.exit()));
