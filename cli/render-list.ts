// `kubectl vmdc list` (and `get -A`): one row per object, from its status alone (asking Temporal
// for every object would make a list as slow as its slowest workflow). Pure: objects + now → rows.
import type { Awaiting } from '../api/types';
import { formatAge } from './format';
import { printable } from './printable';
import { fit, seg, serialize } from './style';
import { DEFAULT_WIDTH } from './render-text';
import { buildView } from './view';
import type { VmdcObject } from '../kube/vmdc-object';

export interface ListRow {
  namespace: string;
  name: string;
  phase: string;
  /** `2/3 az-b` while a zone is in flight, else the number of zones. */
  zones: string;
  out: string[];
  generation?: number;
  observedGeneration?: number;
  ageMs?: number;
  clusterVersion?: string;
  workflowId?: string;
  /** The gate the rollout waits at for a person. */
  awaiting?: Awaiting;
  message?: string;
}

export function listRows(objects: VmdcObject[], now: Date): ListRow[] {
  return objects
    .map((object) => {
      const v = buildView({ object });
      const created = Date.parse(object.metadata?.creationTimestamp as unknown as string);
      const row: ListRow = {
        namespace: v.namespace,
        name: v.name,
        // A status not yet of the current spec (statusIsCurrent) tells how the previous rollout went, not this one.
        phase: v.phase ? (v.current ? v.phase : `${v.phase} (previous rollout)`) : 'Pending',
        zones: v.currentZone && v.zoneIndex && !v.ended ? `${v.zoneIndex}/${v.zoneCount} ${v.currentZone}` : String(v.zoneCount),
        out: v.zonesOutOfRotation,
      };
      if (v.generation !== undefined) row.generation = v.generation;
      if (v.observedGeneration !== undefined) row.observedGeneration = v.observedGeneration;
      if (Number.isFinite(created)) row.ageMs = Math.max(0, now.getTime() - created);
      if (v.version.to) row.clusterVersion = v.version.to;
      if (v.workflow) row.workflowId = v.workflow.id;
      if (v.awaiting) row.awaiting = v.awaiting;
      if (v.message) row.message = v.message;
      return row;
    })
    .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
}

/**
 * The table: NAMESPACE only with -A (as kubectl); a rollout at a gate says so in PHASE; wide adds
 * VERSION, WORKFLOW, AWAITING (the gates and the zone they hold) and MESSAGE, and cuts nothing.
 */
export function renderList(rows: ListRow[], opts: { allNamespaces: boolean; wide: boolean }): string[] {
  const header = [
    ...(opts.allNamespaces ? ['NAMESPACE'] : []),
    'NAME',
    'PHASE',
    'ZONE(S)',
    'OUT',
    'GENERATION',
    'AGE',
    ...(opts.wide ? ['VERSION', 'WORKFLOW', 'AWAITING', 'MESSAGE'] : []),
  ];
  const cells = rows.map((r) =>
    [
      ...(opts.allNamespaces ? [r.namespace] : []),
      r.name,
      r.awaiting ? `${r.phase} (awaiting approval)` : r.phase,
      r.zones,
      r.out.length ? r.out.join(',') : '-',
      r.generation === undefined ? '-' : String(r.generation),
      r.ageMs === undefined ? '-' : formatAge(r.ageMs),
      ...(opts.wide
        ? [r.clusterVersion ?? '-', r.workflowId ?? '-', r.awaiting ? `${r.awaiting.gates.join('+')} → ${r.awaiting.nextZone}` : '-', r.message ?? '-']
        : []),
    ].map((cell) => printable(cell, { oneLine: true })),
  );
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const width = opts.wide ? Infinity : DEFAULT_WIDTH;
  const line = (c: string[]) => serialize(fit([seg(c.map((x, i) => (i === c.length - 1 ? x : x.padEnd(widths[i]!))).join('  '))], width), false);
  return [line(header), ...cells.map(line)];
}

/** -o json|yaml: a kubectl-like List of the rows, every key always present. */
export function listDocument(rows: ListRow[]) {
  return {
    kind: 'VMDistributedClusterSummaryList',
    items: rows.map((r) => ({
      namespace: r.namespace,
      name: r.name,
      phase: r.phase,
      zones: r.zones,
      zonesOutOfRotation: r.out,
      generation: r.generation ?? null,
      observedGeneration: r.observedGeneration ?? null,
      ageSeconds: r.ageMs === undefined ? null : Math.floor(r.ageMs / 1000),
      clusterVersion: r.clusterVersion ?? null,
      workflowId: r.workflowId ?? null,
      awaiting: r.awaiting ? { gates: r.awaiting.gates, nextZone: r.awaiting.nextZone, since: r.awaiting.since } : null,
      message: r.message ?? null,
    })),
  };
}
