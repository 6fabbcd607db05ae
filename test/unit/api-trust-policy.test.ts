// The trust policy: what a VMDistributedCluster may make vmrollout do in its namespace.
import { STRICT_TRUST_POLICY, trustIssues, validateUnderPolicy, type TrustPolicy } from '../../api/trust-policy';
import { normalizedSpec, validRawSpec } from './api-helpers';

const NS = 'monitoring';
const CREATE: TrustPolicy = { createNamespaces: [NS], crossNamespaceTargetRefs: false };

/** validRawSpec (zone az-c's VMCluster is a full spec) with a VMUser whose targetRefs name `refNamespace`. */
function withVmuserRefs(refNamespace: string, form: 'spec' | 'overrideSpec' = 'spec'): Record<string, unknown> {
  const raw = validRawSpec();
  const zones = raw.zones as Array<Record<string, unknown>>;
  zones[1]!.vmuser = {
    name: 'reads-az-b',
    [form]: { targetRefs: [{ crd: { kind: 'VMCluster/vmselect', name: 'vm-az-b', namespace: refNamespace }, paths: ['/select/.*'] }] },
  };
  return raw;
}

test('a full spec outside the creation namespaces is refused, naming the field and the chart value', () => {
  const issues = trustIssues('team-a', normalizedSpec(validRawSpec()), STRICT_TRUST_POLICY);
  expect(issues).toEqual([{ path: 'spec.zones[2].vmcluster.spec', message: expect.stringContaining('createNamespaces') }]);
  expect(issues[0]!.message).toContain('"team-a"');
});

test('a full spec in a creation namespace is allowed; overlays are allowed everywhere', () => {
  expect(trustIssues(NS, normalizedSpec(validRawSpec()), CREATE)).toEqual([]);
  const overlays = validRawSpec();
  (overlays.zones as Array<Record<string, unknown>>)[2]!.vmcluster = { name: 'vm-az-c' };
  expect(trustIssues('team-a', normalizedSpec(overlays), STRICT_TRUST_POLICY)).toEqual([]);
});

test.each(['spec', 'overrideSpec'] as const)('VMUser targetRefs (%s) into another namespace are refused unless enabled', (form) => {
  const spec = normalizedSpec(withVmuserRefs('other', form));
  const path = `spec.zones[1].vmuser.${form}.targetRefs[0].crd.namespace`;
  expect(trustIssues(NS, spec, CREATE)).toEqual(expect.arrayContaining([{ path, message: expect.stringContaining('allowCrossNamespaceTargetRefs') }]));
  expect(trustIssues(NS, spec, { ...CREATE, crossNamespaceTargetRefs: true }).filter((i) => i.path === path)).toEqual([]);
  // the object's own namespace, or "" (the operator's "this namespace"), is fine
  expect(trustIssues(NS, normalizedSpec(withVmuserRefs(NS, form)), CREATE)).toEqual([]);
  expect(trustIssues(NS, normalizedSpec(withVmuserRefs('', form)), CREATE)).toEqual([]);
});

test('crd.objects[].namespace and the VMAuth unauthorized targetRefs are checked too', () => {
  const raw = validRawSpec();
  raw.vmauth = {
    name: 'vm-global',
    overrideSpec: {
      unauthorizedUserAccessSpec: {
        targetRefs: [{ crd: { kind: 'VMCluster/vmselect', name: '', namespace: '', objects: [{ name: 'x', namespace: 'kube-system' }] }, paths: ['/.*'] }],
      },
    },
  };
  expect(trustIssues(NS, normalizedSpec(raw), CREATE)).toEqual([
    { path: 'spec.vmauth.overrideSpec.unauthorizedUserAccessSpec.targetRefs[0].crd.objects[0].namespace', message: expect.stringContaining('"kube-system"') },
  ]);
});

test('validateUnderPolicy: the schema first, then the policy', () => {
  expect(validateUnderPolicy({ zones: 'nope' }, NS, CREATE).success).toBe(false);
  const r = validateUnderPolicy(validRawSpec(), 'team-a', STRICT_TRUST_POLICY);
  expect(r.success).toBe(false);
  expect(validateUnderPolicy(validRawSpec(), NS, CREATE).success).toBe(true);
});
