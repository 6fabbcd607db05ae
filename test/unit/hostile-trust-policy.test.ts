// Issue 29's "Trust policy covers every way an object can route or run": each hostile full spec or
// overlay of test/fixtures/hostile/trust-policy.ts is refused at exactly its fields, naming the chart
// value that would allow it, by the trigger's validator, the worker's input check and its write guard; the
// policy change the case names lets it through (the negative control: the same check with the
// protection switched off), and legitimate bodies pass.
import { decideWrite } from '../../activities/guard/write-binding';
import { decideInput } from '../../activities/start/verify-input';
import { workflowIdFor } from '../../api/rollout-contract';
import { CHART_VALUE, STRICT_TRUST_POLICY, trustIssues, type TrustPolicy } from '../../api/trust-policy';
import type { JsonObject } from '../../api/types';
import { validatorFor } from '../../trigger/main';
import { specApplies } from '../../workflows/managed-objects';
import { NAMESPACE, TRUST_POLICY_CASES, type TrustPolicyCase } from '../fixtures/hostile/trust-policy';
import { normalizedSpec } from './api-helpers';

/** As the e2e beds configure the chart: full specs may create objects in the namespace, nothing else. */
const BASE: TrustPolicy = { ...STRICT_TRUST_POLICY, createNamespaces: [NAMESPACE] };
/** Every chart value at its most permissive that a list can be. */
const PERMISSIVE: TrustPolicy = {
  ...BASE,
  crossNamespaceTargetRefs: true,
  routeHosts: ['*.com', '*.example', '10.0.0.5', '[::1]', '*.io'],
  remoteWriteHosts: ['*.com', '*.example', '*.io'],
  imageRepositories: ['evil.io/*', 'ghcr.io/*'],
  serviceAccountNames: ['admin'],
  hostAccess: true,
  extraContainers: true,
  crossNamespaceSelectors: true,
  otherDestinations: true,
};

/** A VMDistributedCluster spec with the case's body at its place (zone az-b's objects, or the shared ones). */
function specWith(c: TrustPolicyCase): Record<string, unknown> {
  const zone = (name: string, extra: JsonObject = {}) => ({ name, vmcluster: { name: `vm-${name}` }, vmuser: { name: `reads-${name}` }, ...extra });
  const raw: Record<string, unknown> = {
    clusterVersion: 'v1.150.0-cluster',
    zones: [zone('az-a'), zone('az-b')],
    vmauth: { name: 'vm-global' },
    vmagent: { name: 'vm-global' },
  };
  const body = { [c.form]: c.body };
  const zoneB = (raw.zones as Array<Record<string, JsonObject>>)[1]!;
  if (c.place === 'global') raw.overrideSpec = c.body;
  else if (c.place === 'vmcluster' || c.place === 'vmuser') zoneB[c.place] = { name: zoneB[c.place]!.name!, ...body };
  else raw[c.place] = { name: 'vm-global', ...body };
  return raw;
}

const issuesOf = (c: TrustPolicyCase, policy: TrustPolicy) => trustIssues(NAMESPACE, normalizedSpec(specWith(c)), policy);

describe.each(TRUST_POLICY_CASES.map((c) => [c.id, c] as const))('%s', (_id, c) => {
  it(c.deniedAt.length ? 'is denied at exactly its fields, naming the chart value that allows it' : 'is allowed under the default policy', () => {
    const issues = issuesOf(c, BASE);
    expect(issues.map((i) => i.path)).toEqual(c.deniedAt);
    const values = Object.keys(c.allowedBy ?? PERMISSIVE).map((k) => CHART_VALUE[k as keyof TrustPolicy]);
    for (const i of issues) expect(values.some((v) => i.message.includes(`chart value ${v})`))).toBe(true);
    for (const i of issues) expect(i.message).not.toContain('hunter2');
  });

  if (c.allowedBy) {
    const allowedBy = c.allowedBy;
    it(`is allowed once the policy allows it (${Object.keys(allowedBy).join(', ') || 'nothing needed'})`, () => {
      expect(issuesOf(c, { ...BASE, ...allowedBy })).toEqual([]);
    });
  } else {
    it('is denied under every policy: vmrollout cannot read it as the operator will', () => {
      expect(issuesOf(c, PERMISSIVE).map((i) => i.path)).toEqual(c.deniedAt);
    });
  }

  if (c.notAllowedBy) {
    const other = c.notAllowedBy;
    it(`is not allowed by ${Object.keys(other).join(', ')}`, () => {
      expect(issuesOf(c, { ...BASE, ...other }).map((i) => i.path)).toEqual(c.deniedAt);
    });
  }
});

describe('both processes enforce it', () => {
  const hostile = TRUST_POLICY_CASES.filter((c) => c.deniedAt.length > 0);

  it.each(hostile.map((c) => [c.id, c] as const))('%s: the trigger marks it Invalid naming the field', (_id, c) => {
    const v = validatorFor(BASE).validate(specWith(c), NAMESPACE);
    expect(v.success).toBe(false);
    if (!v.success) expect(v.issues.map((i) => i.path)).toEqual(c.deniedAt);
    expect(validatorFor({ ...PERMISSIVE, ...(c.allowedBy ?? {}) }).validate(specWith(c), NAMESPACE).success).toBe(c.allowedBy !== null);
  });

  it.each(hostile.map((c) => [c.id, c] as const))('%s: the worker refuses the workflow input before reading anything', (_id, c) => {
    const object = { namespace: NAMESPACE, name: 'vm-global', uid: 'u1', generation: 1 };
    const input = { object, spec: normalizedSpec(specWith(c)), previousWorkflowIds: [] };
    const verdict = decideInput(input, workflowIdFor(object), undefined, BASE);
    expect(verdict).toEqual({ verdict: 'refused', message: expect.stringContaining(c.deniedAt[0]!) });
  });

  it.each(hostile.map((c) => [c.id, c] as const))('%s: the write guard refuses the writes of a run whose object asks for it', (_id, c) => {
    const object = { namespace: NAMESPACE, name: 'vm-global', uid: 'u1', generation: 1 };
    const live = {
      metadata: { uid: object.uid, generation: object.generation },
      spec: specWith(c),
      status: { workflow: { id: workflowIdFor(object), runId: 'r' } },
    };
    const write = { kind: 'apply' as const, input: specApplies(object, normalizedSpec(specWith(c)))[0]! };
    expect(decideWrite(write, workflowIdFor(object), live, BASE)).toEqual({ allowed: false, message: expect.stringContaining(c.deniedAt[0]!) });
    if (c.allowedBy) expect(decideWrite(write, workflowIdFor(object), live, { ...BASE, ...c.allowedBy })).toEqual({ allowed: true });
  });
});
