import type { V1EndpointSlice } from '@kubernetes/client-node';
import { objectState } from '../../activities/objects/object-state';
import { mayReportQueued, mayWriteStatus, statusPatch, sameGeneration, StepTimer } from '../../activities/status/write-status';
import { withRecordedZones } from '../../api/recorded-status';
import { decideTakeOver } from '../../activities/start/take-over';
import { parseWorkflowId, runningWorkflowsQuery } from '../../api/rollout-contract';
import type { VMDistributedClusterStatus, ZonePhase } from '../../api/types';
import { operationalVerdict } from '../../activities/objects/wait-operational';
import { metricsURL, podsFromEndpointSlices } from '../../activities/pods/service-pods';
import { authorizationFromSecretData } from '../../activities/vmagent/auth';
import type { ActivityMetrics } from '../../activities/metrics';

describe('objectState / operationalVerdict', () => {
  const obj = (status: object, generation = 3) =>
    ({ apiVersion: 'x/v1', kind: 'VMCluster', metadata: { name: 'a', generation }, spec: { a: 1 }, status }) as never;
  it('reads generation, observedGeneration, updateStatus, reason, spec', () => {
    expect(objectState(obj({ observedGeneration: 3, updateStatus: 'operational', reason: '' }))).toEqual({
      exists: true,
      generation: 3,
      observedGeneration: 3,
      updateStatus: 'operational',
      spec: { a: 1 },
    });
    expect(objectState(undefined)).toEqual({ exists: false });
  });
  it('done only at observedGeneration >= generation and operational', () => {
    expect(operationalVerdict({ exists: true, observedGeneration: 3, updateStatus: 'operational' }, 3)).toEqual({ done: true });
    expect(operationalVerdict({ exists: true, observedGeneration: 4, updateStatus: 'operational' }, 3)).toEqual({ done: true });
    expect(operationalVerdict({ exists: true, observedGeneration: 2, updateStatus: 'operational' }, 3)).toMatchObject({ done: false, failed: false });
    expect(operationalVerdict({ exists: true, observedGeneration: 3, updateStatus: 'expanding' }, 3)).toMatchObject({ done: false, failed: false });
    expect(operationalVerdict({ exists: false }, 3)).toMatchObject({ done: false, failed: false });
  });
  it('failed at the generation (or with no observedGeneration) fails; a stale failure does not', () => {
    expect(operationalVerdict({ exists: true, observedGeneration: 3, updateStatus: 'failed', reason: 'bad image' }, 3)).toEqual({
      done: false,
      failed: true,
      message: 'updateStatus failed: bad image',
    });
    expect(operationalVerdict({ exists: true, updateStatus: 'failed' }, 3)).toMatchObject({ failed: true });
    expect(operationalVerdict({ exists: true, observedGeneration: 2, updateStatus: 'failed' }, 3)).toMatchObject({ failed: false });
  });
});

