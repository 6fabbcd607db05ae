// The pure parts of server-side apply: the applied record and drift against it, who owns an object,
// the API server's answer to a refused apply, and the apply configuration of a merge patch.
import { appliedRecord, APPLIED_ANNOTATION, driftedFields, isDrift, readAppliedRecord, releasedFields, type AppliedRecord } from '../../kube/applied-fields';
import { applyConflicts, untypableApply } from '../../kube/apply-conflicts';
import { ownershipProblem, vmdcOwnerReference } from '../../kube/ownership';
import type { JsonObject } from '../../api/types';
import { appliedConfig } from '../../workflows/merge';

const VMDC = { name: 'd', uid: 'uid-1', generation: 3 };
const withRecord = (record: string, extra: JsonObject = {}): JsonObject => ({ metadata: { annotations: { [APPLIED_ANNOTATION]: record }, ...extra } });
const recordOf = (spec: JsonObject, form: 'spec' | 'overlay' = 'spec'): AppliedRecord => readAppliedRecord(withRecord(appliedRecord(VMDC, form, spec)))!;

describe('applied record', () => {
  const spec = { clusterVersion: 'v1', vmselect: { replicaCount: 2, extraArgs: { 'search.maxQueryDuration': '30s' } }, remoteWrite: [{ url: 'u' }], empty: {} };

  it('round-trips, with one hash per leaf (lists and empty objects are leaves)', () => {
    const r = recordOf(spec);
    expect(r.vmdc).toEqual(VMDC);
    expect(r.form).toBe('spec');
    expect(r.fields.map(([p]) => p)).toEqual([
      ['spec', 'clusterVersion'],
      ['spec', 'vmselect', 'replicaCount'],
      ['spec', 'vmselect', 'extraArgs', 'search.maxQueryDuration'],
      ['spec', 'remoteWrite'],
      ['spec', 'empty'],
    ]);
    expect(JSON.stringify(r)).not.toContain('30s');
  });

  it('is not read from an annotation that is not one', () => {
    expect(readAppliedRecord({})).toBeUndefined();
    expect(readAppliedRecord(withRecord('not json'))).toBeUndefined();
    expect(readAppliedRecord(withRecord(JSON.stringify({ vmdc: VMDC, form: 'spec', fields: [[['spec'], 1]] })))).toBeUndefined();
    expect(readAppliedRecord(withRecord(JSON.stringify({ vmdc: VMDC, form: 'other', fields: [] })))).toBeUndefined();
  });

  it('finds the fields changed or removed since, whatever the key order', () => {
    const r = recordOf(spec);
    expect(driftedFields(r, { spec: { ...spec, vmselect: { extraArgs: { 'search.maxQueryDuration': '30s' }, replicaCount: 2 } } })).toEqual([]);
    const live = { spec: { ...spec, clusterVersion: 'hand', vmselect: { extraArgs: {} }, remoteWrite: [{ url: 'u' }, { url: 'v' }] } };
    expect(driftedFields(r, live)).toEqual([
      '.spec.clusterVersion',
      '.spec.vmselect.replicaCount',
      '.spec.vmselect.extraArgs.search.maxQueryDuration',
      '.spec.remoteWrite',
    ]);
  });

  it('a conflict is drift only on a field it applied that changed: itself, inside it or around it', () => {
    const r = recordOf(spec);
    const live = { spec: { ...spec, clusterVersion: 'hand', vmselect: { replicaCount: 2, extraArgs: { 'search.maxQueryDuration': '1m' } } } };
    expect(isDrift('.spec.clusterVersion', r, live)).toBe(true);
    expect(isDrift('.spec.vmselect.extraArgs', r, live)).toBe(true); // an atomic map
    expect(isDrift('.spec.vmselect.replicaCount', r, live)).toBe(false); // unchanged
    expect(isDrift('.spec.retentionPeriod', r, live)).toBe(false); // never applied
    expect(isDrift('.spec.clusterVersion', undefined, live)).toBe(false);
    const lists = recordOf({ remoteWrite: [{ url: 'u' }] });
    expect(isDrift('.spec.remoteWrite[url="u"].sendTimeout', lists, { spec: { remoteWrite: [{ url: 'u', sendTimeout: '1s' }] } })).toBe(true);
  });

  it('hands over, with their live values, the fields the next spec no longer sets', () => {
    const r = recordOf(spec);
    const live = { spec: { ...spec, clusterVersion: 'v2' } };
    expect(releasedFields(r, live, { clusterVersion: 'v3', vmselect: { replicaCount: 1 } })).toEqual({
      spec: { vmselect: { extraArgs: { 'search.maxQueryDuration': '30s' } }, remoteWrite: [{ url: 'u' }], empty: {} },
    });
    expect(releasedFields(r, live, spec)).toBeUndefined();
    expect(releasedFields(r, { spec: {} }, {})).toBeUndefined(); // gone already: nothing to keep
  });

  it('hands over a `__proto__` key of a free-form subtree as data, and nothing reaches Object.prototype', () => {
    // As the API server's JSON arrives: `__proto__` an own key (JSON.parse), here under extraArgs.
    const live = JSON.parse('{"spec":{"clusterVersion":"v1","vmselect":{"extraArgs":{"__proto__":{"dryRun":"true"}}}}}') as JsonObject;
    const released = releasedFields(recordOf(live.spec as JsonObject), live, { clusterVersion: 'v2' });
    expect(({} as Record<string, unknown>).dryRun).toBeUndefined();
    expect(JSON.stringify(released)).toBe('{"spec":{"vmselect":{"extraArgs":{"__proto__":{"dryRun":"true"}}}}}');
  });

  it('a forged record naming a path through `__proto__` writes nothing outside the result', () => {
    const forged = (path: string[]): AppliedRecord => ({ vmdc: VMDC, form: 'spec', fields: [[path, 'x']] });
    const live = JSON.parse('{"spec":{"__proto__":{"dryRun":true},"constructor":{"prototype":{"force":true}}}}') as JsonObject;
    expect(releasedFields(forged(['spec', '__proto__', 'dryRun']), live, {})).toEqual({ spec: { ['__proto__']: { dryRun: true } } });
    releasedFields(forged(['spec', 'constructor', 'prototype', 'force']), live, {});
    expect(({} as Record<string, unknown>).dryRun).toBeUndefined();
    expect(({} as Record<string, unknown>).force).toBeUndefined();
    expect((Object as unknown as Record<string, unknown>).force).toBeUndefined();
  });
});

