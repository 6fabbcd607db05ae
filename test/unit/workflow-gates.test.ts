// Where gates hold (workflows/gates.ts gatesBefore) and how a spec with gates normalizes: a spec
// without gates normalizes, and hashes, as before gates existed (a rollout in flight is not a new one).
import { specHash } from '../../api/spec-hash';
import { validateSpec } from '../../api/validate';
import { GATES, type Gate, type NormalizedSpec } from '../../api/types';
import { gatesBefore } from '../../workflows/gates';
import { validRawSpec } from './api-helpers';

test.each<[Gate[] | undefined, number, Gate[]]>([
  [undefined, 0, []],
  [[], 0, []],
  [['BeforeFirstZone'], 0, ['BeforeFirstZone']],
  [['BeforeFirstZone'], 1, []],
  [['AfterFirstZone'], 0, []],
  [['AfterFirstZone'], 1, ['AfterFirstZone']],
  [['AfterFirstZone'], 2, []],
  [['BeforeEachZone'], 0, ['BeforeEachZone']],
  [['BeforeEachZone'], 5, ['BeforeEachZone']],
  [[...GATES], 0, ['BeforeFirstZone', 'BeforeEachZone']],
  [[...GATES], 1, ['AfterFirstZone', 'BeforeEachZone']],
  [[...GATES], 2, ['BeforeEachZone']],
])('gates %j after %i upgraded zones: %j hold', (gates, upgraded, expected) => {
  expect(gatesBefore(gates, upgraded)).toEqual(expected);
});

const normalized = (gates?: unknown): NormalizedSpec => {
  const raw = validRawSpec() as { strategy?: Record<string, unknown> };
  if (gates !== undefined) raw.strategy = { ...raw.strategy, gates };
  const r = validateSpec(raw);
  if (!r.success) throw new Error(JSON.stringify(r.issues));
  return r.spec;
};

test('no gates, or an empty list, normalize without the field (the spec hash of every earlier spec is unchanged)', () => {
  expect('gates' in normalized().strategy).toBe(false);
  expect('gates' in normalized([]).strategy).toBe(false);
  expect(specHash(normalized([]))).toBe(specHash(normalized()));
  expect(normalized(['AfterFirstZone', 'BeforeFirstZone']).strategy.gates).toEqual(['AfterFirstZone', 'BeforeFirstZone']);
  expect(specHash(normalized(['AfterFirstZone']))).not.toBe(specHash(normalized()));
});
