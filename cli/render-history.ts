// `kubectl vmdc history`: one row per rollout. Pure: records + now → lines or a JSON document.
import { formatAge, formatTime } from './format';
import { fit, seg, serialize } from './style';
import type { RolloutRecord } from './temporal';
import { DEFAULT_WIDTH } from './render-text';
import { WIDE_COLUMNS } from './output';

export interface HistoryRow extends RolloutRecord {
  /** What the rollout came to (see resultOf). */
  result: string;
  durationMs?: number;
}

/**
 * A closed workflow's result phase tells Succeeded from Superseded; a running one may be Failed or
 * Paused, which only the object's status says (`currentPhase`, for the workflow it names).
 */
export function resultOf(r: RolloutRecord, currentPhase?: string): string {
  switch (r.status) {
    case 'RUNNING':
      return currentPhase ? `Running (${currentPhase})` : 'Running';
    case 'COMPLETED':
      return r.resultPhase ?? 'Completed';
    case 'CANCELED':
      return 'Cancelled';
    case 'FAILED':
      return 'WorkflowFailed';
    case 'TERMINATED':
      return 'Terminated';
    case 'TIMED_OUT':
      return 'TimedOut';
    default:
      return r.status;
  }
}

export function historyRows(records: RolloutRecord[], now: Date, current?: { workflowId?: string; phase?: string }): HistoryRow[] {
  return records.map((r) => {
    const start = r.startedAt ? Date.parse(r.startedAt) : undefined;
    const end = r.closedAt ? Date.parse(r.closedAt) : now.getTime();
    return {
      ...r,
      result: resultOf(r, current?.workflowId === r.workflowId ? current.phase : undefined),
      ...(start !== undefined ? { durationMs: Math.max(0, end - start) } : {}),
    };
  });
}

/** wide: the workflow id too, and nothing cut to 100 columns. */
export function renderHistory(rows: HistoryRow[], opts: { wide?: boolean } = {}): string[] {
  const header = ['GEN', 'VERSION', 'RESULT', 'STARTED', 'DURATION', 'UID', ...(opts.wide ? ['WORKFLOW'] : [])];
  const cells = rows.map((r) => [
    r.generation === undefined ? '-' : String(r.generation),
    r.clusterVersion ?? '-',
    r.result,
    r.startedAt ? formatTime(r.startedAt) : '-',
    r.durationMs === undefined ? '-' : `${formatAge(r.durationMs)}${r.closedAt ? '' : '+'}`,
    r.uidPrefix ?? '-',
    ...(opts.wide ? [r.workflowId] : []),
  ]);
  const width = opts.wide ? WIDE_COLUMNS : DEFAULT_WIDTH;
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => serialize(fit([seg(c.map((x, i) => (i === c.length - 1 ? x : x.padEnd(widths[i]!))).join('  '))], width), false);
  return [line(header), ...cells.map(line)];
}

export function historyDocument(rows: HistoryRow[]) {
  return rows.map((r) => ({
    workflowId: r.workflowId,
    runId: r.runId,
    uidPrefix: r.uidPrefix ?? null,
    generation: r.generation ?? null,
    clusterVersion: r.clusterVersion ?? null,
    result: r.result,
    executionStatus: r.status,
    startedAt: r.startedAt ?? null,
    closedAt: r.closedAt ?? null,
    durationSeconds: r.durationMs === undefined ? null : Math.floor(r.durationMs / 1000),
  }));
}
