import type { JsonObject } from '../../api/types';
import { checkInvariants, type Action } from '../infra/oracle/invariants';
import { computeRemovals } from '../../workflows/routes';
import { applyRemoval, undoRemoval } from '../../api/route-edits';

const NS = 'ns';
const sel = (...names: string[]): JsonObject => ({ crd: { kind: 'VMCluster/vmselect', objects: names.map((name) => ({ name, namespace: NS })) } });
const initialRoutes = { 'VMAuth/auth': [sel('vm-a', 'vm-b', 'vm-c')] };
const opts = { initialRoutes, zoneOf: { 'vm-a': 'a', 'vm-b': 'b', 'vm-c': 'c' }, queueDrainedForMs: 60_000, namespace: NS };
const W = 'vmdc/ns/x/g1-aaaa';

/** Builds a log with a tiny simulator of routes. */
function logBuilder(actor = W, actorGeneration = 1) {
  const log: Action[] = [];
  let seq = 0;
  let routes = JSON.parse(JSON.stringify(initialRoutes)) as Record<string, JsonObject[]>;
  const removals = new Map<string, ReturnType<typeof computeRemovals>>();
  const push = (a: object, who = actor, g = actorGeneration) => log.push({ ...a, seq: ++seq, actor: who, actorGeneration: g } as Action);
  /** `leaving`: the zone whose leaving it announces (phase LeavingReads, its route edit next). */
  const status = (out: string[], who = actor, leaving?: string) =>
    push(
      {
        type: 'status',
        written: true,
        status: { zonesOutOfRotation: out, zones: out.map((z) => ({ name: z, phase: z === leaving ? 'LeavingReads' : 'Upgrading', message: 'out' })) },
      },
      who,
    );
  const edit = (vm: string, direction: 'remove' | 'restore', who = actor) => {
    const rm =
      direction === 'remove'
        ? computeRemovals([{ route: { kind: 'VMAuth', name: 'auth' }, targetRefs: routes['VMAuth/auth']! }], { name: vm, namespace: NS })
        : removals.get(vm)!;
    removals.set(vm, rm);
    const before = routes['VMAuth/auth']!;
    const after = direction === 'remove' ? applyRemoval(before, rm[0]!) : undoRemoval(before, rm[0]!);
    push({ type: 'routes', direction, vmcluster: vm, removals: rm, before: { 'VMAuth/auth': before }, after: { 'VMAuth/auth': after } }, who);
    routes = { 'VMAuth/auth': after };
  };
  const zone = (vm: string, z: string, o: { skipDrain?: boolean; skipOperational?: boolean; noStatus?: boolean } = {}) => {
    if (!o.noStatus) status([z], actor, z);
    edit(vm, 'remove');
    push({ type: 'patch', kind: 'VMCluster', name: vm, generation: 5, changed: true });
    if (!o.skipOperational) push({ type: 'operational', kind: 'VMCluster', name: vm, generation: 5 });
    if (!o.skipDrain) push({ type: 'drained', vmcluster: vm, emptyForMs: 60_000 });
    edit(vm, 'restore');
    status([]);
  };
  return { log, push, status, edit, zone };
}

test('a clean rollout has no breach', () => {
  const b = logBuilder();
  b.push({ type: 'takeOver', stale: false });
  b.zone('vm-a', 'a');
  b.zone('vm-b', 'b');
  expect(checkInvariants(b.log, { ...opts, final: true })).toEqual([]);
});

test('1: two zones out at once', () => {
  const b = logBuilder();
  b.push({ type: 'takeOver', stale: false });
  b.status(['a', 'b']);
  b.edit('vm-a', 'remove');
  b.edit('vm-b', 'remove');
  expect(checkInvariants(b.log, opts).map((x) => x.invariant)).toContain(1);
});

