import fc from 'fast-check';
import { assertProperty } from '../support/property';
import type { JsonObject } from '../../api/types';
import type { RouteSnapshot } from '../../workflows/activity-types';
import { EmptyRouteError, computeRemovals } from '../../workflows/routes';
import { computeRemoval, hasReadBackend, routeReferencesCluster } from '../../api/route-targets';
import { applyRemoval, undoRemoval } from '../../api/route-edits';

const NS = 'ns';
const A = { name: 'vm-a', namespace: NS };
const objs = (...names: string[]) => names.map((name) => ({ name, namespace: NS }));
// As the operator's CRD requires: crd.name and crd.namespace present ("" when only crd.objects routes).
const sel = (...names: string[]): JsonObject => ({
  crd: { kind: 'VMCluster/vmselect', name: '', namespace: '', objects: objs(...names) },
  paths: ['/select/.*'],
});
const named = (name: string): JsonObject => ({ crd: { kind: 'VMCluster/vmselect', name, namespace: NS } });
const snap = (targetRefs: JsonObject[], name = 'r'): RouteSnapshot => ({ route: { kind: 'VMAuth', name }, targetRefs });

describe('computeRemoval', () => {
  test('removes the zone from crd.objects when others remain', () => {
    const r = computeRemoval(snap([sel('vm-a', 'vm-b', 'vm-c')]), A);
    expect(r.removed).toEqual([{ type: 'object', index: 0, objectIndex: 0, object: { name: 'vm-a', namespace: NS }, targetRef: sel('vm-a', 'vm-b', 'vm-c') }]);
    expect(applyRemoval([sel('vm-a', 'vm-b', 'vm-c')], r)).toEqual([sel('vm-b', 'vm-c')]);
  });
  test('removes a whole targetRef that names only this zone (crd.name or single objects entry)', () => {
    const refs = [{ static: { url: 'http://x' } }, named('vm-a'), sel('vm-a'), sel('vm-b')];
    const r = computeRemoval(snap(refs), A);
    expect(r.removed.map((x) => [x.type, x.index])).toEqual([
      ['targetRef', 1],
      ['targetRef', 2],
    ]);
    expect(applyRemoval(refs, r)).toEqual([{ static: { url: 'http://x' } }, sel('vm-b')]);
  });
  test('ignores other kinds', () => {
    const refs = [{ crd: { kind: 'VMCluster/vminsert', name: 'vm-a', namespace: NS } }, sel('vm-b')];
    expect(computeRemoval(snap(refs), A).removed).toEqual([]);
  });
});

describe('computeRemovals', () => {
  test('refuses when any route would be left with no read backend, naming it', () => {
    const snaps = [
      snap([sel('vm-a', 'vm-b')], 'auth'),
      { route: { kind: 'VMUser' as const, name: 'reads-a' }, targetRefs: [named('vm-a'), { crd: { kind: 'VMCluster/vminsert', name: 'vm-b' } }] },
    ];
    try {
      computeRemovals(snaps, A);
      throw new Error('expected EmptyRouteError');
    } catch (e) {
      expect(e).toBeInstanceOf(EmptyRouteError);
      expect((e as EmptyRouteError).routes).toEqual([{ kind: 'VMUser', name: 'reads-a' }]);
      expect((e as Error).message).toMatch(/VMUser reads-a/);
    }
  });
  test('leaves out routes that do not reference the zone', () => {
    const r = computeRemovals([snap([sel('vm-a', 'vm-b')], 'one'), snap([sel('vm-b')], 'two')], A);
    expect(r.map((x) => x.route.name)).toEqual(['one']);
  });
});