describe('ownership of the object a full spec names', () => {
  const ref = (uid: string, controller = true) => ({ ...vmdcOwnerReference({ name: 'x', uid }), controller });

  it('ours: our ownerReference, or our full-spec record (retainOnDelete)', () => {
    expect(ownershipProblem({ metadata: { ownerReferences: [ref('uid-1')] } }, 'uid-1', false)).toBeUndefined();
    expect(ownershipProblem(withRecord(appliedRecord(VMDC, 'spec', {})), 'uid-1', false)).toBeUndefined();
  });

  it('not ours: refused unless adopt; an overlay record or another VMDistributedCluster does not make it ours', () => {
    for (const o of [{ metadata: {} }, withRecord(appliedRecord(VMDC, 'overlay', {})), withRecord(appliedRecord({ ...VMDC, uid: 'uid-2' }, 'spec', {}))]) {
      expect(ownershipProblem(o, 'uid-1', false)).toMatch(/adopt: true/);
      expect(ownershipProblem(o, 'uid-1', true)).toBeUndefined();
    }
    expect(ownershipProblem({ metadata: { ownerReferences: [ref('uid-9', false)] } }, 'uid-1', true)).toBeUndefined();
  });

  it("another controller's object: refused even with adopt", () => {
    const o = {
      metadata: {
        ownerReferences: [{ apiVersion: 'operator.victoriametrics.com/v1alpha1', kind: 'VMDistributed', name: 'vmd', uid: 'uid-9', controller: true }],
      },
    };
    expect(ownershipProblem(o, 'uid-1', true)).toMatch(/controlled by VMDistributed vmd/);
  });
});

describe("the API server's answer to a refused apply", () => {
  const apiError = (code: number, body: object) => Object.assign(new Error('HTTP'), { code, body: JSON.stringify(body) });

  it('409 FieldManagerConflict: each field and its manager', () => {
    const err = apiError(409, {
      reason: 'Conflict',
      details: {
        causes: [
          { reason: 'FieldManagerConflict', message: 'conflict with "kubectl-edit" using operator.victoriametrics.com/v1beta1', field: '.spec.clusterVersion' },
          { reason: 'FieldManagerConflict', message: 'conflict with "helm" using operator.victoriametrics.com/v1beta1', field: '.spec.vmstorage.replicaCount' },
        ],
      },
    });
    expect(applyConflicts(err)).toEqual([
      { manager: 'kubectl-edit', field: '.spec.clusterVersion' },
      { manager: 'helm', field: '.spec.vmstorage.replicaCount' },
    ]);
  });

  it('a 409 that is not a field conflict (a uid precondition) is not one', () => {
    expect(applyConflicts(apiError(409, { message: 'uid mismatch', reason: 'Conflict' }))).toBeUndefined();
    expect(applyConflicts(apiError(422, { details: { causes: [{ reason: 'FieldManagerConflict' }] } }))).toBeUndefined();
  });

  it('500 "failed to create typed patch object" is a spec the schema cannot type; other 500s are not', () => {
    expect(
      untypableApply(apiError(500, { message: 'failed to create typed patch object (default/c1; ...): .spec.bogus: field not declared in schema' })),
    ).toMatch(/\.spec\.bogus/);
    expect(untypableApply(apiError(500, { message: 'etcdserver: request timed out' }))).toBeUndefined();
  });
});

describe('the apply configuration of a merge patch', () => {
  it('drops nulls and the objects they leave empty, keeps explicit empty objects', () => {
    expect(appliedConfig({ a: null, b: { c: null }, d: { e: 1, f: null }, g: {}, h: [null, 1] })).toEqual({ d: { e: 1 }, g: {}, h: [null, 1] });
  });
});
