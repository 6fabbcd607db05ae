// Which server-side apply conflicts one VMDistributedCluster's apply takes by force: its own route
// edits, a route edit of another one only once no zone of it is recorded out of reads on the object.
import type { OutOfRotationRecord } from '../../api/route-records';
import { conflictVerdict, type ConflictContext } from '../../activities/objects/conflict-verdict';
import { FIELD_MANAGER, RELEASED_FIELD_MANAGER, routeEditor, routeFieldManager, UNATTRIBUTED_ROUTE_EDIT } from '../../kube/field-managers';

const A = '0f0e0d0c-1111-4222-8333-444455556666';
const B = 'b0b0b0b0-aaaa-4bbb-8ccc-dddddddddddd';
const ROUTES = '.spec.unauthorizedUserAccessSpec.targetRefs';

const recordOf = (uid: string, zone: string): OutOfRotationRecord => ({
  vmdc: { namespace: 'ns', name: uid === A ? 'a' : 'b', uid },
  route: { kind: 'VMAuth', name: 'global', uid: 'uid-global' },
  zone,
  workflowId: `wf-${zone}`,
  generation: 1,
  vmcluster: { namespace: 'ns', name: `vm-${zone}` },
  removed: [],
  since: '2026-12-04T00:00:00Z',
});

const ctx = (records: OutOfRotationRecord[], extra: Partial<ConflictContext> = {}): ConflictContext => ({
  uid: A,
  taken: [],
  drifted: () => false,
  records: () => records,
  ...extra,
});
const verdict = (manager: string, records: OutOfRotationRecord[], extra: Partial<ConflictContext> = {}) =>
  conflictVerdict({ manager, field: ROUTES }, ctx(records, extra));

describe('route field managers', () => {
  it('one per VMDistributedCluster, named after its whole uid, within the 128 characters Kubernetes allows', () => {
    expect(routeFieldManager(A)).toBe(`vmrollout-routes-${A}`);
    expect(routeFieldManager(A)).not.toBe(routeFieldManager(B));
    expect(routeFieldManager(A).length).toBeLessThanOrEqual(128);
  });

  it('a conflicting manager names whose route edit it was: a uid, the shared name of builds before 1.0.0-rc.1 (unattributed), or none', () => {
    expect(routeEditor(routeFieldManager(B))).toBe(B);
    expect(routeEditor(FIELD_MANAGER)).toBe(UNATTRIBUTED_ROUTE_EDIT);
    expect(routeEditor(RELEASED_FIELD_MANAGER)).toBeUndefined();
    expect(routeEditor('kubectl-edit')).toBeUndefined();
  });
});

describe('conflictVerdict', () => {
  it('its own route edits are its own, even while its own zone is recorded out (its workflow applies no route object then)', () => {
    expect(verdict(routeFieldManager(A), [recordOf(A, 'az-a')])).toEqual({ verdict: 'ours' });
    expect(verdict(routeFieldManager(A), [])).toEqual({ verdict: 'ours' });
  });

  it('another VMDistributedCluster holding a zone out of reads on the object: held, naming its records only', () => {
    const held = recordOf(B, 'az-b');
    expect(verdict(routeFieldManager(B), [recordOf(A, 'az-a'), held])).toEqual({ verdict: 'held', by: [held] });
  });

  it('held wins over drift: the list another rollout changed is not a field someone changed behind our back', () => {
    const held = recordOf(B, 'az-b');
    expect(verdict(routeFieldManager(B), [held], { drifted: () => true })).toEqual({ verdict: 'held', by: [held] });
  });

  it("another VMDistributedCluster's route edit that is over (no zone of it recorded on the object) is taken", () => {
    expect(verdict(routeFieldManager(B), [])).toEqual({ verdict: 'ours' });
    // Records of a third VMDistributedCluster do not hold B's edit.
    expect(verdict(routeFieldManager(B), [recordOf('c0c0c0c0-0000-4000-8000-000000000000', 'az-c')])).toEqual({ verdict: 'ours' });
  });

  it('an unattributed route edit (the shared name of builds before 1.0.0-rc.1) is held by any other VMDistributedCluster recorded there, taken otherwise', () => {
    const held = recordOf(B, 'az-b');
    expect(verdict(FIELD_MANAGER, [recordOf(A, 'az-a'), held])).toEqual({ verdict: 'held', by: [held] });
    expect(verdict(FIELD_MANAGER, [recordOf(A, 'az-a')])).toEqual({ verdict: 'ours' });
  });

  it('records are read only for a route edit (an object whose annotation cannot be read fails only then)', () => {
    const unreadable = () => {
      throw new Error('unreadable');
    };
    expect(conflictVerdict({ manager: 'helm', field: '.spec.x' }, ctx([], { records: unreadable }))).toEqual({ verdict: 'foreign' });
    expect(() => verdict(routeFieldManager(B), [], { records: unreadable })).toThrow('unreadable');
  });

  it('the released manager, fields it takes, and drift are its own; any other manager is foreign', () => {
    expect(conflictVerdict({ manager: RELEASED_FIELD_MANAGER, field: '.spec.x' }, ctx([]))).toEqual({ verdict: 'ours' });
    expect(conflictVerdict({ manager: 'helm', field: '.spec.clusterVersion' }, ctx([], { taken: ['.spec.clusterVersion'] }))).toEqual({ verdict: 'ours' });
    expect(conflictVerdict({ manager: 'kubectl-edit', field: '.spec.x' }, ctx([], { drifted: (f) => f === '.spec.x' }))).toEqual({ verdict: 'ours' });
    expect(conflictVerdict({ manager: 'kubectl-edit', field: '.spec.x' }, ctx([]))).toEqual({ verdict: 'foreign' });
  });
});
