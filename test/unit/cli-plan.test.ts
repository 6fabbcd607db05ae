// `kubectl vmdc plan` (cli/rollout-plan.ts, cli/render-plan.ts): the order the workflow would use
// (its own planZoneOrder), the zones it would skip, the route removals of the others, where gates and
// pauses wait, the predicted duration, and route objects that cannot be parsed said, not thrown.
import { parseCommand, UsageError } from '../../cli/args';
import { VERB_EXIT_CODES } from '../../cli/exit-codes';
import { renderDocument } from '../../cli/output';
import { durationText, renderPlan } from '../../cli/render-plan';
import { planDocument, planRollout, type PlanInput, type RouteRead, type ZoneFinding } from '../../cli/rollout-plan';
import type { Gate, JsonObject } from '../../api/types';
import { planZoneOrder } from '../../workflows/plan';
import { normalizedSpec, validRawSpec } from './api-helpers';

const NS = 'team-a';
const vmselect = (objects: string[]): JsonObject => ({ crd: { kind: 'VMCluster/vmselect', objects: objects.map((name) => ({ name, namespace: NS })) } });

/** A VMCluster as read, and as the dry run would leave it: `changes` moves the generation. */
function cluster(name: string, o: { changes?: boolean; operational?: boolean } = {}): ZoneFinding {
  const current = {
    metadata: { name, namespace: NS, generation: 4 },
    status: { updateStatus: o.operational === false ? 'expanding' : 'operational', observedGeneration: 4 },
  };
  const after = { ...current, metadata: { ...current.metadata, generation: o.changes === false ? 4 : 5 } };
  return { zone: name.replace(/^vm-/, ''), vmcluster: name, current, after };
}

const routes = (): RouteRead[] => [
  {
    route: { kind: 'VMAuth', name: 'vm-global' },
    obj: { spec: { unauthorizedUserAccessSpec: { targetRefs: [vmselect(['vm-az-a', 'vm-az-b', 'vm-az-c'])] } } },
  },
  { route: { kind: 'VMUser', name: 'reads-az-a' }, obj: { spec: { targetRefs: [vmselect(['vm-az-a']), vmselect(['vm-az-b'])] } } },
  { route: { kind: 'VMUser', name: 'reads-az-b' }, obj: { spec: { targetRefs: [vmselect(['vm-az-b', 'vm-az-c'])] } } },
];

function input(o: { strategy?: Record<string, unknown>; zones?: ZoneFinding[]; routes?: RouteRead[]; status?: unknown; generation?: number } = {}): PlanInput {
  const raw = validRawSpec() as { strategy: Record<string, unknown> };
  raw.strategy = { ...raw.strategy, ...o.strategy };
  return {
    object: { namespace: NS, name: 'dc', uid: 'u-1', generation: o.generation ?? 7 },
    spec: normalizedSpec(raw),
    zones: o.zones ?? [cluster('vm-az-a'), cluster('vm-az-b'), cluster('vm-az-c')],
    routes: o.routes ?? routes(),
    status: o.status,
  };
}

describe('the order', () => {
  it("is the workflow's planZoneOrder, seeded by this generation's uid/generation", () => {
    const names = ['az-a', 'az-b', 'az-c'];
    // Generations whose shuffles differ, so a plan seeded by anything else would show another order.
    const orders = [1, 2, 3, 4, 5, 6, 7, 8].map((g) => ({ g, order: planZoneOrder(names, 'Shuffle', `u-1/${g}`) }));
    const distinct = new Set(orders.map((x) => x.order.join()));
    expect(distinct.size).toBeGreaterThan(1);
    for (const { g, order } of orders) {
      const p = planRollout(input({ strategy: { order: 'Shuffle' }, generation: g }));
      expect(p.order).toEqual({ mode: 'Shuffle', seed: `u-1/${g}`, zones: order });
      expect(p.zones.map((z) => z.zone)).toEqual(order);
    }
    expect(planRollout(input()).order.zones).toEqual(names);
  });
});