describe('apply / undo', () => {
  const refs = [{ static: { url: 'http://s' }, paths: ['/x'] }, named('vm-a'), sel('vm-b', 'vm-a', 'vm-c'), sel('vm-a')];
  const r = computeRemoval(snap(refs), A);

  test('undo restores exactly, and both are idempotent', () => {
    const removed = applyRemoval(refs, r);
    expect(routeReferencesCluster(removed, A)).toBe(false);
    expect(applyRemoval(removed, r)).toEqual(removed);
    expect(undoRemoval(removed, r)).toEqual(refs);
    expect(undoRemoval(undoRemoval(removed, r), r)).toEqual(refs);
  });
  test('does not mutate inputs', () => {
    const copy = JSON.parse(JSON.stringify(refs));
    applyRemoval(refs, r);
    undoRemoval(applyRemoval(refs, r), r);
    expect(refs).toEqual(copy);
  });
  test('keeps what the user added meanwhile (appended targetRef, extra object)', () => {
    const removed = applyRemoval(refs, r);
    const user = JSON.parse(JSON.stringify(removed)) as JsonObject[];
    user.push({ static: { url: 'http://new' } });
    const back = undoRemoval(user, r);
    expect(back).toEqual([...refs, { static: { url: 'http://new' } }]);
  });
  test('finds a container the user moved', () => {
    const removed = applyRemoval(refs, r); // [static, sel(b,c)]
    const moved = [removed[1]!, { static: { url: 'http://first' } }, removed[0]!];
    const back = undoRemoval(moved, r);
    expect(back.some((t) => JSON.stringify(t) === JSON.stringify(sel('vm-b', 'vm-a', 'vm-c')))).toBe(true);
    expect(back.filter((t) => JSON.stringify(t) === JSON.stringify(named('vm-a')))).toHaveLength(1);
  });
  test('re-creates a container the user deleted', () => {
    const rr = computeRemoval(snap([sel('vm-a', 'vm-b')]), A);
    expect(undoRemoval([], rr)).toEqual([sel('vm-a')]);
  });

  test('property: undo(apply(x)) == x and user appends survive', () => {
    const names = ['vm-a', 'vm-b', 'vm-c'];
    const targetRef = fc.oneof(
      fc.constantFrom(...names).map(named),
      fc.uniqueArray(fc.constantFrom(...names), { minLength: 1, maxLength: 3 }).map((n) => sel(...n)),
      fc.webUrl().map((url) => ({ static: { url } }) as JsonObject),
    );
    assertProperty(
      fc.property(fc.array(targetRef, { maxLength: 6 }), fc.array(fc.webUrl(), { maxLength: 2 }), (trs, extra) => {
        const removal = computeRemoval(snap(trs), A);
        const out = applyRemoval(trs, removal);
        if (routeReferencesCluster(out, A)) return false;
        if (JSON.stringify(undoRemoval(out, removal)) !== JSON.stringify(trs)) return false;
        const withUser = [...out, ...extra.map((url) => ({ static: { url } }) as JsonObject)];
        const back = undoRemoval(withUser, removal);
        return (
          extra.every((url) => back.some((t) => JSON.stringify(t) === JSON.stringify({ static: { url } }))) &&
          routeReferencesCluster(back, A) === routeReferencesCluster(trs, A)
        );
      }),
    );
  });
});

test('hasReadBackend', () => {
  expect(hasReadBackend([])).toBe(false);
  expect(hasReadBackend([{ crd: { kind: 'VMCluster/vmselect', objects: [] } }])).toBe(false);
  expect(hasReadBackend([{ crd: { kind: 'VMCluster/vminsert', name: 'x' } }])).toBe(false);
  expect(hasReadBackend([sel('vm-b')])).toBe(true);
  expect(hasReadBackend([{ static: { url: 'http://x' } }])).toBe(true);
});

// ---------------------------------------------------------------------------------------------
// The operator's rules (v0.74.1 vmusers_config.go updateCRDObjURLs): crd.name routes only with a
// non-empty crd.namespace; a crd.objects entry only by its exact name and namespace.

const B = { name: 'vm-b', namespace: NS };
/** {name, namespace, objects: [others]}: the operator routes to crd.name AND to every object. */
const both = (name: string, namespace: string, ...others: string[]): JsonObject => ({
  crd: { kind: 'VMCluster/vmselect', name, namespace, objects: objs(...others) },
  paths: ['/select/.*'],
});
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

