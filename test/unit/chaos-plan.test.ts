// The chaos campaign's plan of faults (test/chaos/plan.ts): replayable from its seed, every kind of
// kill moment present, restart delays and infrastructure faults within their bounds, only the first
// kill of each moment waiting for it without bound.
import { DRAWN_MOMENT_WAIT_MS, partSeeds, planRollout } from '../chaos/plan';

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

test('the first kill of each moment waits for it as long as the rollout runs; the drawn ones only a few seconds', () => {
  const plan = planRollout(7, { ...opts, infra: [] });
  expect(plan.kills.slice(0, 3).map((k) => [k.moment, k.awaitMomentMs])).toEqual([
    ['after-route-edit', undefined],
    ['queue-wait', undefined],
    ['timer', undefined],
  ]);
  const drawn = plan.kills.slice(3);
  expect(drawn.some((k) => k.moment !== 'timer')).toBe(true);
  for (const k of drawn) expect(k.awaitMomentMs).toBe(k.moment === 'timer' ? undefined : DRAWN_MOMENT_WAIT_MS);
});

test('the parts of a campaign get distinct seeds, the same on every run', () => {
  const s = partSeeds(1201, 2);
  expect(new Set(Object.values(s)).size).toBe(4);
  expect(partSeeds(1201, 2)).toEqual(s);
  expect(partSeeds(1201, 3).plan).not.toBe(s.plan);
});