test('2: rejoin before drained / before operational; patch while in rotation', () => {
  for (const o of [{ skipDrain: true }, { skipOperational: true }]) {
    const b = logBuilder();
    b.push({ type: 'takeOver', stale: false });
    b.zone('vm-a', 'a', o);
    expect(checkInvariants(b.log, opts).map((x) => x.invariant)).toEqual([2]);
  }
  const b = logBuilder();
  b.push({ type: 'takeOver', stale: false });
  b.push({ type: 'patch', kind: 'VMCluster', name: 'vm-a', generation: 2, changed: true });
  expect(checkInvariants(b.log, opts).map((x) => x.invariant)).toEqual([2]);
});

test('3: acting without taking over, or after another workflow took over', () => {
  const b = logBuilder();
  b.status([]);
  expect(checkInvariants(b.log, opts).map((x) => x.invariant)).toEqual([3]);
  const c = logBuilder();
  c.push({ type: 'takeOver', stale: false });
  c.push({ type: 'takeOver', stale: false }, 'vmdc/ns/x/g2-aaaa', 2);
  c.status([]);
  expect(checkInvariants(c.log, opts).map((x) => x.invariant)).toEqual([3]);
});

test('4: a restore that does not put back what was removed, or loses a user edit', () => {
  const b = logBuilder();
  b.push({ type: 'takeOver', stale: false });
  b.status(['a']);
  b.edit('vm-a', 'remove');
  const before = b.log.at(-1)! as Extract<Action, { type: 'routes' }>;
  b.push({
    type: 'routes',
    direction: 'restore',
    vmcluster: 'vm-a',
    removals: before.removals,
    before: before.after,
    after: { 'VMAuth/auth': [sel('vm-b', 'vm-c', 'vm-a')] },
  });
  const inv = checkInvariants(b.log, { ...opts, final: true }).map((x) => x.invariant);
  expect(inv).toContain(4);
});

test('5: a zone out of rotation that the status does not report', () => {
  const b = logBuilder();
  b.push({ type: 'takeOver', stale: false });
  b.zone('vm-a', 'a', { noStatus: true, skipDrain: false });
  expect(checkInvariants(b.log, opts).map((x) => x.invariant)).toContain(5);
  const c = logBuilder();
  c.push({ type: 'takeOver', stale: false });
  c.status(['a']);
  c.edit('vm-a', 'remove');
  c.status([]); // hides it
  expect(checkInvariants(c.log, { ...opts, final: true }).map((x) => x.invariant)).toContain(5);
});

test('5: the status names exactly the zones out at every observation, not only at route edits', () => {
  /** Zone a out and patched, then a status write mid-upgrade (no route edit near it): `out`. */
  const midUpgrade = (out: string[]) => {
    const b = logBuilder();
    b.push({ type: 'takeOver', stale: false });
    b.status(['a'], W, 'a');
    b.edit('vm-a', 'remove');
    b.push({ type: 'patch', kind: 'VMCluster', name: 'vm-a', generation: 5, changed: true });
    b.status(out);
    b.push({ type: 'operational', kind: 'VMCluster', name: 'vm-a', generation: 5 });
    return checkInvariants(b.log, opts).map((x) => [x.invariant, x.seq]);
  };
  expect(midUpgrade(['a'])).toEqual([]);
  // Negative controls: an extra zone (every route has b), a missing one, each reported once, at that write.
  const statusWrite = 5;
  expect(midUpgrade(['a', 'b'])).toEqual([[5, statusWrite]]);
  expect(midUpgrade([])).toEqual([[5, statusWrite]]);
  // The announcement comes first: named before its edit only while LeavingReads.
  const b = logBuilder();
  b.push({ type: 'takeOver', stale: false });
  b.status(['a']);
  b.edit('vm-a', 'remove');
  expect(checkInvariants(b.log, opts).map((x) => [x.invariant, x.seq])).toEqual([[5, 2]]);
  // A zone back in the routes may stay named until the next status write, not after it.
  const c = logBuilder();
  c.push({ type: 'takeOver', stale: false });
  c.zone('vm-a', 'a');
  c.status(['a']);
  expect(checkInvariants(c.log, opts).map((x) => x.invariant)).toEqual([5]);
});
