// `kubectl vmdc fleet`: the fleet's progress query as a table and as a document (cli/render-fleet.ts).
// On the real stack: test/e2e/fleet.test.ts runs the built plugin against a fleet.
import type { FleetProgress } from '../../api/fleet-contract';
import { fleetDocument, renderFleet } from '../../cli/render-fleet';

const now = new Date('2026-12-06T10:10:00Z');
const at = (m: number) => new Date(now.getTime() - m * 60_000).toISOString();
const ref = (member: string, region: string, since: number) => ({ member, region, workflowId: `vmdc/team/${member}/g2-abc`, since: at(since) });

const progress = (o: Partial<FleetProgress> = {}): FleetProgress => ({
  namespace: 'team',
  fleet: 'prod',
  paused: false,
  running: [ref('west-1', 'west', 2), ref('east-1', 'east', 3)],
  queued: [ref('east-2', 'east', 5)],
  ended: [{ ...ref('east-0', 'east', 4), outcome: 'Succeeded' }],
  refused: [],
  ...o,
});

describe('kubectl vmdc fleet', () => {
  it('per region the member rolling out, then those queued, then the ended (newest first), with how long since', () => {
    expect(renderFleet({ workflowId: 'fleet/team/prod', execution: 'RUNNING', progress: progress() }, now)).toEqual([
      'fleet prod in team: Running — workflow fleet/team/prod',
      'REGION  MEMBER  STATE        SINCE  WORKFLOW',
      'east    east-1  rolling out  3m00s  vmdc/team/east-1/g2-abc',
      'west    west-1  rolling out  2m00s  vmdc/team/west-1/g2-abc',
      'east    east-2  queued       5m00s  vmdc/team/east-2/g2-abc',
      'east    east-0  Succeeded    4m00s  vmdc/team/east-0/g2-abc',
    ]);
  });

  it('says when it is paused, when it has ended, how many ended are not shown, and what it refused', () => {
    const ended = Array.from({ length: 12 }, (_, i) => ({ ...ref(`m-${i}`, 'east', 30 - i), outcome: 'Succeeded' }));
    const paused = renderFleet({ workflowId: 'fleet/team/prod', execution: 'RUNNING', progress: progress({ paused: true }) }, now);
    expect(paused[0]).toBe('fleet prod in team: Running, paused: no member starts until resumed — workflow fleet/team/prod');
    const done = renderFleet(
      {
        workflowId: 'fleet/team/prod',
        execution: 'COMPLETED',
        progress: progress({ running: [], queued: [], ended, refused: ['team/x: not in namespace team'] }),
      },
      now,
    );
    expect(done[0]).toBe('fleet prod in team: COMPLETED (nothing queued or running) — workflow fleet/team/prod');
    expect(done.filter((l) => l.includes('Succeeded'))).toHaveLength(10);
    expect(done[2]).toContain('m-11');
    expect(done.slice(-2)).toEqual(['(2 more ended: -o json)', 'refused: team/x: not in namespace team']);
  });

  it('-o json: every field the workflow keeps, with its execution status', () => {
    expect(fleetDocument({ workflowId: 'fleet/team/prod', execution: 'RUNNING', progress: progress() })).toEqual({
      workflowId: 'fleet/team/prod',
      executionStatus: 'RUNNING',
      ...progress(),
    });
  });
});
