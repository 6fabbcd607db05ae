// kubectl vmdc history: rollouts from visibility as rows (pure part).
import { historyDocument, historyRows, renderHistory, resultOf } from '../../cli/render-history';
import type { RolloutRecord } from '../../cli/temporal';

const NOW = new Date('2026-03-04T12:00:00Z');
const rec = (generation: number, extra: Partial<RolloutRecord>): RolloutRecord => ({
  workflowId: `vmdc/monitoring/vm-global/g${generation}-1a2b3c4d`,
  runId: `run-${generation}`,
  uidPrefix: '1a2b3c4d',
  generation,
  clusterVersion: 'v1.151.0-cluster',
  status: 'COMPLETED',
  startedAt: '2026-03-04T10:00:00Z',
  closedAt: '2026-03-04T10:12:34Z',
  ...extra,
});

const records = [
  rec(5, { status: 'RUNNING', clusterVersion: 'v1.152.0-cluster', startedAt: '2026-03-04T11:50:00Z', closedAt: undefined }),
  rec(4, { status: 'CANCELED', clusterVersion: 'v1.152.0-cluster' }),
  rec(3, { resultPhase: 'Superseded' }),
  rec(2, { resultPhase: 'Succeeded' }),
  rec(1, { clusterVersion: 'v1.150.0-cluster', uidPrefix: '99887766', workflowId: 'vmdc/monitoring/vm-global/g1-99887766' }),
];

describe('kubectl vmdc history', () => {
  it('result: the returned phase of a completed rollout, the object phase of the running one', () => {
    expect(records.map((r) => resultOf(r, r.status === 'RUNNING' ? 'Failed' : undefined))).toEqual([
      'Running (Failed)',
      'Cancelled',
      'Superseded',
      'Succeeded',
      'Completed',
    ]);
    expect(resultOf(rec(9, { status: 'FAILED' }))).toBe('WorkflowFailed');
    expect(resultOf(rec(9, { status: 'TERMINATED' }))).toBe('Terminated');
  });

  it('renders one row per rollout: generation, version, result, start, duration (+ while running), uid prefix', () => {
    const rows = historyRows(records, NOW, { workflowId: records[0]!.workflowId, phase: 'Progressing' });
    expect(renderHistory(rows)).toEqual([
      'GEN  VERSION           RESULT                 STARTED               DURATION  UID',
      '5    v1.152.0-cluster  Running (Progressing)  2026-03-04 11:50:00Z  10m00s+   1a2b3c4d',
      '4    v1.152.0-cluster  Cancelled              2026-03-04 10:00:00Z  12m34s    1a2b3c4d',
      '3    v1.151.0-cluster  Superseded             2026-03-04 10:00:00Z  12m34s    1a2b3c4d',
      '2    v1.151.0-cluster  Succeeded              2026-03-04 10:00:00Z  12m34s    1a2b3c4d',
      '1    v1.150.0-cluster  Completed              2026-03-04 10:00:00Z  12m34s    99887766',
    ]);
  });

  it('-o json: every key always there', () => {
    const doc = historyDocument(historyRows(records, NOW));
    expect(doc[0]).toEqual({
      workflowId: 'vmdc/monitoring/vm-global/g5-1a2b3c4d',
      runId: 'run-5',
      uidPrefix: '1a2b3c4d',
      generation: 5,
      clusterVersion: 'v1.152.0-cluster',
      result: 'Running',
      executionStatus: 'RUNNING',
      startedAt: '2026-03-04T11:50:00Z',
      closedAt: null,
      durationSeconds: 600,
    });
    for (const d of doc) expect(Object.keys(d)).toEqual(Object.keys(doc[0]!));
  });
});
