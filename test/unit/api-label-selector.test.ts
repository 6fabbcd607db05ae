// spec.vmuserSelector (api/label-selector.ts) and what it makes a managed route
// (api/record-verification.ts managesRoute): labels are others' input.
import { managesRoute } from '../../api/record-verification';
import { EQUALITY_SELECTOR_PATTERN, selectorTerms, selects } from '../../api/label-selector';

const SEL = 'vmrollout.io/reads=global,team=obs';

test('the terms of a selector; which labels it selects', () => {
  expect(selectorTerms(SEL)).toEqual([
    ['vmrollout.io/reads', 'global'],
    ['team', 'obs'],
  ]);
  expect(selectorTerms('tier=')).toEqual([['tier', '']]);
  expect(selects(SEL, { 'vmrollout.io/reads': 'global', team: 'obs', other: 'x' })).toBe(true);
  expect(selects(SEL, { 'vmrollout.io/reads': 'global' })).toBe(false);
  expect(selects(SEL, { 'vmrollout.io/reads': 'global', team: 'OBS' })).toBe(false);
  expect(selects('tier=', { tier: '' })).toBe(true);
  expect(selects('tier=', {})).toBe(false);
});

test('hostile labels select nothing they do not carry as their own string properties', () => {
  for (const labels of [undefined, null, 'team=obs', ['team', 'obs'], { team: ['obs'] }, Object.create({ team: 'obs' }), { team: 1 }])
    expect(selects('team=obs', labels)).toBe(false);
  expect(selects('constructor=x', {})).toBe(false);
  expect(selects('toString=x', {})).toBe(false);
});

test('the pattern takes kubectl -l equality selectors only', () => {
  const re = new RegExp(EQUALITY_SELECTOR_PATTERN);
  for (const ok of ['a=b', SEL, 'example.com/x-y_z.w=V-1_2.3', 'tier=']) expect([ok, re.test(ok)]).toEqual([ok, true]);
  for (const bad of [
    'a',
    '=b',
    'a==b',
    'a!=b',
    'env in (a,b)',
    'a=b,',
    ',a=b',
    'a=b c',
    '__proto__=x',
    `a=${'v'.repeat(64)}`,
    `${'k'.repeat(64)}=v`,
    'A.com/x=y',
  ])
    expect([bad, re.test(bad)]).toEqual([bad, false]);
});

test('a managed route: one the spec names, or a VMUser whose labels the selector selects', () => {
  const spec = { zones: [], routes: [{ kind: 'VMAuth' as const, name: 'vm-global' }], vmuserSelector: 'team=obs' };
  expect(managesRoute(spec, { kind: 'VMAuth', name: 'vm-global' }, undefined)).toBe(true);
  expect(managesRoute(spec, { kind: 'VMUser', name: 'dash' }, { team: 'obs' })).toBe(true);
  expect(managesRoute(spec, { kind: 'VMUser', name: 'dash' }, { team: 'dev' })).toBe(false);
  // A VMAuth is never selected by labels; without a selector, only what the spec names.
  expect(managesRoute(spec, { kind: 'VMAuth', name: 'other' }, { team: 'obs' })).toBe(false);
  expect(managesRoute({ ...spec, vmuserSelector: undefined }, { kind: 'VMUser', name: 'dash' }, { team: 'obs' })).toBe(false);
});
