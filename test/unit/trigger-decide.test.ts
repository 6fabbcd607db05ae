import { validateSpec } from '../../api/validate';
import { STRICT_TRUST_POLICY } from '../../api/trust-policy';
import { parseWorkflowId, workflowIdFor } from '../../api/rollout-contract';
import type { VMDistributedClusterStatus } from '../../api/types';
import { mergeConditions } from '../../api/conditions';
import { ROUTE_RECORDS_FINALIZER } from '../../api/constants';
import { specHash } from '../../api/spec-hash';
import { adoptionCandidate, decide, hasFinalizer, type DecideContext, type SpecValidator } from '../../trigger/decide';
import type { VmdcObject } from '../../kube/vmdc-object';
import { validatorFor } from '../../trigger/main';
import { spec, UID, validator } from './trigger-helpers';

/** The object, already carrying the trigger's finalizer (and someone else's). */
function obj(generation: number, s: unknown, status?: VMDistributedClusterStatus): VmdcObject {
  return {
    apiVersion: 'vmrollout.io/v1alpha1',
    kind: 'VMDistributedCluster',
    metadata: { name: 'c1', namespace: 'ns', uid: UID, generation, resourceVersion: '1', finalizers: ['example.com/other', ROUTE_RECORDS_FINALIZER] },
    spec: s,
    status,
  };
}

/** The object without the trigger's finalizer (new, or from before the finalizer existed). */
function bare(generation: number, s: unknown, status?: VMDistributedClusterStatus): VmdcObject {
  const o = obj(generation, s, status);
  return { ...o, metadata: { ...o.metadata, finalizers: ['example.com/other'] } };
}

/** The object being deleted (deletionTimestamp set), with the finalizers given. */
function deleting(generation: number, status: VMDistributedClusterStatus | undefined, finalizers: string[]): VmdcObject {
  const o = obj(generation, spec(), status);
  return { ...o, metadata: { ...o.metadata, deletionTimestamp: new Date('2024-05-01T00:00:00Z'), finalizers } };
}
const og = (generation: number) => ({ namespace: 'ns', name: 'c1', uid: UID, generation });

const id = (g: number) => workflowIdFor({ namespace: 'ns', name: 'c1', uid: UID, generation: g });
const ctx = (over: Partial<DecideContext> = {}): DecideContext => ({ validator, lastPaused: new Map(), ...over });
const hashOf = (s: unknown) => {
  const v = validateSpec(s);
  if (!v.success) throw new Error('invalid');
  return specHash(v.spec);
};