describe('each zone', () => {
  it('skipped when the dry run leaves its generation alone and it is operational; else upgraded, or failing when missing', () => {
    const p = planRollout(
      input({
        zones: [cluster('vm-az-a', { changes: false }), cluster('vm-az-b', { changes: false, operational: false }), { zone: 'az-c', vmcluster: 'vm-az-c' }],
      }),
    );
    expect(p.zones.map((z) => [z.zone, z.would])).toEqual([
      ['az-a', 'skip'],
      ['az-b', 'upgrade'],
      ['az-c', 'fail'],
    ]);
    expect(p.zones[1]!.reason).toMatch(/not operational \(updateStatus expanding/);
    // Negative control: a dry run that moves the generation is no skip.
    expect(planRollout(input()).zones[0]!.would).toBe('upgrade');
  });

  it('the route removals of each zone upgraded, none for one skipped', () => {
    const p = planRollout(input({ zones: [cluster('vm-az-a'), cluster('vm-az-b', { changes: false }), cluster('vm-az-c')] }));
    expect(p.zones.map((z) => [z.zone, z.removals.map((r) => [`${r.route.kind}/${r.route.name}`, r.removed.map((x) => x.ref)])])).toEqual([
      [
        'az-a',
        [
          ['VMAuth/vm-global', ['targetRefs[0].crd.objects[0]']],
          ['VMUser/reads-az-a', ['targetRefs[0]']],
        ],
      ],
      ['az-b', []],
      [
        'az-c',
        [
          ['VMAuth/vm-global', ['targetRefs[0].crd.objects[2]']],
          ['VMUser/reads-az-b', ['targetRefs[0].crd.objects[1]']],
        ],
      ],
    ]);
  });

  it('a removal that would leave a route with no backend: the zone would fail there (the workflow refuses it)', () => {
    const only = routes();
    only[1] = { route: { kind: 'VMUser', name: 'reads-az-a' }, obj: { spec: { targetRefs: [vmselect(['vm-az-a'])] } } };
    const p = planRollout(input({ routes: only }));
    expect(p.zones[0]).toMatchObject({ would: 'fail', reason: expect.stringMatching(/VMUser reads-az-a with no backend/) });
    expect(p.zones[1]!.would).toBe('upgrade');
  });
});

describe('zones a trafficMode holds out of reads', () => {
  const heldInput = (modes: Record<number, string>, o: Parameters<typeof input>[0] = {}): PlanInput => {
    const i = input(o);
    return { ...i, spec: { ...i.spec, zones: i.spec.zones.map((z, n) => (modes[n] ? { ...z, trafficMode: modes[n] as never } : z)) } };
  };

  it('hold: taken out of every route (write-only: upgraded there; maintenance: left alone), no gate, never the canary', () => {
    const p = planRollout(heldInput({ 0: 'write-only', 2: 'maintenance' }, { strategy: { gates: ['BeforeEachZone'], canary: {} } }));
    expect(p.zones.map((z) => [z.zone, z.would, z.gates, z.canaryBakeMs !== undefined])).toEqual([
      ['az-a', 'hold', [], false],
      ['az-b', 'upgrade', ['BeforeEachZone'], true],
      ['az-c', 'hold', [], false],
    ]);
    expect(p.zones[0]!.reason).toMatch(/^trafficMode write-only: taken out of reads for good; upgraded out of reads/);
    expect(p.zones[0]!.removals.map((r) => `${r.route.kind}/${r.route.name}`)).toEqual(['VMAuth/vm-global', 'VMUser/reads-az-a']);
    expect(p.zones[2]!.reason).toBe('trafficMode maintenance: taken out of reads for good; its VMCluster is left alone');
    // Negative control: read-write, the same zone is upgraded and rejoins like any other.
    expect(planRollout(input()).zones[0]!.would).toBe('upgrade');
  });

  it('a write-only zone up to date is only taken out; one out of every route already stays out', () => {
    const out = routes().map((r) =>
      r.route.kind === 'VMAuth' ? { ...r, obj: { spec: { unauthorizedUserAccessSpec: { targetRefs: [vmselect(['vm-az-b', 'vm-az-c'])] } } } } : r,
    );
    out[1] = { route: { kind: 'VMUser', name: 'reads-az-a' }, obj: { spec: { targetRefs: [vmselect(['vm-az-b'])] } } };
    const p = planRollout(
      heldInput({ 0: 'write-only' }, { zones: [cluster('vm-az-a', { changes: false }), cluster('vm-az-b'), cluster('vm-az-c')], routes: out }),
    );
    expect(p.zones[0]).toMatchObject({
      would: 'hold',
      reason: 'trafficMode write-only: out of reads already; not upgraded: already at the desired spec',
      removals: [],
    });
  });
});

describe('route objects that cannot be read or parsed', () => {
  it.each<[string, unknown]>([
    ['a string', 'not json'],
    ['null', null],
    ['a list', [1, 2]],
    ['a spec that is no object', { spec: 'x' }],
    ['targetRefs that are no list', { spec: { unauthorizedUserAccessSpec: { targetRefs: { a: 1 } } } }],
  ])('a VMAuth that is %s: said in the plan, not thrown; the other routes still planned', (_, obj) => {
    const rs = routes();
    rs[0] = { route: { kind: 'VMAuth', name: 'vm-global' }, obj };
    const p = planRollout(input({ routes: rs }));
    expect(p.routes[0]).toEqual({ route: { kind: 'VMAuth', name: 'vm-global' }, readable: false, reason: expect.stringMatching(/^could not be parsed: /) });
    expect(p.zones[0]!.unknownRoutes).toEqual([{ route: { kind: 'VMAuth', name: 'vm-global' }, reason: p.routes[0]!.reason }]);
    expect(p.zones[0]!.removals.map((r) => r.route.name)).toEqual(['reads-az-a']);
    expect(renderPlan(p).join('\n')).toContain('VMAuth vm-global unknown (could not be parsed: ');
  });

  it('one not found or unreadable (403) says so', () => {
    const rs = routes();
    rs[1] = { route: { kind: 'VMUser', name: 'reads-az-a' }, missing: true };
    rs[2] = { route: { kind: 'VMUser', name: 'reads-az-b' }, error: 'HTTP 403 forbidden' };
    const p = planRollout(input({ routes: rs }));
    expect(p.routes.map((r) => [r.route.name, r.readable, r.reason])).toEqual([
      ['vm-global', true, undefined],
      ['reads-az-a', false, expect.stringMatching(/^not found: the rollout would fail/)],
      ['reads-az-b', false, 'could not be read: HTTP 403 forbidden'],
    ]);
  });
});

describe('where it would wait', () => {
  const gated = (gates: Gate[], zones: ZoneFinding[]) =>
    planRollout(input({ strategy: { gates, pauseBetweenZones: '2m' }, zones })).zones.map((z) => [z.zone, z.gates, z.pauseAfterMs]);

  it('with the first zone skipped, BeforeFirstZone holds before the first zone to upgrade, AfterFirstZone after it', () => {
    expect(gated(['BeforeFirstZone', 'AfterFirstZone'], [cluster('vm-az-a', { changes: false }), cluster('vm-az-b'), cluster('vm-az-c')])).toEqual([
      ['az-a', [], 0],
      ['az-b', ['BeforeFirstZone'], 120_000],
      ['az-c', ['AfterFirstZone'], 0],
    ]);
    // Negative control: nothing skipped, the gates move to the first two zones.
    expect(gated(['BeforeFirstZone', 'AfterFirstZone'], [cluster('vm-az-a'), cluster('vm-az-b'), cluster('vm-az-c')])).toEqual([
      ['az-a', ['BeforeFirstZone'], 120_000],
      ['az-b', ['AfterFirstZone'], 120_000],
      ['az-c', [], 0],
    ]);
  });

  it('the canary: the zone named (put first), or the first zone to upgrade; skipped zones are not the canary', () => {
    const canaries = (canary: Record<string, unknown>, zones: ZoneFinding[]) =>
      planRollout(input({ strategy: { order: 'Declared', canary }, zones })).zones.map((z) => [z.zone, z.canaryBakeMs]);
    const all = [cluster('vm-az-a'), cluster('vm-az-b'), cluster('vm-az-c')];
    expect(canaries({ zone: 'az-c', bake: '10m' }, all)).toEqual([
      ['az-c', 600_000],
      ['az-a', undefined],
      ['az-b', undefined],
    ]);
    expect(canaries({}, [cluster('vm-az-a', { changes: false }), cluster('vm-az-b'), cluster('vm-az-c')])).toEqual([
      ['az-a', undefined],
      ['az-b', 300_000],
      ['az-c', undefined],
    ]);
    const text = renderPlan(planRollout(input({ strategy: { order: 'Declared', canary: { bake: '10m' } }, zones: all })));
    expect(text).toContain('     canary: analysed for 10m00s, still out of reads, against a zone not yet upgraded, before it');
  });

  it('BeforeEachZone before every zone upgraded, none before one skipped', () => {
    expect(gated(['BeforeEachZone'], [cluster('vm-az-a'), cluster('vm-az-b', { changes: false }), cluster('vm-az-c')]).map((z) => z[1])).toEqual([
      ['BeforeEachZone'],
      [],
      ['BeforeEachZone'],
    ]);
  });
});

describe('the predicted duration', () => {
  const at = (m: number) => new Date(Date.UTC(2026, 11, 1, 10, m)).toISOString();
  const status = {
    zones: [
      { name: 'az-a', phase: 'Done', startedAt: at(0), finishedAt: at(4) },
      { name: 'az-b', phase: 'Done', startedAt: at(4), finishedAt: at(10) },
      { name: 'az-c', phase: 'Skipped', startedAt: at(10), finishedAt: at(50) },
      { name: 'az-d', phase: 'Done', startedAt: 'yesterday', finishedAt: at(11) },
      'hostile',
    ],
  };

  it("the last rollout's mean upgraded zone × the zones to upgrade, + the pauses between them, + the gates' waits", () => {
    const zones = [cluster('vm-az-a', { changes: false }), cluster('vm-az-b'), cluster('vm-az-c')];
    const p = planRollout(input({ strategy: { pauseBetweenZones: '1m', gates: ['AfterFirstZone'] }, zones, status }));
    expect(p.duration).toEqual({
      predictedMs: 2 * 5 * 60_000 + 60_000,
      meanZoneMs: 5 * 60_000,
      pastZones: 2,
      zonesToUpgrade: 2,
      pauses: 1,
      pauseBetweenZonesMs: 60_000,
      plusGateWaits: true,
      canaryBakeMs: 0,
    });
    expect(durationText(p.duration)).toBe(
      "about 11m00s (2 zones × 5m00s, the mean of the last rollout's 2 upgraded zones, + 1 × pauseBetweenZones 1m00s) + the gates' waits",
    );
  });

  it("a canary's bake adds to it, once", () => {
    const zones = [cluster('vm-az-a'), cluster('vm-az-b'), cluster('vm-az-c')];
    const p = planRollout(input({ strategy: { canary: { bake: '15m' } }, zones, status }));
    expect([p.duration.predictedMs, p.duration.canaryBakeMs]).toEqual([3 * 5 * 60_000 + 15 * 60_000, 15 * 60_000]);
    expect(durationText(p.duration)).toBe("about 30m00s (3 zones × 5m00s, the mean of the last rollout's 2 upgraded zones, + the canary's bake 15m00s)");
  });

  it('no number without a past rollout to predict from (a status without zones, or none at all)', () => {
    for (const s of [undefined, {}, { zones: [{ name: 'az-a', phase: 'Upgrading', startedAt: at(0) }] }, { zones: 'x' }]) {
      const p = planRollout(input({ status: s }));
      expect([p.duration.predictedMs, p.duration.meanZoneMs]).toEqual([null, null]);
      expect(durationText(p.duration)).toBe('no past rollout to predict from');
    }
  });
});

describe('what it prints', () => {
  it('text: order, each zone with its gate, action, removals and pause, routes, duration; json: one document', () => {
    const p = planRollout(
      input({
        strategy: { gates: ['BeforeFirstZone'], pauseBetweenZones: '2m' },
        zones: [cluster('vm-az-a', { changes: false }), cluster('vm-az-b'), cluster('vm-az-c')],
      }),
    );
    expect(renderPlan(p)).toEqual([
      'Plan for VMDistributedCluster team-a/dc, generation 7 (clusterVersion v1.150.0-cluster)',
      'Order: az-a, az-b, az-c (Declared)',
      '',
      '  1. az-a (VMCluster vm-az-a): skip — already at the desired spec and operational',
      '     ⏸ waits at gate BeforeFirstZone before az-b, for kubectl vmdc promote dc -n team-a',
      '  2. az-b (VMCluster vm-az-b): upgrade — its spec would change (`kubectl vmdc diff` shows how)',
      '     out of reads: VMAuth vm-global targetRefs[0].crd.objects[1]: the entry naming this zone',
      '     out of reads: VMUser reads-az-a targetRefs[1]: the whole targetRef (it routes only here)',
      '     out of reads: VMUser reads-az-b targetRefs[0].crd.objects[0]: the entry naming this zone',
      '     then pauseBetweenZones 2m00s (kubectl vmdc promote ends it early)',
      '  3. az-c (VMCluster vm-az-c): upgrade — its spec would change (`kubectl vmdc diff` shows how)',
      '     out of reads: VMAuth vm-global targetRefs[0].crd.objects[2]: the entry naming this zone',
      '     out of reads: VMUser reads-az-b targetRefs[0].crd.objects[1]: the entry naming this zone',
      '',
      'Routes: VMAuth vm-global, VMUser reads-az-a, VMUser reads-az-b read',
      "Duration: no past rollout to predict from + the gates' waits",
      "Nothing was changed: each zone's VMCluster (or VMSingle) apply was a dry run.",
    ]);
    expect(renderPlan(p).every((l) => [...l].length <= 100)).toBe(true);
    const doc = JSON.parse(renderDocument(planDocument(p), 'json')) as Record<string, unknown>;
    expect(doc).toMatchObject({ verb: 'plan', namespace: NS, name: 'dc', uid: 'u-1', result: 'planned', generation: 7 });
    expect(doc.zones).toEqual(JSON.parse(JSON.stringify(p.zones)));
  });
});

describe('the command line', () => {
  it('plan NAME [-o json|yaml]: -o wide and a missing NAME are usage errors; exit codes 0, 1, 3, 130', () => {
    expect(parseCommand(['plan', 'dc', '-n', NS])).toMatchObject({ verb: 'plan', name: 'dc', output: 'text', kube: { namespace: NS } });
    expect(parseCommand(['plan', 'dc', '-o', 'yaml'])).toMatchObject({ verb: 'plan', output: 'yaml' });
    expect(() => parseCommand(['plan', 'dc', '-o', 'wide'])).toThrow(UsageError);
    expect(() => parseCommand(['plan'])).toThrow(/NAME is required/);
    expect(VERB_EXIT_CODES.plan).toEqual([0, 1, 3, 130]);
  });
});

describe('a VMSingle zone', () => {
  it('is planned by its VMSingle targetRefs and said as a VMSingle; a VMCluster of its name in the routes is not it', () => {
    const raw = validRawSpec() as { zones: Array<Record<string, unknown>>; strategy: Record<string, unknown> } & Record<string, unknown>;
    raw.zones[1] = { name: 'az-b', vmsingle: { name: 'vm-az-b' } };
    raw.singleVersion = 'v1.150.0';
    raw.strategy = { ...raw.strategy, order: 'Declared' };
    const single: JsonObject = { crd: { kind: 'VMSingle', name: 'vm-az-b', namespace: NS } };
    const reads: RouteRead[] = [
      {
        route: { kind: 'VMAuth', name: 'vm-global' },
        obj: { spec: { unauthorizedUserAccessSpec: { targetRefs: [vmselect(['vm-az-a', 'vm-az-b', 'vm-az-c']), single] } } },
      },
    ];
    const p = planRollout({ ...input({ routes: reads }), spec: normalizedSpec(raw) });
    const b = p.zones.find((z) => z.zone === 'az-b')!;
    expect([b.storageKind, b.removals]).toEqual([
      'VMSingle',
      [{ route: { kind: 'VMAuth', name: 'vm-global' }, removed: [expect.objectContaining({ ref: 'targetRefs[1]' })] }],
    ]);
    expect(p.zones.find((z) => z.zone === 'az-a')!.storageKind).toBeUndefined();
    expect(renderPlan(p).join('\n')).toContain('az-b (VMSingle vm-az-b): upgrade');
  });
});
