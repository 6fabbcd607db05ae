// decideInput: a workflow's input checked against the object it names (activities/start/verify-input.ts).
import { workflowIdFor } from '../../api/rollout-contract';
import { STRICT_TRUST_POLICY, type TrustPolicy } from '../../api/trust-policy';
import type { NormalizedSpec, ObjectGeneration } from '../../api/types';
import { decideInput, type LiveObject } from '../../activities/start/verify-input';
import { normalizedSpec, validRawSpec } from './api-helpers';

const POLICY: TrustPolicy = { ...STRICT_TRUST_POLICY, createNamespaces: ['monitoring'] };
const OBJ: ObjectGeneration = { namespace: 'monitoring', name: 'metrics', uid: 'aaaaaaaa-1111', generation: 3 };

const live = (over: { uid?: string; generation?: number; spec?: Record<string, unknown> } = {}): LiveObject => ({
  metadata: { uid: over.uid ?? OBJ.uid, generation: over.generation ?? OBJ.generation },
  spec: over.spec ?? validRawSpec(),
});
const input = (over: Partial<{ object: ObjectGeneration; spec: NormalizedSpec; previousWorkflowIds: string[] }> = {}) => ({
  object: OBJ,
  spec: normalizedSpec(validRawSpec()),
  previousWorkflowIds: [],
  ...over,
});
const decide = (i = input(), l: LiveObject | undefined = live(), id = workflowIdFor(i.object), policy = POLICY) => decideInput(i, id, l, policy);

test('the input the trigger would give: ok (paused differing too: pausing is not another rollout)', () => {
  expect(decide()).toEqual({ verdict: 'ok' });
  expect(decide(input({ spec: { ...normalizedSpec(validRawSpec()), paused: true } }))).toEqual({ verdict: 'ok' });
  // a later generation that only paused: still this rollout
  expect(decide(input(), live({ generation: 4, spec: { ...validRawSpec(), paused: true } }))).toEqual({ verdict: 'ok' });
});

test('another spec than the object has at that generation: refused', () => {
  const forged = validRawSpec();
  forged.clusterVersion = 'v0.0.1-evil';
  const v = decide(input({ spec: normalizedSpec(forged) }));
  expect(v).toEqual({ verdict: 'refused', message: expect.stringContaining('spec differs') });
});

test('another object: other namespace, other uid, missing, or a generation from the future: refused', () => {
  expect(decide(input({ object: { ...OBJ, namespace: 'kube-system' } }), live()).verdict).toBe('refused');
  expect(decide(input(), live({ uid: 'bbbbbbbb' }))).toEqual({ verdict: 'refused', message: expect.stringContaining('has uid bbbbbbbb') });
  expect(decideInput(input(), workflowIdFor(OBJ), undefined, POLICY)).toEqual({ verdict: 'refused', message: expect.stringContaining('does not exist') });
  expect(decide(input(), live({ generation: 2 }))).toEqual({ verdict: 'refused', message: expect.stringContaining('at generation 2') });
});

test('a workflow id other than the one the trigger gives that generation: refused', () => {
  expect(decide(input(), live(), 'my-own-id')).toEqual({ verdict: 'refused', message: expect.stringContaining('"my-own-id"') });
});

test('previous workflow ids of other objects (they would be superseded): refused', () => {
  const other = workflowIdFor({ ...OBJ, name: 'someone-else' });
  expect(decide(input({ previousWorkflowIds: [other] })).verdict).toBe('refused');
  expect(decide(input({ previousWorkflowIds: ['free-form'] })).verdict).toBe('refused');
  expect(decide(input({ previousWorkflowIds: [workflowIdFor({ ...OBJ, generation: 2 })] }))).toEqual({ verdict: 'ok' });
});

test('what the trust policy forbids: refused even when the object asks for it', () => {
  const v = decide(input(), live(), workflowIdFor(OBJ), STRICT_TRUST_POLICY);
  expect(v).toEqual({ verdict: 'refused', message: expect.stringContaining('createNamespaces') });
});

test('an older generation whose rollout the object no longer asks for: stale, not refused', () => {
  const newer = validRawSpec();
  newer.clusterVersion = 'v1.151.0-cluster';
  expect(decide(input(), live({ generation: 5, spec: newer }))).toEqual({ verdict: 'stale', generation: 5, message: expect.stringContaining('generation 5') });
});