describe('operator rules: what names a cluster', () => {
  test('crd.name names it only with crd.namespace, both non-empty and equal', () => {
    expect(routeReferencesCluster([named('vm-a')], A)).toBe(true);
    expect(routeReferencesCluster([{ crd: { kind: 'VMCluster/vmselect', name: 'vm-a', namespace: '' } }], A)).toBe(false);
    expect(routeReferencesCluster([{ crd: { kind: 'VMCluster/vmselect', name: 'vm-a' } }], A)).toBe(false);
    expect(routeReferencesCluster([{ crd: { kind: 'VMCluster/vmselect', name: 'vm-a', namespace: 'other' } }], A)).toBe(false);
  });
  test('a crd.objects entry names it only by exact name and namespace', () => {
    const wrong: JsonObject = {
      crd: {
        kind: 'VMCluster/vmselect',
        name: '',
        namespace: '',
        objects: [{ name: 'vm-a', namespace: '' }, { name: 'vm-a', namespace: 'other' }, { name: 'vm-a' }],
      },
    };
    expect(routeReferencesCluster([wrong], A)).toBe(false);
    expect(computeRemoval(snap([wrong, sel('vm-b')]), A).removed).toEqual([]);
  });
  test('a name with an empty namespace is not a reference: nothing removed', () => {
    const refs: JsonObject[] = [{ crd: { kind: 'VMCluster/vmselect', name: 'vm-a', namespace: '' } }, sel('vm-b')];
    expect(computeRemoval(snap(refs), A).removed).toEqual([]);
    expect(computeRemovals([snap(refs)], A)).toEqual([]);
  });
});

describe('operator rules: computeRemoval of the name+objects form', () => {
  test('zone in crd.name: a crdName entry (name and namespace emptied, keys and objects kept)', () => {
    const refs = [both('vm-a', NS, 'vm-b', 'vm-c')];
    const r = computeRemoval(snap(refs), A);
    expect(r.removed).toEqual([{ type: 'crdName', index: 0, name: 'vm-a', namespace: NS, targetRef: both('vm-a', NS, 'vm-b', 'vm-c') }]);
    const out = applyRemoval(refs, r);
    expect(out).toEqual([both('', '', 'vm-b', 'vm-c')]);
    expect(routeReferencesCluster(out, A)).toBe(false);
    expect(routeReferencesCluster(out, B)).toBe(true);
    expect(undoRemoval(out, r)).toEqual(refs);
  });
  test('zone in crd.objects of a name+objects targetRef: only its entry', () => {
    const refs = [both('vm-b', NS, 'vm-a', 'vm-c')];
    const r = computeRemoval(snap(refs), A);
    expect(r.removed.map((x) => [x.type, x.index])).toEqual([['object', 0]]);
    expect(applyRemoval(refs, r)).toEqual([both('vm-b', NS, 'vm-c')]);
    expect(undoRemoval(applyRemoval(refs, r), r)).toEqual(refs);
  });
  test('zone in both crd.name and crd.objects, with others: crdName and object entries', () => {
    const refs = [both('vm-a', NS, 'vm-a', 'vm-b')];
    const r = computeRemoval(snap(refs), A);
    expect(r.removed.map((x) => [x.type, x.index])).toEqual([
      ['crdName', 0],
      ['object', 0],
    ]);
    expect(applyRemoval(refs, r)).toEqual([both('', '', 'vm-b')]);
    expect(undoRemoval(applyRemoval(refs, r), r)).toEqual(refs);
  });
  test('zone in both and nothing else: the whole targetRef', () => {
    const refs = [both('vm-a', NS, 'vm-a'), sel('vm-b')];
    const r = computeRemoval(snap(refs), A);
    expect(r.removed).toEqual([{ type: 'targetRef', index: 0, targetRef: both('vm-a', NS, 'vm-a') }]);
    expect(applyRemoval(refs, r)).toEqual([sel('vm-b')]);
  });
  test('a non-routing name (empty namespace) next to zone-only objects: the whole targetRef (the name routes nowhere)', () => {
    const refs = [both('vm-x', '', 'vm-a'), sel('vm-b')];
    const r = computeRemoval(snap(refs), A);
    expect(r.removed.map((x) => [x.type, x.index])).toEqual([['targetRef', 0]]);
    expect(undoRemoval(applyRemoval(refs, r), r)).toEqual(refs);
  });
});

