// decideWrite: every write activity bound to the calling workflow's VMDistributedCluster
// (activities/guard/write-binding.ts).
import { decideWrite, type LiveVmdc, type RouteEdit, type Write } from '../../activities/guard/write-binding';
import { workflowIdFor } from '../../api/rollout-contract';
import { STRICT_TRUST_POLICY, type TrustPolicy } from '../../api/trust-policy';
import type { ObjectGeneration } from '../../api/types';
import type { ApplyObjectInput } from '../../workflows/activity-types';
import { specApplies } from '../../workflows/managed-objects';
import { normalizedSpec, validRawSpec } from './api-helpers';

const POLICY: TrustPolicy = { ...STRICT_TRUST_POLICY, createNamespaces: ['monitoring'] };
const OBJ: ObjectGeneration = { namespace: 'monitoring', name: 'metrics', uid: 'aaaaaaaa-1111', generation: 3 };
const OWN_ID = workflowIdFor(OBJ);

const live = (over: { uid?: string; generation?: number; spec?: Record<string, unknown>; deleting?: boolean; statusWorkflow?: string } = {}): LiveVmdc => ({
  metadata: {
    uid: over.uid ?? OBJ.uid,
    generation: over.generation ?? OBJ.generation,
    ...(over.deleting ? { deletionTimestamp: '2026-12-04T00:00:00Z' } : {}),
  },
  spec: over.spec ?? validRawSpec(),
  status: { workflow: { id: over.statusWorkflow ?? OWN_ID, runId: 'r' } },
});

/** What the workflow of OBJ applies to each object of the spec (workflows/managed-objects.ts). */
const applies = specApplies(OBJ, normalizedSpec(validRawSpec()));
const applyOf = (kind: ApplyObjectInput['kind'], name: string): ApplyObjectInput => applies.find((a) => a.kind === kind && a.name === name)!;
const apply = (input: ApplyObjectInput): Write => ({ kind: 'apply', input });

const removalOf = (vmcluster = 'vm-az-a', route: RouteEdit['removals'][number]['route'] = { kind: 'VMAuth', name: 'vm-global' }) => ({
  route,
  vmcluster: { name: vmcluster, namespace: OBJ.namespace },
  removed: [],
});
const OWN_RECORD = { vmdc: { namespace: OBJ.namespace, name: OBJ.name, uid: OBJ.uid }, zone: 'az-a', workflowId: OWN_ID, generation: OBJ.generation };
const edit = (over: Partial<RouteEdit> = {}, object = OBJ, workflowId = workflowIdFor(object)): Write => ({
  kind: 'routes',
  input: {
    namespace: object.namespace,
    vmauthName: 'vm-global',
    removals: [removalOf()],
    direction: 'remove',
    record: { vmdc: { namespace: object.namespace, name: object.name, uid: object.uid }, zone: 'az-a', workflowId, generation: object.generation },
    ...over,
  },
});

/** `l`: the object as it is now; 'gone' when it does not exist. */
const decide = (write: Write, l: LiveVmdc | 'gone' = live(), caller = OWN_ID, policy = POLICY) =>
  decideWrite(write, caller, l === 'gone' ? undefined : l, policy);
const refusedWith = (text: string) => ({ allowed: false, message: expect.stringContaining(text) });

describe('the workflow of the object, at its generation', () => {
  test('every apply the spec asks for (a dry run of it too), a removal of one of its zones, its status: allowed', () => {
    for (const a of applies) {
      expect(decide(apply(a))).toEqual({ allowed: true });
      expect(decide(apply({ ...a, dryRun: true }))).toEqual({ allowed: true });
    }
    expect(decide(edit())).toEqual({ allowed: true });
    expect(decide(edit({ removals: [removalOf('vm-az-a'), removalOf('vm-az-a', { kind: 'VMUser', name: 'reads-az-b' })] }))).toEqual({ allowed: true });
    expect(decide({ kind: 'status', object: OBJ })).toEqual({ allowed: true });
  });

  test('a later generation that only paused (its status still names the workflow): still its rollout', () => {
    expect(decide(apply(applyOf('VMCluster', 'vm-az-a')), live({ generation: 4, spec: { ...validRawSpec(), paused: true } }))).toEqual({ allowed: true });
    expect(decide(edit(), live({ generation: 4 }))).toEqual({ allowed: true });
  });
});

