// `kubectl vmdc fleet`: a fleet's parent workflow as a table, per region the member rolling out,
// those queued and those ended. Pure: what the workflow said + now → lines or a JSON document.
import type { FleetMemberRef, FleetProgress } from '../api/fleet-contract';
import { formatAge } from './format';
import { DEFAULT_WIDTH } from './render-text';
import { fit, seg, serialize } from './style';

export interface FleetView {
  workflowId: string;
  /** The parent workflow's execution status (RUNNING, COMPLETED, CANCELED, ...). */
  execution: string;
  progress: FleetProgress;
}

/** Text shows the newest ended members only; -o json|yaml shows all the workflow keeps. */
const ENDED_SHOWN = 10;

interface Row {
  region: string;
  member: string;
  state: string;
  since: string;
  workflowId: string;
}

function rows(p: FleetProgress): Row[] {
  const row = (r: FleetMemberRef, state: string): Row => ({ region: r.region, member: r.member, state, since: r.since, workflowId: r.workflowId });
  const byRegion = (a: Row, b: Row) => a.region.localeCompare(b.region);
  return [
    ...p.running.map((r) => row(r, 'rolling out')).sort(byRegion),
    ...p.queued.map((r) => row(r, 'queued')).sort(byRegion),
    ...p.ended
      .slice(-ENDED_SHOWN)
      .reverse()
      .map((e) => row(e, e.outcome)),
  ];
}

export function renderFleet(v: FleetView, now: Date): string[] {
  const p = v.progress;
  const state =
    v.execution === 'RUNNING' ? (p.paused ? 'Running, paused: no member starts until resumed' : 'Running') : `${v.execution} (nothing queued or running)`;
  const out = [`fleet ${p.fleet} in ${p.namespace}: ${state} — workflow ${v.workflowId}`];
  const header = ['REGION', 'MEMBER', 'STATE', 'SINCE', 'WORKFLOW'];
  const cells = rows(p).map((r) => [r.region, r.member, r.state, formatAge(now.getTime() - Date.parse(r.since)), r.workflowId]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => serialize(fit([seg(c.map((x, i) => (i === c.length - 1 ? x : x.padEnd(widths[i]!))).join('  '))], DEFAULT_WIDTH), false);
  if (cells.length) out.push(line(header), ...cells.map(line));
  if (p.ended.length > ENDED_SHOWN) out.push(`(${p.ended.length - ENDED_SHOWN} more ended: -o json)`);
  for (const r of p.refused) out.push(`refused: ${r}`);
  return out;
}

export function fleetDocument(v: FleetView) {
  return { workflowId: v.workflowId, executionStatus: v.execution, ...v.progress };
}