describe('operator rules: hasReadBackend and EmptyRoute', () => {
  test('a crd counts only with a routing name (name and namespace non-empty) or a non-empty objects list', () => {
    expect(hasReadBackend([both('', '', 'vm-b')])).toBe(true);
    expect(hasReadBackend([both('', '')])).toBe(false);
    expect(hasReadBackend([{ crd: { kind: 'VMCluster/vmselect', name: 'vm-b', namespace: '' } }])).toBe(false);
    expect(hasReadBackend([{ crd: { kind: 'VMCluster/vmselect', name: 'vm-b' } }])).toBe(false);
    expect(hasReadBackend([named('vm-b')])).toBe(true);
    expect(hasReadBackend([{ crd: { kind: 'VMSingle', name: 'x', namespace: '' } }])).toBe(false);
    expect(hasReadBackend([{ crd: { kind: 'VMSingle', name: 'x', namespace: NS } }])).toBe(true);
    expect(hasReadBackend([{ crd: { kind: 'VMCluster/vminsert', name: 'x', namespace: NS } }])).toBe(false);
  });
  test('EmptyRoute when what is left routes nowhere by the operator (a name without namespace)', () => {
    const refs: JsonObject[] = [named('vm-a'), { crd: { kind: 'VMCluster/vmselect', name: 'vm-b', namespace: '' } }];
    expect(() => computeRemovals([snap(refs)], A)).toThrow(EmptyRouteError);
  });
  test('taking the zone out of crd.name leaves a backend when crd.objects has others', () => {
    expect(computeRemovals([snap([both('vm-a', NS, 'vm-b')])], A)).toHaveLength(1);
    expect(() => computeRemovals([snap([both('vm-a', NS, 'vm-a')])], A)).toThrow(EmptyRouteError);
  });
});

