// Issue 29's "Records are claims, not commands" (api/record-verification.ts): each case of
// test/fixtures/hostile/route-records.ts through the verification the activities, the trigger, the
// CLI and the workflow tests' fake all use; then a seeded property over generated records: whatever
// passes puts back nothing but its own zone's VMCluster.
import fc from 'fast-check';
import { adoptionIssue, restoreIssue, verifyRecords, type RouteObjectView } from '../../api/record-verification';
import { undoRemoval } from '../../api/route-edits';
import { parseRecords, UnreadableRecordsError, type OutOfRotationRecord, type RemovedRef } from '../../api/route-records';
import { routeReferencesCluster } from '../../api/route-targets';
import type { JsonObject } from '../../api/types';
import { annotate, EXPECT, genuine, globalView, NS, RECORD_CASES, UID } from '../fixtures/hostile/route-records';
import { assertProperty } from '../support/property';

describe('route records are claims (hostile cases)', () => {
  it.each(RECORD_CASES.map((c) => [c.id, c] as const))('%s', (_id, c) => {
    const views = c.views();
    const got = verifyRecords(views, EXPECT);
    if ('verified' in c.verdict) {
      expect(got.unverified).toEqual([]);
      expect(got.verified.map((r) => r.record.zone)).toEqual(['az-a']);
      return;
    }
    expect(got.verified).toEqual([]);
    if ('notReported' in c.verdict) {
      expect(got.unverified).toEqual([]);
      return;
    }
    expect(got.unverified).toHaveLength(1);
    expect(got.unverified[0]!.reason).toMatch(c.verdict.unverified);
    // What a restore of this uid would do with it (the workflow's rejoin, a person's release).
    const view = views[0]!;
    let record: OutOfRotationRecord | undefined;
    try {
      record = Object.values(parseRecords(view.annotation, UID))[0];
    } catch (err) {
      if (!(err instanceof UnreadableRecordsError)) throw err;
    }
    const restorable = record !== undefined && restoreIssue(record, view, EXPECT) === undefined;
    expect(restorable).toBe(c.verdict.restorable);
  });

  it('negative control: with the uid filter alone (the code before), every hostile record that parses is acted on', () => {
    const uidFilterOnly = (views: RouteObjectView[]) =>
      views.flatMap((v) => {
        try {
          return Object.values(parseRecords(v.annotation, UID));
        } catch {
          return [];
        }
      });
    const hostile = RECORD_CASES.filter((c) => 'unverified' in c.verdict && uidFilterOnly(c.views()).length > 0);
    expect(hostile.map((c) => c.id)).toEqual([
      'zone-still-in-reads',
      'copied-to-another-object',
      'recreated-object',
      'restores-static-url',
      'restores-static-beside-crd',
      'restores-another-cluster',
      'vmcluster-of-another-namespace',
      'object-entry-with-extras',
      'crd-name-of-another-cluster',
      'wrong-cluster-for-zone',
      'unmanaged-route',
    ]);
    for (const c of hostile) expect(verifyRecords(c.views(), EXPECT).verified).toEqual([]);
  });

  it('an unverified record fails nothing: the other records of the same listing are still adopted', () => {
    const forged = genuine({
      zone: 'az-b',
      vmcluster: { name: 'vm-az-b', namespace: NS },
      removed: [{ type: 'targetRef', index: 0, targetRef: { crd: { kind: 'VMCluster/vmselect', name: 'vm-az-b', namespace: NS } } }],
    });
    const got = verifyRecords([globalView(annotate(genuine(), forged)), globalView('{nope')], EXPECT);
    expect(got.verified.map((r) => r.record.zone)).toEqual(['az-a']);
    expect(got.unverified.map((u) => u.zone ?? 'annotation')).toEqual(['az-b', 'annotation']);
  });

  it('without the spec (the object gone), the bindings and the live route are still checked', () => {
    const noSpec = { namespace: NS, uid: UID };
    expect(verifyRecords([globalView(annotate(genuine()))], noSpec).verified).toHaveLength(1);
    expect(
      verifyRecords([globalView(annotate(genuine()), [{ crd: { kind: 'VMCluster/vmselect', name: 'vm-az-a', namespace: NS } }])], noSpec).verified,
    ).toEqual([]);
  });
});