describe('status', () => {
  it('statusPatch clears rollout-owned fields left out, keeps the trigger-owned ones untouched', () => {
    expect(statusPatch({ phase: 'Succeeded', zones: [] })).toEqual({
      phase: 'Succeeded',
      zones: [],
      message: null,
      plan: null,
      currentZone: null,
      zonesOutOfRotation: null,
      awaiting: null,
    });
    const awaiting = { gates: ['BeforeEachZone' as const], nextZone: 'a', since: '2026-12-05T10:00:00Z' };
    expect(statusPatch({ phase: 'Progressing', currentZone: 'a', message: 'm', zonesOutOfRotation: ['a'], awaiting })).toEqual({
      phase: 'Progressing',
      currentZone: 'a',
      message: 'm',
      zonesOutOfRotation: ['a'],
      awaiting,
      plan: null,
    });
    // A dry run's plan is written as it is; the next rollout's status (without one) clears it.
    const plan = { generation: 3, at: '2026-12-05T10:00:00Z', order: ['a'], zones: [] };
    expect(statusPatch({ phase: 'Planned', plan }).plan).toEqual(plan);
  });
  it("statusPatch keeps the conditions the rollout does not own (the trigger's Valid) and replaces its own", () => {
    const t = '2025-01-01T00:00:00Z';
    const valid = { type: 'Valid' as const, status: 'True' as const, reason: 'SpecValid', message: 'ok', lastTransitionTime: t };
    const oldReady = { type: 'Ready' as const, status: 'False' as const, reason: 'Progressing', message: 'old', lastTransitionTime: t };
    const ready = { type: 'Ready' as const, status: 'True' as const, reason: 'Succeeded', message: 'done', lastTransitionTime: t };
    expect(statusPatch({ phase: 'Succeeded', conditions: [ready] }, [valid, oldReady])).toMatchObject({
      conditions: [valid, ready],
    });
    expect(statusPatch({ phase: 'Succeeded' }, [valid])).not.toHaveProperty('conditions');
  });
  it('sameGeneration checks uid and generation', () => {
    const o = { namespace: 'n', name: 'x', uid: 'u1', generation: 2 };
    expect(sameGeneration({ uid: 'u1', generation: 2 }, o)).toBe(true);
    expect(sameGeneration({ uid: 'u1', generation: 3 }, o)).toBe(false);
    expect(sameGeneration({ uid: 'u2', generation: 2 }, o)).toBe(false);
    expect(sameGeneration(undefined, o)).toBe(false);
  });
  it('mayWriteStatus: same uid and (own generation, or status.workflow still names the caller)', () => {
    const o = { namespace: 'n', name: 'x', uid: 'u1', generation: 2 };
    const wf = (id: string) => ({ workflow: { id, runId: 'r' } });
    expect(mayWriteStatus({ metadata: { uid: 'u1', generation: 2 } }, o, 'w2')).toBe(true);
    expect(mayWriteStatus({ metadata: { uid: 'u1', generation: 2 }, status: wf('other') }, o, 'w2')).toBe(true);
    // adopted: a later generation that still names this workflow
    expect(mayWriteStatus({ metadata: { uid: 'u1', generation: 3 }, status: wf('w2') }, o, 'w2')).toBe(true);
    // superseded: status.workflow moved on, or is gone
    expect(mayWriteStatus({ metadata: { uid: 'u1', generation: 3 }, status: wf('w3') }, o, 'w2')).toBe(false);
    expect(mayWriteStatus({ metadata: { uid: 'u1', generation: 3 }, status: {} }, o, 'w2')).toBe(false);
    expect(mayWriteStatus({ metadata: { uid: 'u1', generation: 3 }, status: wf('w2') }, o, undefined)).toBe(false);
    // another object (deleted and recreated), or none
    expect(mayWriteStatus({ metadata: { uid: 'u2', generation: 3 }, status: wf('w2') }, o, 'w2')).toBe(false);
    expect(mayWriteStatus({ metadata: { uid: 'u2', generation: 2 } }, o, 'w2')).toBe(false);
    expect(mayWriteStatus(undefined, o, 'w2')).toBe(false);
  });
  it("mayReportQueued: only the fleet the object's own spec names, for the child its status names, at that generation", () => {
    const o = { namespace: 'n', name: 'x', uid: 'u1', generation: 2 };
    const live = (spec: object, child = 'w2', meta: object = {}) => ({
      metadata: { uid: 'u1', generation: 2, ...meta },
      spec,
      status: { workflow: { id: child, runId: '' } },
    });
    const inProd = { fleet: { name: 'prod', region: 'eu' } };
    expect(mayReportQueued(live(inProd), o, 'w2', 'fleet/n/prod')).toBe(true);
    // a workflow started with another fleet's id (anyone can), or any other caller
    expect(mayReportQueued(live(inProd), o, 'w2', 'fleet/n/other')).toBe(false);
    expect(mayReportQueued(live(inProd), o, 'w2', 'vmdc/n/x/g2-u1')).toBe(false);
    expect(mayReportQueued(live({}), o, 'w2', 'fleet/n/prod')).toBe(false);
    // the status names another child (it started, or a newer generation took over), or the object moved on
    expect(mayReportQueued(live(inProd, 'w3'), o, 'w2', 'fleet/n/prod')).toBe(false);
    expect(mayReportQueued(live(inProd, 'w2', { generation: 3 }), o, 'w2', 'fleet/n/prod')).toBe(false);
    expect(mayReportQueued(live(inProd, 'w2', { uid: 'u2' }), o, 'w2', 'fleet/n/prod')).toBe(false);
    expect(mayReportQueued(undefined, o, 'w2', 'fleet/n/prod')).toBe(false);
  });
  it('StepTimer observes the time spent in each zone phase, per object', () => {
    const seen: Array<[string, string, number]> = [];
    const m = {
      zoneStepDuration: (o: { namespace: string; name: string }, s: string, sec: number) => seen.push([`${o.namespace}/${o.name}`, s, sec]),
    } as unknown as ActivityMetrics;
    const t = new StepTimer();
    const o = { namespace: 'n', name: 'x', uid: 'u', generation: 1 };
    const other = { namespace: 'n', name: 'y', uid: 'v', generation: 1 };
    t.observe(o, { zones: [{ name: 'a', phase: 'LeavingReads' }] }, 0, m);
    t.observe(other, { zones: [{ name: 'a', phase: 'LeavingReads' }] }, 0, m);
    t.observe(o, { zones: [{ name: 'a', phase: 'LeavingReads' }] }, 500, m);
    t.observe(o, { zones: [{ name: 'a', phase: 'WaitingForSwitch' }] }, 2000, m);
    t.observe(o, { zones: [{ name: 'a', phase: 'Upgrading' }] }, 5000, m);
    t.observe(other, { zones: [{ name: 'a', phase: 'Upgrading' }] }, 7000, m);
    expect(seen).toEqual([
      ['n/x', 'LeavingReads', 2],
      ['n/x', 'WaitingForSwitch', 3],
      ['n/y', 'LeavingReads', 7],
    ]);
  });
});