describe('decide', () => {
  it('workflow ids follow the contract', () => {
    expect(id(3)).toBe('vmdc/ns/c1/g3-0123abcd');
    expect(parseWorkflowId(id(3))).toEqual({ namespace: 'ns', name: 'c1', generation: 3, uidPrefix: '0123abcd' });
    expect(parseWorkflowId('something-else')).toBeUndefined();
  });

  it('new object with a valid spec → start its generation with no previous workflows', () => {
    const actions = decide('add', obj(1, spec()), ctx());
    expect(actions).toHaveLength(1);
    const a = actions[0]!;
    expect(a.type).toBe('start');
    if (a.type !== 'start') return;
    expect(a.workflowId).toBe(id(1));
    expect(a.input.object).toEqual({ namespace: 'ns', name: 'c1', uid: UID, generation: 1 });
    expect(a.input.previousWorkflowIds).toEqual([]);
    expect(a.input.spec.clusterVersion).toBe('v1.150.0-cluster');
    expect(a.input.spec.strategy.order).toBe('Shuffle');
    expect(a.specHash).toBe(hashOf(spec()));
  });

  const cases: Array<{ name: string; o: VmdcObject; c?: Partial<DecideContext>; expected: unknown[] }> = [
    {
      name: 'generation already has its workflow, paused unchanged since last sent → nothing',
      o: obj(2, spec(), { observedGeneration: 2, workflow: { id: id(2), runId: 'r' }, phase: 'Progressing' }),
      c: { lastPaused: new Map([[id(2), false]]) },
      expected: [],
    },
    {
      name: 'generation already has its workflow, nothing sent yet (trigger restart), not paused → no gratuitous resume',
      o: obj(2, spec(), { observedGeneration: 2, workflow: { id: id(2), runId: 'r' }, phase: 'Failed' }),
      expected: [],
    },
    {
      name: 'nothing sent yet (trigger restart), paused → pause once',
      o: obj(2, spec({ paused: true }), { observedGeneration: 2, workflow: { id: id(2), runId: 'r' }, phase: 'Progressing' }),
      expected: [{ type: 'signal', workflowId: id(2), signal: 'pause' }],
    },
    {
      name: 'pause already sent to this workflow → nothing (no storm)',
      o: obj(2, spec({ paused: true }), { observedGeneration: 2, workflow: { id: id(2), runId: 'r' }, phase: 'Paused' }),
      c: { lastPaused: new Map([[id(2), true]]) },
      expected: [],
    },
    {
      name: 'nothing sent yet (trigger restart), not paused, but the workflow reports Paused → resume',
      o: obj(2, spec(), { observedGeneration: 2, workflow: { id: id(2), runId: 'r' }, phase: 'Paused' }),
      expected: [{ type: 'signal', workflowId: id(2), signal: 'resume' }],
    },
    {
      name: 'paused true differs from last sent → pause',
      o: obj(2, spec({ paused: true }), { observedGeneration: 2, workflow: { id: id(2), runId: 'r' }, phase: 'Progressing' }),
      c: { lastPaused: new Map([[id(2), false]]) },
      expected: [{ type: 'signal', workflowId: id(2), signal: 'pause' }],
    },
    {
      name: 'paused false after this trigger sent pause → resume',
      o: obj(2, spec({ paused: false }), { observedGeneration: 2, workflow: { id: id(2), runId: 'r' }, phase: 'Progressing' }),
      c: { lastPaused: new Map([[id(2), true]]) },
      expected: [{ type: 'signal', workflowId: id(2), signal: 'resume' }],
    },
    {
      name: 'workflow already ended (Succeeded) → no signals',
      o: obj(2, spec({ paused: true }), { observedGeneration: 2, workflow: { id: id(2), runId: 'r' }, phase: 'Succeeded' }),
      expected: [],
    },
    {
      name: 'already reported Invalid at this generation → nothing',
      o: obj(4, { zones: [] }, { observedGeneration: 4, phase: 'Invalid', workflow: { id: id(2), runId: 'r' } }),
      expected: [],
    },
    {
      name: 'deleted → cancel with the status workflow',
      o: obj(2, spec(), { observedGeneration: 2, workflow: { id: id(2), runId: 'r' } }),
      expected: [{ type: 'cancel', object: { namespace: 'ns', name: 'c1', uid: UID, generation: 2 }, workflowIds: [id(2)] }],
    },
    {
      name: 'being deleted with the finalizer → cancel its workflows, then finalize (both with the status workflow)',
      o: deleting(3, { observedGeneration: 2, workflow: { id: id(2), runId: 'r' }, phase: 'Progressing' }, [ROUTE_RECORDS_FINALIZER, 'example.com/other']),
      expected: [
        { type: 'cancel', object: og(3), workflowIds: [id(2)] },
        { type: 'finalize', object: og(3), workflowIds: [id(2)] },
      ],
    },
    {
      name: 'being deleted, paused, at a generation never handled → no start, no signal, no adoption: cancel + finalize',
      o: {
        ...deleting(4, { observedGeneration: 2, workflow: { id: id(2), runId: 'r' }, phase: 'Paused' }, [ROUTE_RECORDS_FINALIZER]),
        spec: spec({ paused: true, clusterVersion: 'v9' }),
      },
      c: { lastPaused: new Map([[id(2), false]]), previousSpecHash: null },
      expected: [
        { type: 'cancel', object: og(4), workflowIds: [id(2)] },
        { type: 'finalize', object: og(4), workflowIds: [id(2)] },
      ],
    },
    {
      name: 'being deleted without the finalizer (another one holds it) → cancel only, never ensureFinalizer',
      o: deleting(3, { observedGeneration: 3, workflow: { id: id(3), runId: 'r' } }, ['example.com/other']),
      expected: [{ type: 'cancel', object: og(3), workflowIds: [id(3)] }],
    },
    {
      name: 'being deleted, never rolled out (no status) → cancel by visibility only, then finalize',
      o: deleting(1, undefined, [ROUTE_RECORDS_FINALIZER]),
      expected: [
        { type: 'cancel', object: og(1), workflowIds: [] },
        { type: 'finalize', object: og(1), workflowIds: [] },
      ],
    },
    {
      name: 'handled generation with its workflow but no finalizer (object from before the finalizer) → ensureFinalizer',
      o: bare(2, spec(), { observedGeneration: 2, workflow: { id: id(2), runId: 'r' }, phase: 'Progressing' }),
      c: { lastPaused: new Map([[id(2), false]]) },
      expected: [{ type: 'ensureFinalizer', object: og(2) }],
    },
    {
      name: 'no finalizer, workflow ended (a zone may have stayed out) → ensureFinalizer, no signal',
      o: bare(2, spec({ paused: true }), { observedGeneration: 2, workflow: { id: id(2), runId: 'r' }, phase: 'Cancelled' }),
      expected: [{ type: 'ensureFinalizer', object: og(2) }],
    },
    {
      name: 'no finalizer, paused not yet sent → ensureFinalizer first, then pause',
      o: bare(2, spec({ paused: true }), { observedGeneration: 2, workflow: { id: id(2), runId: 'r' }, phase: 'Progressing' }),
      expected: [
        { type: 'ensureFinalizer', object: og(2) },
        { type: 'signal', workflowId: id(2), signal: 'pause' },
      ],
    },
    {
      name: 'reported Invalid, never rolled out, no finalizer → nothing (no workflow, nothing to hold)',
      o: bare(1, { zones: [] }, { observedGeneration: 1, phase: 'Invalid' }),
      expected: [],
    },
    {
      name: 'incomplete metadata → nothing',
      o: { metadata: { name: 'x' }, spec: spec() },
      expected: [],
    },
  ];

  it.each(cases)('$name', ({ name, o, c, expected }) => {
    const type = name.startsWith('deleted') ? 'delete' : 'update';
    expect(decide(type, o, ctx(c))).toEqual(expected);
  });

  it('hasFinalizer looks for exactly the trigger finalizer', () => {
    expect(ROUTE_RECORDS_FINALIZER).toBe('vmrollout.io/route-records');
    expect(hasFinalizer(obj(1, spec()))).toBe(true);
    expect(hasFinalizer(bare(1, spec()))).toBe(false);
    expect(hasFinalizer({ metadata: { name: 'x' } })).toBe(false);
  });

  it('new object without the finalizer → ensureFinalizer before start', () => {
    const actions = decide('add', bare(1, spec()), ctx());
    expect(actions.map((a) => a.type)).toEqual(['ensureFinalizer', 'start']);
    expect(actions[0]).toEqual({ type: 'ensureFinalizer', object: og(1) });
    expect(actions[1]).toMatchObject({ type: 'start', workflowId: id(1) });
  });

  it('new generation without the finalizer → ensureFinalizer, start, supersede (and pause) in that order', () => {
    const o = bare(3, spec({ paused: true, clusterVersion: 'v1.151.0-cluster' }), {
      observedGeneration: 2,
      workflow: { id: id(2), runId: 'r2' },
      phase: 'Progressing',
    });
    const actions = decide('update', o, ctx({ previousSpecHash: hashOf(spec()) }));
    expect(actions.map((a) => a.type)).toEqual(['ensureFinalizer', 'start', 'supersede', 'signal']);
  });

  it('paused-only generation without the finalizer → ensureFinalizer before adopt', () => {
    const o = bare(3, spec({ paused: true }), { observedGeneration: 2, workflow: { id: id(2), runId: 'r2' }, phase: 'Progressing' });
    const actions = decide('update', o, ctx({ previousSpecHash: hashOf(spec()), lastPaused: new Map([[id(2), false]]) }));
    expect(actions.map((a) => a.type)).toEqual(['ensureFinalizer', 'adopt', 'signal']);
  });

  it('invalid new generation superseding a workflow, without the finalizer → ensureFinalizer first (the old workflow may leave a zone out)', () => {
    const o = bare(3, spec({ zones: [{ name: 'az-a', vmcluster: { name: 'vm-az-a' } }] }), {
      observedGeneration: 2,
      workflow: { id: id(2), runId: 'r2' },
      phase: 'Failed',
    });
    expect(decide('update', o, ctx()).map((a) => a.type)).toEqual(['ensureFinalizer', 'reportInvalid', 'supersede']);
    // An invalid new object never had a workflow: no finalizer needed.
    expect(decide('add', bare(1, { clusterVersion: 'x' }), ctx()).map((a) => a.type)).toEqual(['reportInvalid']);
  });

  it('delete event (gone) → cancel only, whatever the finalizers', () => {
    for (const o of [obj(2, spec(), { workflow: { id: id(2), runId: 'r' } }), bare(2, spec(), { workflow: { id: id(2), runId: 'r' } })]) {
      expect(decide('delete', o, ctx())).toEqual([{ type: 'cancel', object: og(2), workflowIds: [id(2)] }]);
    }
  });

  it('new generation with a changed spec → start it with the previous workflow, then supersede the previous one', () => {
    const o = obj(3, spec({ clusterVersion: 'v1.151.0-cluster' }), { observedGeneration: 2, workflow: { id: id(2), runId: 'r2' }, phase: 'Progressing' });
    expect(adoptionCandidate(o)).toBe(id(2));
    const actions = decide('update', o, ctx({ previousSpecHash: hashOf(spec()) }));
    expect(actions.map((a) => a.type)).toEqual(['start', 'supersede']);
    const [start, sup] = actions;
    if (start?.type !== 'start' || sup?.type !== 'supersede') throw new Error('shape');
    expect(start.workflowId).toBe(id(3));
    expect(start.input.previousWorkflowIds).toEqual([id(2)]);
    expect(sup).toEqual({ type: 'supersede', workflowId: id(2), generation: 3 });
  });

  it('new generation whose previous workflow is unknown to Temporal → a new workflow, started paused, also signalled pause once', () => {
    const o = obj(3, spec({ paused: true }), { observedGeneration: 2, workflow: { id: id(2), runId: 'r2' } });
    const actions = decide('update', o, ctx({ previousSpecHash: null }));
    expect(actions.map((a) => a.type)).toEqual(['start', 'supersede', 'signal']);
    expect(actions[0]).toMatchObject({ type: 'start', workflowId: id(3), input: { spec: { paused: true }, previousWorkflowIds: [id(2)] } });
    expect(actions[2]).toEqual({ type: 'signal', workflowId: id(3), signal: 'pause' });
  });

  it('new generation that toggles paused AND changes the spec → a new workflow (supersede), not adoption', () => {
    const o = obj(3, spec({ paused: true, clusterVersion: 'v1.151.0-cluster' }), {
      observedGeneration: 2,
      workflow: { id: id(2), runId: 'r2' },
      phase: 'Progressing',
    });
    const actions = decide('update', o, ctx({ previousSpecHash: hashOf(spec()), lastPaused: new Map([[id(2), false]]) }));
    expect(actions.map((a) => a.type)).toEqual(['start', 'supersede', 'signal']);
    expect(actions[2]).toEqual({ type: 'signal', workflowId: id(3), signal: 'pause' });
  });

  it('new generation that only toggles paused → adopt the running workflow and forward pause', () => {
    const o = obj(3, spec({ paused: true }), { observedGeneration: 2, workflow: { id: id(2), runId: 'r2' }, phase: 'Progressing' });
    const actions = decide('update', o, ctx({ previousSpecHash: hashOf(spec()), lastPaused: new Map([[id(2), false]]) }));
    expect(actions).toEqual([
      { type: 'adopt', object: { namespace: 'ns', name: 'c1', uid: UID, generation: 3 }, workflow: { id: id(2), runId: 'r2' } },
      { type: 'signal', workflowId: id(2), signal: 'pause' },
    ]);
  });

  it('new generation that only unpauses → adopt, and resume the workflow this trigger paused', () => {
    const o = obj(4, spec({ paused: false }), { observedGeneration: 3, workflow: { id: id(2), runId: 'r2' }, phase: 'Paused' });
    expect(adoptionCandidate(o)).toBe(id(2));
    expect(decide('update', o, ctx({ previousSpecHash: hashOf(spec()), lastPaused: new Map([[id(2), true]]) }))).toEqual([
      { type: 'adopt', object: { namespace: 'ns', name: 'c1', uid: UID, generation: 4 }, workflow: { id: id(2), runId: 'r2' } },
      { type: 'signal', workflowId: id(2), signal: 'resume' },
    ]);
  });

  it('paused-only change after the workflow Succeeded → adopt (record observedGeneration), no new rollout, no signal', () => {
    for (const paused of [true, false]) {
      const o = obj(3, spec({ paused }), { observedGeneration: 2, workflow: { id: id(2), runId: 'r2' }, phase: 'Succeeded' });
      expect(decide('update', o, ctx({ previousSpecHash: hashOf(spec()) }))).toEqual([
        { type: 'adopt', object: { namespace: 'ns', name: 'c1', uid: UID, generation: 3 }, workflow: { id: id(2), runId: 'r2' } },
      ]);
    }
  });

  it('adoption keeps forwarding paused to the adopted workflow afterwards', () => {
    const o = obj(4, spec({ paused: false }), { observedGeneration: 4, workflow: { id: id(2), runId: 'r2' }, phase: 'Paused' });
    expect(adoptionCandidate(o)).toBeUndefined();
    expect(decide('update', o, ctx({ lastPaused: new Map([[id(2), true]]) }))).toEqual([{ type: 'signal', workflowId: id(2), signal: 'resume' }]);
  });

  it('specHash ignores paused and defaults, not real changes', () => {
    expect(hashOf(spec({ paused: true }))).toBe(hashOf(spec()));
    expect(hashOf(spec({ strategy: { order: 'Shuffle' } }))).toBe(hashOf(spec()));
    expect(hashOf(spec({ strategy: { order: 'Declared' } }))).not.toBe(hashOf(spec()));
  });

  it('an Invalid previous generation is never adopted, even with an equal spec', () => {
    const o = obj(5, spec(), { observedGeneration: 4, workflow: { id: id(2), runId: 'r2' }, phase: 'Invalid' });
    expect(adoptionCandidate(o)).toBeUndefined();
    expect(decide('update', o, ctx()).map((a) => a.type)).toEqual(['start', 'supersede']);
  });

  it('status already names this generation (observedGeneration lost) → start again, idempotently, with no previous ids', () => {
    const o = obj(3, spec(), { observedGeneration: 2, workflow: { id: id(3), runId: 'r3' } });
    expect(adoptionCandidate(o)).toBeUndefined();
    const actions = decide('update', o, ctx());
    expect(actions).toHaveLength(1);
    expect(actions[0]).toMatchObject({ type: 'start', workflowId: id(3), input: { previousWorkflowIds: [] } });
  });

  it('invalid spec at a new generation → reportInvalid with field paths; supersede the running workflow; never start', () => {
    const bad = spec({ zones: [{ name: 'az-a', vmcluster: { name: 'vm-az-a' } }] });
    const o = obj(3, bad, { observedGeneration: 2, workflow: { id: id(2), runId: 'r2' }, phase: 'Progressing' });
    const actions = decide('update', o, ctx());
    expect(actions.map((a) => a.type)).toEqual(['reportInvalid', 'supersede']);
    const r = actions[0];
    if (r?.type !== 'reportInvalid') throw new Error('shape');
    expect(r.supersededWorkflowId).toBe(id(2)); // removed from status.workflow: it may no longer write
    expect(r.message).toContain('spec.zones');
    expect(r.issues.length).toBeGreaterThan(0);
  });

  it('a full spec in a namespace the trust policy does not enable → reportInvalid naming the field and the chart value; enabled → start', () => {
    const full = spec({ vmagent: { name: 'vm-global', spec: { remoteWrite: [{ url: 'http://x:8480/insert/0/prometheus/api/v1/write' }] } } });
    const strict = ctx({ validator: validatorFor({ ...STRICT_TRUST_POLICY, createNamespaces: ['other'] }) });
    const refused = decide('add', obj(1, full), strict);
    expect(refused).toEqual([expect.objectContaining({ type: 'reportInvalid', message: expect.stringMatching(/spec\.vmagent\.spec: .*createNamespaces/) })]);
    const allowed = decide('add', obj(1, full), ctx({ validator: validatorFor({ ...STRICT_TRUST_POLICY, createNamespaces: ['ns'] }) }));
    expect(allowed.map((a) => a.type)).toEqual(['start']);
  });

  it('invalid spec on a new object → reportInvalid only', () => {
    const actions = decide('add', obj(1, { clusterVersion: 'x' }), ctx());
    expect(actions.map((a) => a.type)).toEqual(['reportInvalid']);
    expect(actions[0]).toMatchObject({ supersededWorkflowId: undefined });
  });

  it('a validator that throws is not hidden: decide propagates', () => {
    const boom: SpecValidator = {
      validate: () => {
        throw new Error('boom');
      },
      format: () => '',
    };
    expect(() => decide('add', obj(1, spec()), ctx({ validator: boom }))).toThrow('boom');
  });
});