// A small universe, so that generated records often look right: the record's own cluster, another
// zone's, one of another namespace, static URLs; bindings right or wrong.
const CLUSTERS = [
  { name: 'vm-az-a', namespace: NS },
  { name: 'vm-az-b', namespace: NS },
  { name: 'vm-az-a', namespace: 'team-b' },
];
const cluster = fc.constantFrom(...CLUSTERS);
const targetRef: fc.Arbitrary<JsonObject> = fc.oneof(
  cluster.map((c) => ({ crd: { kind: 'VMCluster/vmselect', name: c.name, namespace: c.namespace } })),
  fc.array(cluster, { maxLength: 2 }).map((cs) => ({ crd: { kind: 'VMCluster/vmselect', name: '', namespace: '', objects: cs.map((c) => ({ ...c })) } })),
  fc.constant({ static: { url: 'http://attacker.example' } }),
  cluster.map((c) => ({ crd: { kind: 'VMCluster/vmselect', name: c.name, namespace: c.namespace }, static: { url: 'http://attacker.example' } })),
);
const removed: fc.Arbitrary<RemovedRef> = fc.oneof(
  fc.record({ type: fc.constant('targetRef' as const), index: fc.nat(2), targetRef }),
  fc.record({
    type: fc.constant('object' as const),
    index: fc.nat(2),
    objectIndex: fc.nat(2),
    object: fc.oneof(
      cluster.map((c) => ({ ...c }) as JsonObject),
      cluster.map((c) => ({ ...c, url: 'http://attacker.example' }) as JsonObject),
    ),
    targetRef,
  }),
  fc.record({
    type: fc.constant('crdName' as const),
    index: fc.nat(2),
    name: fc.constantFrom('vm-az-a', 'vm-az-b'),
    namespace: fc.constantFrom(NS, 'team-b'),
    targetRef,
  }),
);
const record = fc.record({
  uid: fc.constantFrom(UID, 'uid-other'),
  zone: fc.constantFrom('az-a', 'az-b', 'az-x'),
  routeUid: fc.constantFrom('uid-global', 'uid-old'),
  vmcluster: cluster,
  removed: fc.array(removed, { minLength: 1, maxLength: 3 }),
});
const live = fc.array(targetRef, { maxLength: 3 });

/** Every cluster the targetRefs route reads to, and whether a static URL is among them. */
const routedTo = (refs: JsonObject[]) => ({
  clusters: CLUSTERS.filter((c) => routeReferencesCluster(refs, c)),
  statics: refs.filter((r) => 'static' in r).length,
});

describe('route records are claims (seeded property)', () => {
  it('whatever verifies is bound to this object and uid, is missing from the route, and puts back only its own zone cluster', () => {
    assertProperty(
      fc.property(record, live, (r, refs) => {
        const rec = genuine({
          vmdc: { namespace: NS, name: 'vmdc', uid: r.uid },
          zone: r.zone,
          route: { kind: 'VMAuth', name: 'global', uid: r.routeUid },
          vmcluster: { ...r.vmcluster },
          removed: r.removed,
        });
        const view: RouteObjectView = globalView(annotate(rec), refs);
        const restorable = restoreIssue(rec, view, EXPECT) === undefined;
        const adoptable = adoptionIssue(rec, view, EXPECT) === undefined;
        if (adoptable) {
          expect(restorable).toBe(true);
          expect(routeReferencesCluster(refs, rec.vmcluster)).toBe(false);
        }
        if (!restorable) return;
        expect(rec.vmdc.uid).toBe(UID);
        expect(rec.route.uid).toBe(view.uid);
        const zone = EXPECT.spec!.zones.find((z) => z.name === rec.zone);
        if (zone) expect(rec.vmcluster.name).toBe(zone.storage.name);
        const before = routedTo(refs);
        const after = routedTo(undoRemoval(refs, rec));
        expect(after.statics).toBe(before.statics);
        for (const c of after.clusters) if (!before.clusters.includes(c)) expect(c).toEqual(rec.vmcluster);
        expect(rec.vmcluster.namespace).toBe(NS);
      }),
      { numRuns: 300 },
    );
  });
});