describe('take-over', () => {
  const own = { object: { namespace: 'ns', name: 'x', uid: 'abcdef0123', generation: 5 }, ownWorkflowId: 'vmdc/ns/x/g5-abcdef01' };
  it('parses generation and uid prefix from workflow ids', () => {
    expect(parseWorkflowId('vmdc/ns/x/g12-abcdef01')).toEqual({ namespace: 'ns', name: 'x', generation: 12, uidPrefix: 'abcdef01' });
    expect(parseWorkflowId('something-else')).toBeUndefined();
  });
  it('supersedes older generations and other uids, excluding itself', () => {
    expect(
      decideTakeOver(own, [
        { workflowId: 'vmdc/ns/x/g5-abcdef01' },
        { workflowId: 'vmdc/ns/x/g4-abcdef01' },
        { workflowId: 'vmdc/ns/x/g9-99999999' },
        { workflowId: 'custom-id', generation: 3 },
      ]),
    ).toEqual({ stale: false, supersede: ['vmdc/ns/x/g4-abcdef01', 'vmdc/ns/x/g9-99999999', 'custom-id'] });
  });
  it('is stale when the same object has a newer generation running (search attribute or id)', () => {
    expect(decideTakeOver(own, [{ workflowId: 'vmdc/ns/x/g6-abcdef01' }])).toEqual({ stale: true, newer: 'vmdc/ns/x/g6-abcdef01' });
    expect(decideTakeOver(own, [{ workflowId: 'custom', generation: 7 }])).toMatchObject({ stale: true });
  });
  it('builds the visibility query', () => {
    expect(runningWorkflowsQuery({ namespace: 'ns', name: "it's" })).toBe(
      "WorkflowType = 'rolloutWorkflow' AND ExecutionStatus = 'Running' AND VmdcNamespace = 'ns' AND VmdcName = 'it\\'s'",
    );
  });
});

