// The chaos campaign's plan of faults (test/infra/chaos/plan.ts): replayable from its seed, every kind of
// kill moment present, restart delays and infrastructure faults within their bounds; a moment that
// did not come within its wait owed to the next kills.
import { aimKill, MOMENT_WAIT_MS, owedAfter, partSeeds, planRollout, type KillMoment } from '../infra/chaos/plan';

const opts = { kills: 20, infra: ['restart-temporal', 'restart-apiserver'] as const, cancel: false, zoneTimeout: false };

test('the same seed gives the same plan; another seed another one', () => {
  expect(planRollout(42, { ...opts, infra: [...opts.infra] })).toEqual(planRollout(42, { ...opts, infra: [...opts.infra] }));
  expect(planRollout(43, { ...opts, infra: [...opts.infra] }).kills).not.toEqual(planRollout(42, { ...opts, infra: [...opts.infra] }).kills);
});

test('every kill moment is planned, delays and infrastructure faults stay in bounds', () => {
  for (let seed = 1; seed <= 50; seed++) {
    const plan = planRollout(seed, { ...opts, infra: [...opts.infra], restartAfterMs: [1000, 5000] });
    expect(plan.kills).toHaveLength(20);
    expect(new Set(plan.kills.map((k) => k.moment))).toEqual(new Set(['after-route-edit', 'queue-wait', 'timer']));
    for (const k of plan.kills) {
      expect(k.restartAfterMs).toBeGreaterThanOrEqual(1000);
      expect(k.restartAfterMs).toBeLessThanOrEqual(5000);
    }
    expect(plan.infra.map((f) => f.fault)).toEqual(['restart-temporal', 'restart-apiserver']);
    for (const f of plan.infra) expect(f.afterKill).toBeLessThan(20);
  }
});

test('a moment that did not come is owed: the next kills aim at it, and the last ones wait for it as long as it takes', () => {
  // 3 kills, as the short campaign: the queue wait is not there yet at the second kill.
  let owed: KillMoment[] = [];
  const landed = new Set<KillMoment>();
  const kill = (planned: KillMoment, left: number, comes: boolean) => {
    const aim = aimKill(planned, owed, left);
    const hit = comes || aim.moment === 'timer' ? aim.moment : 'timer';
    owed = owedAfter(owed, aim.moment, hit, landed);
    landed.add(hit);
    return { aim, hit };
  };
  expect(kill('after-route-edit', 3, true)).toEqual({ aim: { moment: 'after-route-edit', waitMs: MOMENT_WAIT_MS }, hit: 'after-route-edit' });
  expect(kill('queue-wait', 2, false)).toEqual({ aim: { moment: 'queue-wait', waitMs: MOMENT_WAIT_MS }, hit: 'timer' });
  expect(owed).toEqual(['queue-wait']);
  // The plan's third kill is a timer, but the queue wait is owed and this is the last kill: no bound.
  expect(kill('timer', 1, true)).toEqual({ aim: { moment: 'queue-wait' }, hit: 'queue-wait' });
  expect(owed).toEqual([]);
  expect(landed).toEqual(new Set(['after-route-edit', 'queue-wait', 'timer']));
});

test('a drawn moment already landed is not owed when it does not come again', () => {
  expect(owedAfter([], 'queue-wait', 'timer', new Set(['queue-wait']))).toEqual([]);
  expect(owedAfter(['after-route-edit'], 'after-route-edit', 'timer', new Set())).toEqual(['after-route-edit']);
  expect(aimKill('timer', [], 5)).toEqual({ moment: 'timer' });
});

test('the parts of a campaign get distinct seeds, the same on every run', () => {
  const s = partSeeds(1201, 2);
  expect(new Set(Object.values(s)).size).toBe(4);
  expect(partSeeds(1201, 2)).toEqual(s);
  expect(partSeeds(1201, 3).plan).not.toBe(s.plan);
});