describe('another workflow: refused, whatever it writes', () => {
  const foreignIds = [
    'my-own-id',
    workflowIdFor({ ...OBJ, name: 'someone-else' }),
    workflowIdFor({ ...OBJ, generation: 2 }),
    workflowIdFor({ ...OBJ, uid: 'bbbbbbbb-1111' }),
  ];
  test.each(foreignIds)('caller %s', (caller) => {
    expect(decide(apply(applyOf('VMCluster', 'vm-az-a')), live(), caller)).toEqual(refusedWith(`the calling workflow ${JSON.stringify(caller)}`));
    expect(decide(edit(), live(), caller)).toEqual(refusedWith('is not the rollout of monitoring/metrics generation 3'));
    expect(decide(edit({ direction: 'restore', removals: [] }), live(), caller).allowed).toBe(false);
    expect(decide({ kind: 'status', object: OBJ }, live(), caller).allowed).toBe(false);
  });

  test('a route edit whose record names another workflow, or routes of another namespace: refused', () => {
    expect(decide(edit({}, OBJ, 'someone-else'))).toEqual(refusedWith('the record names workflow "someone-else"'));
    expect(decide(edit({ namespace: 'kube-system', direction: 'restore' }))).toEqual(refusedWith('the routes are in namespace kube-system'));
  });
});

describe('an apply or a removal of a generation no longer in charge: refused', () => {
  test.each<[string, LiveVmdc | 'gone', string]>([
    ['gone', 'gone', 'does not exist'],
    ['recreated (another uid)', live({ uid: 'aaaaaaaa-2222' }), 'has uid aaaaaaaa-2222'],
    ['being deleted', live({ generation: 4, deleting: true }), 'is being deleted'],
    [
      'superseded (a later generation, its status names another workflow)',
      live({ generation: 4, statusWorkflow: 'vmdc/monitoring/metrics/g4-aaaaaaaa' }),
      'at generation 4',
    ],
    ['an older generation', live({ generation: 2 }), 'at generation 2'],
  ])('%s', (_what, l, text) => {
    expect(decide(apply(applyOf('VMCluster', 'vm-az-a')), l)).toEqual(refusedWith(text));
    expect(decide(edit(), l)).toEqual(refusedWith(text));
  });

  test('yet a restore (putting back what the records of the uid say) and the status: allowed (the cleanup of a cancel, supersede or delete)', () => {
    for (const l of [
      'gone' as const,
      live({ generation: 4, deleting: true }),
      live({ generation: 4, statusWorkflow: 'other' }),
      live({ uid: 'aaaaaaaa-2222' }),
    ]) {
      expect(decide(edit({ direction: 'restore', removals: [] }), l)).toEqual({ allowed: true });
      expect(decide({ kind: 'status', object: OBJ }, l)).toEqual({ allowed: true });
    }
  });
});

describe('a route object applied without the VMClusters of held zones (trafficMode)', () => {
  const heldSpec = () => {
    const raw = validRawSpec() as { zones: Array<Record<string, unknown>> };
    raw.zones[2]!.trafficMode = 'write-only';
    return raw;
  };
  const specOf = heldSpec();
  const heldApplies = specApplies(OBJ, normalizedSpec(specOf));
  const vmauth = heldApplies.find((a) => a.kind === 'VMAuth')!;
  const without = (name: string, namespace = OBJ.namespace) => [{ name, namespace }];

  test('allowed for a zone the spec holds out of reads, on a route object only', () => {
    expect(decide(apply({ ...vmauth, without: without('vm-az-c') }), live({ spec: specOf }))).toEqual({ allowed: true });
    const vmc = heldApplies.find((a) => a.kind === 'VMCluster')!;
    expect(decide(apply({ ...vmc, without: without('vm-az-c') }), live({ spec: specOf }))).toEqual(refusedWith('has no routes in VMCluster'));
  });

  test('refused for a zone in reads, another namespace, or a VMCluster the spec does not name (negative control: the same apply, no hold)', () => {
    expect(decide(apply({ ...vmauth, without: without('vm-az-a') }), live({ spec: specOf }))).toEqual(
      refusedWith('holds no zone of VMCluster monitoring/vm-az-a'),
    );
    expect(decide(apply({ ...vmauth, without: without('vm-az-c', 'other') }), live({ spec: specOf }))).toEqual(refusedWith('holds no zone'));
    expect(decide(apply({ ...vmauth, without: without('kube-apiserver') }), live({ spec: specOf }))).toEqual(refusedWith('holds no zone'));
    expect(decide(apply({ ...applyOf('VMAuth', vmauth.name), without: without('vm-az-c') }))).toEqual(
      refusedWith('holds no zone of VMCluster monitoring/vm-az-c'),
    );
  });
});

