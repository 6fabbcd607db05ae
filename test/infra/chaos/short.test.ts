/**
 * The short seeded variant of the chaos campaign (test/infra/chaos/campaign.ts; the full one: `make chaos`):
 * one 3-zone rollout on the real stack while the worker process is SIGKILLed 3 times (right after a
 * route edit, during a queue wait, at a random moment) and restarted 1–2 s later; the Temporal dev
 * server, the trigger and kube-apiserver restart once each; the vmagent pod is not ready for 3 s
 * during a queue wait; 5 % of the worker's and the trigger's API requests (for a minute) and 3 % of
 * vmagent's /metrics pages fail (the full campaign: 20 % of API requests). Each zone is down 12 s
 * while upgraded, longer than the stale threshold (9 s): a zone back in reads before its backlog is
 * delivered shows as a stale read or a hole in the series. Judged from kube-apiserver's audit log,
 * the campaign's own looks at vmagent's queues, the configs rendered for vmauth, the zone restarts
 * and the readers (test/infra/chaos/oracle.ts, whose unit tests hold a negative control per check).
 * About behaviour only: how fast things recover is measured by `make chaos` and reported in
 * docs/reliability.md. Jest project `chaos`, beside the e2e files in `make test` (it judges what
 * happened, not how fast). Replay a failure: CHAOS_SEED=<seed printed> make test-chaos.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { provenance } from '../../../bench/support/provenance';
import { campaignDocument, runCampaign, SHORT_CAMPAIGN, type CampaignReport } from './campaign';
import { REPO_ROOT } from '../../e2e/support';

jest.setTimeout(20 * 60_000);

const SEED = Number(process.env.CHAOS_SEED ?? 20261201);
let report: CampaignReport;

beforeAll(async () => {
  process.stdout.write(`chaos seed ${SEED} (replay: CHAOS_SEED=${SEED})\n`);
  // scripts/jest-project.sh names itself in BENCH_COMMAND; run otherwise, this is how to run the file alone.
  const runInfo = provenance('npx jest test/infra/chaos/short.test.ts --selectProjects chaos --runInBand');
  report = await runCampaign({ ...SHORT_CAMPAIGN, seed: SEED, log: (m) => process.env.E2E_VERBOSE && process.stdout.write(`${m}\n`) });
  // The whole report, for a failure's post-mortem (kills, recovery, faults, every breach) and the figures of docs/reliability.md.
  const what = 'test/infra/chaos/short.test.ts: the short chaos campaign (SHORT_CAMPAIGN of test/infra/chaos/campaign.ts), the report runCampaign returned';
  const out = path.join(REPO_ROOT, '.tmp', 'chaos');
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, `short-${SEED}.json`), JSON.stringify(campaignDocument(what, runInfo, report), null, 2) + '\n');
}, 20 * 60_000);

test('the faults happened', () => {
  expect(report.faults.workerKills).toBe(3);
  expect(new Set(report.kills.map((k) => k.moment))).toEqual(new Set(['after-route-edit', 'queue-wait', 'timer']));
  expect(report.faults.infra.map((f) => f.fault).sort()).toEqual(['restart-apiserver', 'restart-temporal', 'restart-trigger', 'vmagent-not-ready']);
  expect(Object.values(report.faults.kube).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  expect(Object.values(report.faults.metrics).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
});

test('the rollout Succeeded with no invariant breached in what the API server received', () => {
  expect(report.rollouts.map((r) => r.phase)).toEqual(['Succeeded']);
  expect(report.oracle.breaches).toEqual([]);
});

test('0 failed and 0 stale reads, no hole in the series read; vmauth never lost more than one zone; no zone restarted while routed', () => {
  expect(report.reads.total).toBeGreaterThan(50);
  expect(report.reads.gapReads).toBeGreaterThan(50);
  expect({ failed: report.reads.failed, stale: report.reads.stale, gappy: report.reads.gappy }).toEqual({ failed: 0, stale: 0, gappy: 0 });
  expect(report.physical.maxZonesOutOfVmauth).toBe(1);
  expect(report.physical.zoneRestarts).toBe(3);
  expect(report.physical.restartsWhileRouted).toEqual([]);
});

test("every zone rejoined only after vmagent's own series showed its queues drained for queueDrainedFor, and the check fires on these very data", () => {
  const { margins, earlierThanMargin } = report.drainCheck;
  // one rejoin per zone, each judged from the campaign's looks at vmagent (no breach: each margin >= 0)
  expect(margins.map((m) => m.zone).sort()).toEqual(['az-a', 'az-b', 'az-c']);
  for (const m of margins) expect(m.marginMs).toBeGreaterThanOrEqual(0);
  // Negative control: the same audit log with each restore received earlier than its margin → each rejoin flagged.
  expect(earlierThanMargin).toBe(3);
});

test('a restarted worker resumed the queue wait it was killed in (a new attempt of the wait, by the new boot), and the wait completed', () => {
  const waits = report.kills.filter((k) => k.moment === 'queue-wait' && k.step?.endsWith('WaitingForQueue'));
  expect(waits.length).toBeGreaterThan(0);
  for (const k of waits) expect(k.waitResumedAfterReadyMs).toEqual(expect.any(Number));
  expect(report.rollouts.map((r) => r.phase)).toEqual(['Succeeded']);
});
