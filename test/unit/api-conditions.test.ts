import { mergeConditions } from '../../api/conditions';
import type { Condition } from '../../api/types';

const cond = (type: Condition['type'], status: Condition['status'], lastTransitionTime: string, extra: Partial<Condition> = {}): Condition => ({
  type,
  status,
  reason: `${type}${status}`,
  message: '',
  lastTransitionTime,
  ...extra,
});

describe('mergeConditions', () => {
  it('keeps lastTransitionTime while the status holds, takes now on a transition or for a new type', () => {
    const prev = [cond('Ready', 'False', 't0'), cond('Progressing', 'True', 't0')];
    const out = mergeConditions(
      prev,
      [
        { type: 'Ready', status: 'False', reason: 'Progressing', message: 'still' },
        { type: 'Progressing', status: 'False', reason: 'Succeeded', message: '' },
        { type: 'Paused', status: 'False', reason: 'NotPaused', message: '' },
      ],
      { now: 't1' },
    );
    expect(out.map((c) => [c.type, c.lastTransitionTime])).toEqual([
      ['Ready', 't0'],
      ['Progressing', 't1'],
      ['Paused', 't1'],
    ]);
    expect(out[0]).toMatchObject({ reason: 'Progressing', message: 'still' });
  });

  it('an old condition without a time does not lend one: now is taken', () => {
    const prev = [{ ...cond('Valid', 'True', ''), lastTransitionTime: '' }];
    expect(mergeConditions(prev, [{ type: 'Valid', status: 'True', reason: 'ValidSpec', message: '' }], { now: 't1' })[0]?.lastTransitionTime).toBe('t1');
  });

  it('keeps conditions of other types, unchanged, as copies', () => {
    const valid = cond('Valid', 'True', 't0', { observedGeneration: 1 });
    const out = mergeConditions([valid], [{ type: 'Ready', status: 'True', reason: 'Succeeded', message: '' }], { now: 't1', observedGeneration: 3 });
    expect(out).toEqual([valid, { type: 'Ready', status: 'True', reason: 'Succeeded', message: '', lastTransitionTime: 't1', observedGeneration: 3 }]);
    expect(out[0]).not.toBe(valid);
  });

  it('observedGeneration from the options overrides the update; without it the update keeps its own', () => {
    const u = { type: 'Valid' as const, status: 'False' as const, reason: 'InvalidSpec', message: 'm', observedGeneration: 2 };
    expect(mergeConditions([], [u], { now: 't' })[0]?.observedGeneration).toBe(2);
    expect(mergeConditions([], [u], { now: 't', observedGeneration: 5 })[0]?.observedGeneration).toBe(5);
  });

  it("stable order (the trigger's and the activity's): existing types keep their place, new ones are appended", () => {
    const prev = [cond('Valid', 'True', 't0'), cond('Ready', 'False', 't0')];
    const out = mergeConditions(
      prev,
      [
        { type: 'Paused', status: 'False', reason: 'NotPaused', message: '' },
        { type: 'Ready', status: 'True', reason: 'Succeeded', message: '' },
      ],
      { now: 't1' },
    );
    expect(out.map((c) => c.type)).toEqual(['Valid', 'Ready', 'Paused']);
  });

  it("canonical order (the workflow's): Ready, Progressing, Paused, Valid", () => {
    const prev = [cond('Valid', 'True', 't0'), cond('Paused', 'False', 't0')];
    const out = mergeConditions(
      prev,
      [
        { type: 'Progressing', status: 'True', reason: 'Progressing', message: '' },
        { type: 'Ready', status: 'False', reason: 'Progressing', message: '' },
      ],
      { now: 't1', order: 'canonical' },
    );
    expect(out.map((c) => c.type)).toEqual(['Ready', 'Progressing', 'Paused', 'Valid']);
  });

  it('conditions that carry their lastTransitionTime are written as is (no now needed)', () => {
    // The activity writes the workflow's conditions: their times were computed by the workflow.
    const current = [cond('Valid', 'True', 't0'), cond('Ready', 'False', 't0')];
    const mine = [cond('Ready', 'False', 't5', { message: 'mine' })];
    expect(mergeConditions(current, mine)).toEqual([current[0], mine[0]]);
  });

  it('one condition per updated type', () => {
    const prev = [cond('Ready', 'False', 't0'), cond('Valid', 'True', 't0'), cond('Ready', 'False', 't0')];
    const out = mergeConditions(prev, [{ type: 'Ready', status: 'False', reason: 'R', message: '' }], { now: 't1' });
    expect(out.map((c) => [c.type, c.lastTransitionTime])).toEqual([
      ['Ready', 't0'],
      ['Valid', 't0'],
    ]);
  });

  it('an update without a time and no now is a programming error', () => {
    const untimed = [{ type: 'Ready', status: 'True', reason: 'R', message: '' }] as unknown as Condition[];
    expect(() => mergeConditions([], untimed)).toThrow(/no lastTransitionTime/);
  });
});
