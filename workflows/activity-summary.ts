// The one-line summary each activity call carries into the Temporal Web UI ("remove vm-az-b from
// VMAuth vm-global"), so a rollout's history reads as a story. Derived from the call's input only:
// the same input, the same summary, on every replay. Pure.
import type { RouteRef } from '../api/route-records';
import { formatDuration } from '../api/duration';
import type { RolloutActivities } from './activity-types';

type Input<K extends keyof RolloutActivities> = Parameters<RolloutActivities[K]>[0];
type Summaries = { [K in keyof RolloutActivities]: (input: Input<K>) => string };

const routes = (rs: readonly RouteRef[]) => [...new Set(rs.map((r) => `${r.kind} ${r.name}`))].join(', ');

const SUMMARIES: Summaries = {
  verifyInput: (i) => `check the input against ${i.object.namespace}/${i.object.name} (generation ${i.object.generation})`,
  takeOverObject: (i) => `supersede earlier workflows of ${i.object.namespace}/${i.object.name}`,
  writeStatus: (i) => {
    const z = i.status.zones?.find((x) => x.name === i.status.currentZone);
    return `status: ${i.status.phase ?? '?'}${z ? `, zone ${z.name} ${z.phase}` : ''}`;
  },
  reportQueuedMember: (i) => `report ${i.object.namespace}/${i.object.name} generation ${i.object.generation} Cancelled, never started`,
  readObject: (i) => `read ${i.kind} ${i.name}`,
  applyObject: (i) => {
    const version = typeof i.patch.clusterVersion === 'string' ? ` (clusterVersion ${i.patch.clusterVersion})` : '';
    return `${i.dryRun ? 'dry-run apply' : i.create ? 'create or apply' : 'apply'} ${i.kind} ${i.name}${version}`;
  },
  waitOperational: (i) => `wait until ${i.kind} ${i.name} is operational at generation ${i.generation}`,
  readRoutes: (i) => `read the routes ${routes(i.routes)}${i.vmuserSelector ? ` and the VMUsers labelled ${i.vmuserSelector}` : ''}`,
  editRoutes: (i) => {
    const clusters = [...new Set(i.removals.map((r) => r.vmcluster.name))].join(', ') || `zone ${i.record.zone}`;
    const on = i.removals.length ? routes(i.removals.map((r) => r.route)) : 'the routes that record it';
    return i.direction === 'remove' ? `remove ${clusters} from ${on}` : `put ${clusters} back into ${on}`;
  },
  readRecords: () => 'read which zones the routes record out of reads',
  waitQueueDrained: (i) => `wait until vmagent's queue for ${i.vmclusterName} stays empty for ${formatDuration(i.queueDrainedForMs)}`,
  sampleQueue: (i) => `read vmagent's queue for ${i.vmclusterName}`,
  watchQueue: (i) => `wait until vmagent's queue for ${i.vmclusterName} stays empty for ${formatDuration(i.queueDrainedForMs)}`,
  readVmagent: (i) =>
    `read vmagent for ${i.vmclusterName}: ${[i.headroomHorizonMs !== undefined ? `can its queue hold ${formatDuration(i.headroomHorizonMs)} of the zone down` : '', i.drops ? 'what it dropped' : ''].filter(Boolean).join('; ')}`,
  waitCarriersReady: (i) => `wait until ${i.carriers.map((c) => c.vmcluster).join(', ') || 'the other zones'} can carry the reads`,
  confirmSwitch: (i) => `confirm every vmauth pod of VMAuth ${i.vmauthName} serves routes ${i.expect === 'absent' ? 'without' : 'with'} ${i.vmcluster}`,
  measureCanary: (i) =>
    `compare canary ${i.canary.vmcluster} with ${i.baseline.vmcluster}: ${i.analysis.queries.length} queries${i.analysis.recentQueries ? ` + ${i.analysis.recentQueries} recent` : ''}${i.analysis.freshnessSelector ? ', ingestion lag' : ''}`,
  countSamples: (i) =>
    `count ${i.zone.vmcluster}'s samples of ${i.parity.tenants.length ? `${i.parity.tenants.length} tenant${i.parity.tenants.length === 1 ? '' : 's'}` : 'every tenant'} over its window against ${i.healthy.vmcluster}`,
  readReadHealth: (i) => `read how VMAuth ${i.vmauthName}${i.carriers.length ? ` and ${i.carriers.join(', ')}` : ''} serve the reads`,
  waitReadsDrained: (i) => `wait until ${i.vmcluster}'s ${i.storageKind ? 'pods see' : 'vmselects see'} no new reads (at most ${formatDuration(i.maxMs)})`,
  awaitSwitch: (i) =>
    `wait until ${routes(i.routes)} apply and every vmauth pod serves routes ${i.confirm.expect === 'absent' ? 'without' : 'with'} ${i.confirm.vmcluster}`,
};

/** The UI shows one line; longer ones are cut. */
const MAX_LENGTH = 200;

/** The summary of a call, or undefined (an unknown activity, or an input it cannot read: a summary never fails a call). */
export function activitySummary(name: string, input: unknown): string | undefined {
  const summarize = (SUMMARIES as Record<string, ((i: unknown) => string) | undefined>)[name];
  if (!summarize || input === null || typeof input !== 'object') return undefined;
  try {
    const s = summarize(input);
    return s.length > MAX_LENGTH ? `${s.slice(0, MAX_LENGTH - 1)}…` : s;
  } catch {
    return undefined;
  }
}
