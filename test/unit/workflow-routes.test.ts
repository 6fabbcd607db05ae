import fc from 'fast-check';
import { assertProperty } from '../support/property';
import type { JsonObject } from '../../api/types';
import type { RouteSnapshot } from '../../workflows/activity-types';
import {
  EmptyRouteError,
  RouteShapeError,
  applyRemoval,
  computeRemoval,
  computeRemovals,
  hasReadBackend,
  routeReferencesCluster,
  undoRemoval,
} from '../../workflows/routes';

const NS = 'ns';
const A = { name: 'vm-a', namespace: NS };
const objs = (...names: string[]) => names.map((name) => ({ name, namespace: NS }));
const sel = (...names: string[]): JsonObject => ({ crd: { kind: 'VMCluster/vmselect', objects: objs(...names) }, paths: ['/select/.*'] });
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
    expect(r.removed.map((x) => [x.type, x.index])).toEqual([['targetRef', 1], ['targetRef', 2]]);
    expect(applyRemoval(refs, r)).toEqual([{ static: { url: 'http://x' } }, sel('vm-b')]);
  });
  test('namespace-less entries name the cluster in its own namespace; other namespaces do not', () => {
    const refs: JsonObject[] = [{ crd: { kind: 'VMCluster/vmselect', name: 'vm-a' } }, { crd: { kind: 'VMCluster/vmselect', name: 'vm-a', namespace: 'other' } }];
    expect(computeRemoval(snap(refs), A).removed.map((x) => x.index)).toEqual([0]);
  });
  test('ignores other kinds', () => {
    const refs = [{ crd: { kind: 'VMCluster/vminsert', name: 'vm-a', namespace: NS } }, sel('vm-b')];
    expect(computeRemoval(snap(refs), A).removed).toEqual([]);
  });
  test('crd.name is the zone while crd.objects lists others: RouteShapeError', () => {
    const refs = [{ crd: { kind: 'VMCluster/vmselect', name: 'vm-a', namespace: NS, objects: objs('vm-b') } }];
    expect(() => computeRemoval(snap(refs), A)).toThrow(RouteShapeError);
  });
});

describe('computeRemovals', () => {
  test('refuses when any route would be left with no read backend, naming it', () => {
    const snaps = [snap([sel('vm-a', 'vm-b')], 'auth'), { route: { kind: 'VMUser' as const, name: 'reads-a' }, targetRefs: [named('vm-a'), { crd: { kind: 'VMCluster/vminsert', name: 'vm-b' } }] }];
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
        return extra.every((url) => back.some((t) => JSON.stringify(t) === JSON.stringify({ static: { url } }))) && routeReferencesCluster(back, A) === routeReferencesCluster(trs, A);
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
  expect(hasReadBackend([{ crd: { kind: 'VMSingle', name: 'x' } }])).toBe(true);
});