describe("the trigger's Valid condition (mergeConditions, stable order)", () => {
  const t0 = new Date('2024-01-01T00:00:00Z');
  const t1 = new Date('2024-01-02T00:00:00Z');
  it('adds, keeps lastTransitionTime while the status holds, changes it on a transition', () => {
    const a = mergeConditions(undefined, [{ type: 'Valid', status: 'False', reason: 'InvalidSpec', message: 'm1' }], { now: t0.toISOString() });
    expect(a).toEqual([{ type: 'Valid', status: 'False', reason: 'InvalidSpec', message: 'm1', lastTransitionTime: t0.toISOString() }]);
    const b = mergeConditions(
      [...a, { type: 'Ready', status: 'True', reason: 'R', message: '', lastTransitionTime: t0.toISOString() }],
      [{ type: 'Valid', status: 'False', reason: 'InvalidSpec', message: 'm2' }],
      { now: t1.toISOString() },
    );
    expect(b[0]).toMatchObject({ message: 'm2', lastTransitionTime: t0.toISOString() });
    expect(b[1]?.type).toBe('Ready');
    const c = mergeConditions(b, [{ type: 'Valid', status: 'True', reason: 'ValidSpec', message: '' }], { now: t1.toISOString() });
    expect(c[0]).toMatchObject({ status: 'True', lastTransitionTime: t1.toISOString() });
  });
});