describe('operator rules: apply / undo of crdName entries', () => {
  const refs = [{ static: { url: 'http://s' } }, both('vm-a', NS, 'vm-b', 'vm-c'), named('vm-a'), both('vm-a', NS, 'vm-a', 'vm-c'), sel('vm-c', 'vm-a')];
  const r = computeRemoval(snap(refs), A);

  test('remove → restore is the identity; both are idempotent; inputs are not mutated', () => {
    const copy = clone(refs);
    const out = applyRemoval(refs, r);
    expect(out).toEqual([{ static: { url: 'http://s' } }, both('', '', 'vm-b', 'vm-c'), both('', '', 'vm-c'), sel('vm-c')]);
    expect(routeReferencesCluster(out, A)).toBe(false);
    expect(applyRemoval(out, r)).toEqual(out);
    expect(undoRemoval(out, r)).toEqual(refs);
    expect(undoRemoval(undoRemoval(out, r), r)).toEqual(refs);
    expect(refs).toEqual(copy);
  });
  test('user edits in between are kept: an object added to the emptied targetRef, a targetRef appended', () => {
    const user = clone(applyRemoval(refs, r));
    ((user[1]!.crd as JsonObject).objects as JsonObject[]).push({ name: 'vm-d', namespace: NS });
    user.push({ static: { url: 'http://new' } });
    const back = undoRemoval(user, r);
    expect(back[1]).toEqual(both('vm-a', NS, 'vm-b', 'vm-c', 'vm-d'));
    expect(back.at(-1)).toEqual({ static: { url: 'http://new' } });
    expect(routeReferencesCluster(back, A)).toBe(true);
    expect(undoRemoval(back, r)).toEqual(back);
  });
  test('finds an emptied targetRef the user moved', () => {
    const out = applyRemoval([both('vm-a', NS, 'vm-b')], computeRemoval(snap([both('vm-a', NS, 'vm-b')]), A));
    const rr = computeRemoval(snap([both('vm-a', NS, 'vm-b')]), A);
    const back = undoRemoval([{ static: { url: 'http://first' } }, ...out], rr);
    expect(back).toEqual([{ static: { url: 'http://first' } }, both('vm-a', NS, 'vm-b')]);
  });
  test('the user named something else there meanwhile: kept, and the zone comes back in a targetRef of its own', () => {
    const rr = computeRemoval(snap([both('vm-a', NS, 'vm-b')]), A);
    const back = undoRemoval([both('vm-z', NS, 'vm-b')], rr);
    expect(back).toEqual([both('vm-a', NS), both('vm-z', NS, 'vm-b')]);
    expect(undoRemoval(back, rr)).toEqual(back);
  });
  test('the user deleted the emptied targetRef: the zone comes back in one of its own', () => {
    const rr = computeRemoval(snap([both('vm-a', NS, 'vm-a', 'vm-b')]), A);
    expect(undoRemoval([], rr)).toEqual([both('vm-a', NS, 'vm-a')]);
  });
  test('a user who already put the name back: nothing added twice', () => {
    const rr = computeRemoval(snap([both('vm-a', NS, 'vm-b')]), A);
    expect(undoRemoval([both('vm-a', NS, 'vm-b')], rr)).toEqual([both('vm-a', NS, 'vm-b')]);
  });

  test('property: undo(apply(x)) == x, the zone is out after apply, user appends survive (name+objects shapes included)', () => {
    const names = ['vm-a', 'vm-b', 'vm-c'];
    const nss = [NS, '', 'other'];
    const entry = fc.record({ name: fc.constantFrom(...names), namespace: fc.constantFrom(...nss) });
    const targetRef = fc.oneof(
      fc.constantFrom(...names).map(named),
      fc.uniqueArray(fc.constantFrom(...names), { minLength: 1, maxLength: 3 }).map((n) => sel(...n)),
      // name+objects, names and namespaces of every kind (empty, other namespace) included
      fc
        .tuple(fc.constantFrom(...names, ''), fc.constantFrom(...nss), fc.array(entry, { maxLength: 3 }))
        .map(([name, namespace, objects]) => ({ crd: { kind: 'VMCluster/vmselect', name, namespace, objects } }) as JsonObject),
      fc.webUrl().map((url) => ({ static: { url } }) as JsonObject),
    );
    assertProperty(
      fc.property(fc.array(targetRef, { maxLength: 6 }), fc.array(fc.webUrl(), { maxLength: 2 }), (trs, extra) => {
        const removal = computeRemoval(snap(trs), A);
        const out = applyRemoval(trs, removal);
        if (routeReferencesCluster(out, A)) return false;
        if (JSON.stringify(applyRemoval(out, removal)) !== JSON.stringify(out)) return false;
        // every other cluster that was routed to still is
        for (const other of [B, { name: 'vm-c', namespace: NS }]) {
          if (routeReferencesCluster(trs, other) && !routeReferencesCluster(out, other)) return false;
        }
        if (JSON.stringify(undoRemoval(out, removal)) !== JSON.stringify(trs)) return false;
        const withUser = [...out, ...extra.map((url) => ({ static: { url } }) as JsonObject)];
        const back = undoRemoval(withUser, removal);
        if (JSON.stringify(undoRemoval(back, removal)) !== JSON.stringify(back)) return false;
        return (
          extra.every((url) => back.some((t) => JSON.stringify(t) === JSON.stringify({ static: { url } }))) &&
          routeReferencesCluster(back, A) === routeReferencesCluster(trs, A)
        );
      }),
    );
  });
});