describe('podsFromEndpointSlices', () => {
  const slice = (s: Partial<V1EndpointSlice> & { addressType?: string }): V1EndpointSlice => ({ addressType: 'IPv4', endpoints: [], ...s }) as V1EndpointSlice;
  // Unverified (no evidence): what the test switch verifyPods: false lists; verification is
  // test/unit/activities-vmagent-credentials.test.ts and test/unit/hostile-endpoint-slices.test.ts.
  it('lists pods with the http port; not-ready and port-less endpoints carry a problem', () => {
    const pods = podsFromEndpointSlices(
      [
        slice({
          metadata: { name: 's1' },
          ports: [
            { name: 'metrics', port: 1 },
            { name: 'http', port: 8429 },
          ],
          endpoints: [
            { addresses: ['10.0.0.1'], conditions: { ready: true }, targetRef: { kind: 'Pod', name: 'vmagent-0', uid: 'u0' } },
            { addresses: ['10.0.0.2'], conditions: { ready: false }, targetRef: { kind: 'Pod', name: 'vmagent-1', uid: 'u1' } },
            { addresses: ['10.0.0.3'], targetRef: { kind: 'Pod', name: 'vmagent-2', uid: 'u2' } },
          ],
        }),
        slice({ metadata: { name: 's2' }, ports: [{ name: 'other', port: 1 }], endpoints: [{ addresses: ['10.0.0.9'] }] }),
      ],
      'ns',
    );
    expect(pods).toEqual([
      { name: 'vmagent-0', address: '10.0.0.1', port: 8429, ready: true },
      { name: 'vmagent-1', address: '10.0.0.2', port: 8429, ready: false, problem: 'endpoint not ready' },
      { name: 'vmagent-2', address: '10.0.0.3', port: 8429, ready: true },
      { name: '10.0.0.9', address: '10.0.0.9', port: undefined, ready: true, problem: 'EndpointSlice s2 has no port named http' },
    ]);
    expect(metricsURL(pods[0]!)).toBe('http://10.0.0.1:8429/metrics');
    expect(metricsURL({ name: 'p', address: 'fd00::1', port: 8429, ready: true })).toBe('http://[fd00::1]:8429/metrics');
  });
  it('deduplicates a dual-stack pod, preferring IPv4', () => {
    const ep = (a: string) => ({ addresses: [a], conditions: { ready: true }, targetRef: { kind: 'Pod', name: 'vmagent-0', uid: 'u0' } });
    const pods = podsFromEndpointSlices(
      [
        slice({ addressType: 'IPv6', ports: [{ name: 'http', port: 8429 }], endpoints: [ep('fd00::1')] }),
        slice({ addressType: 'IPv4', ports: [{ name: 'http', port: 8429 }], endpoints: [ep('10.0.0.1')] }),
      ],
      'ns',
    );
    expect(pods).toEqual([{ name: 'vmagent-0', address: '10.0.0.1', port: 8429, ready: true }]);
  });
});

describe('authorizationFromSecretData', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  it('bearer token first, then basic auth, else none', () => {
    expect(authorizationFromSecretData({ token: b64('t0k\n') }, { secretName: 's' })).toBe('Bearer t0k');
    expect(authorizationFromSecretData({ username: b64('u'), password: b64('p') }, { secretName: 's' })).toBe(`Basic ${b64('u:p')}`);
    expect(authorizationFromSecretData({ user: b64('u'), pw: b64('p') }, { secretName: 's', usernameKey: 'user', passwordKey: 'pw' })).toBe(
      `Basic ${b64('u:p')}`,
    );
    expect(authorizationFromSecretData({ other: b64('x') }, { secretName: 's' })).toBeUndefined();
    expect(authorizationFromSecretData(undefined, { secretName: 's' })).toBeUndefined();
  });
});

describe('withRecordedZones: the status reports what the route records say', () => {
  const status = (out: string[], phases: Record<string, string>): VMDistributedClusterStatus => ({
    phase: 'Progressing',
    zonesOutOfRotation: out,
    zones: Object.entries(phases).map(([name, phase]) => ({ name, phase: phase as ZonePhase, ...(out.includes(name) ? { message: `why ${name}` } : {}) })),
  });

  test('a zone released by hand (no record left) is reported back in reads, with a message', () => {
    const s = withRecordedZones(status(['az-b'], { 'az-a': 'Done', 'az-b': 'Failed', 'az-c': 'Pending' }), []);
    expect(s.zonesOutOfRotation).toEqual([]);
    expect(s.zones?.find((z) => z.name === 'az-b')?.message).toBe('back in read rotation: released by hand');
  });

  test('a recorded zone the workflow does not know of is reported out, with a message; rollout order kept', () => {
    const s = withRecordedZones(status([], { 'az-c': 'Pending', 'az-a': 'Done', 'az-b': 'Pending' }), ['az-b', 'az-c']);
    expect(s.zonesOutOfRotation).toEqual(['az-c', 'az-b']);
    expect(s.zones?.find((z) => z.name === 'az-b')?.message).toBe('out of read rotation: recorded on its routes');
  });

  test('the zone announced leaving (phase LeavingReads) is reported before its record exists; a Failed one is not', () => {
    expect(withRecordedZones(status(['az-a'], { 'az-a': 'LeavingReads', 'az-b': 'Pending' }), []).zonesOutOfRotation).toEqual(['az-a']);
    expect(withRecordedZones(status(['az-a'], { 'az-a': 'Failed', 'az-b': 'Pending' }), []).zonesOutOfRotation).toEqual([]);
    expect(withRecordedZones(status(['az-a'], { 'az-a': 'Failed', 'az-b': 'Pending' }), ['az-a']).zones?.[0]?.message).toBe('why az-a');
  });
});