describe('decide: no pause storm on relist', () => {
  // A relist forgets what was sent (Reconciler.forgetSignals): only the status tells whether the
  // pause landed. The workflow writes phase Paused (naming itself in status.workflow) only once it
  // has received `pause` and stopped at a safe point.
  const relisted = ctx(); // nothing remembered
  const pausedStatus = (phase: VMDistributedClusterStatus['phase'], workflowId = id(2)): VMDistributedClusterStatus => ({
    observedGeneration: 2,
    workflow: { id: workflowId, runId: 'r' },
    phase,
  });

  it('paused, and the status shows this workflow Paused → no signal', () => {
    expect(decide('update', obj(2, spec({ paused: true }), pausedStatus('Paused')), relisted)).toEqual([]);
  });

  it('paused, but the pause has not landed yet (phase still Progressing or Pending) → pause is sent', () => {
    for (const phase of ['Progressing', 'Pending', 'Failed'] as const) {
      expect(decide('update', obj(2, spec({ paused: true }), pausedStatus(phase)), relisted)).toEqual([{ type: 'signal', workflowId: id(2), signal: 'pause' }]);
    }
  });

  it('this trigger sent resume last, the status still shows Paused (the resume not written yet), paused again → pause is sent', () => {
    const actions = decide('update', obj(2, spec({ paused: true }), pausedStatus('Paused')), ctx({ lastPaused: new Map([[id(2), false]]) }));
    expect(actions).toEqual([{ type: 'signal', workflowId: id(2), signal: 'pause' }]);
  });

  it('a new paused generation gets its own workflow: Paused of the previous workflow does not count, the new one is paused', () => {
    const o = obj(3, spec({ paused: true, clusterVersion: 'v1.151.0-cluster' }), pausedStatus('Paused'));
    const actions = decide('update', o, ctx({ previousSpecHash: hashOf(spec({ paused: true })) }));
    expect(actions.map((a) => a.type)).toEqual(['start', 'supersede', 'signal']);
    expect(actions[2]).toEqual({ type: 'signal', workflowId: id(3), signal: 'pause' });
  });

  it('a paused-only generation adopted by a workflow that shows Paused → adopt, no signal', () => {
    const o = obj(3, spec({ paused: true }), pausedStatus('Paused'));
    const actions = decide('update', o, ctx({ previousSpecHash: hashOf(spec()) }));
    expect(actions).toEqual([{ type: 'adopt', object: og(3), workflow: { id: id(2), runId: 'r' } }]);
  });

  it('5,000 objects, 500 paused and showing Paused: a relist sends no pause; 50 whose pause has not landed get one each', () => {
    let signals = 0;
    for (let i = 0; i < 5000; i++) {
      const paused = i % 10 === 0;
      const landed = i % 100 !== 0;
      const o = obj(2, spec({ paused }), pausedStatus(paused && landed ? 'Paused' : 'Progressing'));
      signals += decide('update', o, relisted).filter((a) => a.type === 'signal').length;
    }
    expect(signals).toBe(50);
  });
});