describe('what the spec does not ask for: refused', () => {
  test('an object the spec does not name, or another apply of one it names', () => {
    const vmc = applyOf('VMCluster', 'vm-az-a');
    expect(decide(apply({ ...vmc, name: 'kube-apiserver' }))).toEqual(refusedWith('names no VMCluster kube-apiserver'));
    expect(decide(apply({ ...applyOf('VMUser', 'reads-az-a'), kind: 'VMAgent' }))).toEqual(refusedWith('names no VMAgent reads-az-a'));
    expect(decide(apply({ ...vmc, patch: { ...vmc.patch, clusterVersion: 'v0.0.1-evil' } }))).toEqual(
      refusedWith('asks for another apply of VMCluster vm-az-a'),
    );
    expect(decide(apply({ ...vmc, create: true }))).toEqual(refusedWith('another apply'));
    expect(decide(apply({ ...vmc, managedBy: { ...vmc.managedBy, forceConflicts: true } }))).toEqual(refusedWith('another apply'));
    expect(decide(apply({ ...vmc, managedBy: { ...vmc.managedBy, adopt: true } }))).toEqual(refusedWith('another apply'));
  });

  test('a removal of a zone, a route or a VMCluster the spec does not have', () => {
    expect(decide(edit({ record: { ...OWN_RECORD, zone: 'az-z' } }))).toEqual(refusedWith('has no zone az-z'));
    expect(decide(edit({ vmauthName: 'other-vmauth' }))).toEqual(refusedWith('names VMAuth vm-global, not other-vmauth'));
    expect(decide(edit({ removals: [removalOf('vm-az-a', { kind: 'VMUser', name: 'someone-elses' })] }))).toEqual(
      refusedWith('does not manage the route VMUser someone-elses'),
    );
    expect(decide(edit({ removals: [removalOf('vm-az-b')] }))).toEqual(
      refusedWith('routes zone az-a to VMCluster monitoring/vm-az-a, not VMCluster monitoring/vm-az-b'),
    );
  });

  test("with spec.vmuserSelector, a VMUser the spec does not name may be edited (its labels are checked on the edit's fresh read); no other kind", () => {
    const selecting = live({ spec: { ...validRawSpec(), vmuserSelector: 'vmrollout.io/reads=global' } });
    expect(decide(edit({ removals: [removalOf('vm-az-a', { kind: 'VMUser', name: 'team-dashboards' })] }), selecting)).toEqual({ allowed: true });
    expect(decide(edit({ removals: [removalOf('vm-az-a', { kind: 'VMAuth', name: 'other-vmauth' })] }), selecting)).toEqual(
      refusedWith('does not manage the route VMAuth other-vmauth'),
    );
    expect(decide(edit({ removals: [removalOf('vm-az-b', { kind: 'VMUser', name: 'team-dashboards' })] }), selecting)).toEqual(
      refusedWith('routes zone az-a to VMCluster monitoring/vm-az-a, not VMCluster monitoring/vm-az-b'),
    );
  });

  test('a spec that is not valid, or that the trust policy forbids', () => {
    expect(decide(apply(applyOf('VMCluster', 'vm-az-a')), live({ spec: { zones: 'no' } }))).toEqual(refusedWith('spec is not valid'));
    // zone az-c is a full spec: creating objects is not enabled in the namespace
    expect(decide(apply(applyOf('VMCluster', 'vm-az-a')), live(), OWN_ID, STRICT_TRUST_POLICY)).toEqual(refusedWith('createNamespaces'));
    expect(decide(edit(), live(), OWN_ID, STRICT_TRUST_POLICY)).toEqual(refusedWith('createNamespaces'));
  });
});
