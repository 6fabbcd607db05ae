// The text of `kubectl vmdc plan`: the order, then each zone in it — the gates before it, what it
// would do, what leaving reads would remove, the pause after it — the route objects read, and the
// predicted duration. Pure: plan → lines of at most 100 columns.
import { formatAge, gatesText } from './format';
import { DEFAULT_WIDTH } from './render-text';
import type { DurationPrediction, PlannedZone, RolloutPlan } from './rollout-plan';
import { wrap } from './style';

const INDENT = '     ';

/** `text` wrapped to the view's width, the lines after the first under `hang`. */
function hanging(first: string, text: string, hang = INDENT): string[] {
  const [head = '', ...rest] = wrap(text, DEFAULT_WIDTH - first.length);
  return [
    `${first}${head}`,
    ...wrap(rest.join(' '), DEFAULT_WIDTH - hang.length)
      .filter((l) => l !== '')
      .map((l) => `${hang}${l}`),
  ];
}

export function durationText(d: DurationPrediction): string {
  const gates = d.plusGateWaits ? " + the gates' waits" : '';
  if (d.zonesToUpgrade === 0) return 'none to predict: every zone would be skipped';
  if (d.predictedMs === null || d.meanZoneMs === null) return `no past rollout to predict from${gates}`;
  const pauses = `${d.pauses ? `, + ${d.pauses} × pauseBetweenZones ${formatAge(d.pauseBetweenZonesMs)}` : ''}${d.canaryBakeMs ? `, + the canary's bake ${formatAge(d.canaryBakeMs)}` : ''}`;
  const zones = `${d.zonesToUpgrade} ${d.zonesToUpgrade === 1 ? 'zone' : 'zones'}`;
  const past = `${d.pastZones} upgraded ${d.pastZones === 1 ? 'zone' : 'zones'}`;
  return `about ${formatAge(d.predictedMs)} (${zones} × ${formatAge(d.meanZoneMs)}, the mean of the last rollout's ${past}${pauses})${gates}`;
}

function zoneLines(p: RolloutPlan, z: PlannedZone, n: number): string[] {
  const { name, namespace } = p.object;
  const out: string[] = [];
  if (z.gates.length) out.push(...hanging(`${INDENT}⏸ `, `waits at ${gatesText(z.gates)} before ${z.zone}, for kubectl vmdc promote ${name} -n ${namespace}`));
  out.push(...hanging(`${String(n).padStart(3)}. `, `${z.zone} (${z.storageKind ?? 'VMCluster'} ${z.vmcluster}): ${z.would} — ${z.reason}`));
  if (z.would !== 'skip') {
    if (z.removals.length === 0 && z.unknownRoutes.length === 0) out.push(`${INDENT}out of reads: no managed route sends reads to it (nothing to remove)`);
    for (const r of z.removals)
      for (const x of r.removed) out.push(...hanging(`${INDENT}out of reads: `, `${r.route.kind} ${r.route.name} ${x.ref}: ${x.what}`, `${INDENT}  `));
    for (const u of z.unknownRoutes) out.push(...hanging(`${INDENT}out of reads: `, `${u.route.kind} ${u.route.name} unknown (${u.reason})`, `${INDENT}  `));
  }
  if (z.canaryBakeMs !== undefined)
    out.push(
      ...hanging(
        `${INDENT}canary: `,
        `analysed for ${formatAge(z.canaryBakeMs)}, still out of reads, against a zone not yet upgraded, before it rejoins (Failed: it stays out; Inconclusive: kubectl vmdc promote ${name} -n ${namespace})`,
        `${INDENT}  `,
      ),
    );
  if (z.pauseAfterMs > 0) out.push(`${INDENT}then pauseBetweenZones ${formatAge(z.pauseAfterMs)} (kubectl vmdc promote ends it early)`);
  return out;
}

export function renderPlan(p: RolloutPlan): string[] {
  const { name, namespace, generation } = p.object;
  const by = p.order.mode === 'Shuffle' ? `Shuffle, seeded by uid/generation ${generation}` : 'Declared';
  const unreadable = p.routes.filter((r) => !r.readable);
  const read = p.routes.filter((r) => r.readable).map((r) => `${r.route.kind} ${r.route.name}`);
  return [
    ...hanging('', `Plan for VMDistributedCluster ${namespace}/${name}, generation ${generation} (clusterVersion ${p.clusterVersion})`, ''),
    ...hanging('Order: ', `${p.order.zones.join(', ')} (${by})`, '       '),
    '',
    ...p.zones.flatMap((z, i) => zoneLines(p, z, i + 1)),
    '',
    ...hanging(
      'Routes: ',
      `${read.length ? `${read.join(', ')} read` : 'none read'}${unreadable.map((r) => `; ${r.route.kind} ${r.route.name} ${r.reason}`).join('')}`,
      '        ',
    ),
    ...hanging('Duration: ', durationText(p.duration), '          '),
    "Nothing was changed: each zone's VMCluster (or VMSingle) apply was a dry run.",
  ];
}
