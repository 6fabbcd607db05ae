// `adopt: true` implies retainOnDelete unless the spec says otherwise (issue 30): an adopted object
// is someone else's, and deleting the VMDistributedCluster must never take it (or its volumes) with
// it. Through validateSpec (the one normalisation) to the apply the workflow and the write guard make.
import { specHash } from '../../api/spec-hash';
import { validateSpec } from '../../api/validate';
import type { NormalizedSpec } from '../../api/types';
import { specApplies } from '../../workflows/managed-objects';

const OBJ = { namespace: 'monitoring', name: 'vmdc', uid: 'u-1', generation: 2 };
const full = { vmselect: { replicaCount: 2 } };

function spec(over: Record<string, unknown>): NormalizedSpec {
  const v = validateSpec({
    clusterVersion: 'v1.150.0-cluster',
    zones: [
      { name: 'az-a', vmcluster: { name: 'vm-az-a', spec: full, adopt: true } },
      { name: 'az-b', vmcluster: { name: 'vm-az-b', spec: full } },
    ],
    vmauth: { name: 'global' },
    vmagent: { name: 'agent' },
    ...over,
  });
  if (!v.success) throw new Error(JSON.stringify(v.issues));
  return v.spec;
}
const retained = (s: NormalizedSpec) => Object.fromEntries(specApplies(OBJ, s).map((a) => [`${a.kind}/${a.name}`, a.managedBy.retain]));

describe('retainOnDelete and adopt', () => {
  it('unset: the adopted object is retained, the one created is owned', () => {
    expect(retained(spec({}))).toMatchObject({ 'VMCluster/vm-az-a': true, 'VMCluster/vm-az-b': false });
  });

  it('said otherwise: false owns both (the adopted one too), true retains both', () => {
    expect(retained(spec({ retainOnDelete: false }))).toMatchObject({ 'VMCluster/vm-az-a': false, 'VMCluster/vm-az-b': false });
    expect(retained(spec({ retainOnDelete: true }))).toMatchObject({ 'VMCluster/vm-az-a': true, 'VMCluster/vm-az-b': true });
  });

  it('a spec that adopts nothing normalizes (and hashes) as when unset meant false', () => {
    const plain = { zones: ['az-a', 'az-b'].map((z) => ({ name: z, vmcluster: { name: `vm-${z}` } })) };
    expect(spec(plain).retainOnDelete).toBe(false);
    expect(specHash(spec(plain))).toBe(specHash(spec({ ...plain, retainOnDelete: false })));
    expect(specHash(spec({}))).not.toBe(specHash(spec({ retainOnDelete: false })));
  });
});
