// The chart's alerts (templates/vmrule.yaml) evaluated by the real vmalert engine: `helm template`
// renders the VMRule, its groups become a rules file, and `vmalert-tool unittest` replays synthetic
// series through them minute by minute. Each alert fires exactly when its threshold is reached (the
// minute before, it must not) and stays quiet where it must; a wrong expectation makes vmalert-tool
// fail (negative control), so a passing run means the expectations were checked.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { renderChart } from '../infra/harness/chart-identities';
import { installCRDs, kubeRequest, startKube, type KubeCluster } from '../infra/harness/kube';
import { harnessTempDir } from '../infra/harness/processes';
import { REPO_ROOT, toolPath } from '../infra/harness/tools';
import { anchorsOf } from '../support/doc-references';

const NAMESPACE = 'vmrollout-system';
const VMRULE_CRD = path.join(REPO_ROOT, 'test', 'fixtures', 'alerts', 'vmrule-crd.yaml');
const WORKER_JOB = 'rel-vmrollout-worker';
const TRIGGER_JOB = 'rel-vmrollout-trigger';
const OPERATIONS_DOC = path.join(REPO_ROOT, 'docs', 'operations.md');
/** Every alert of the chart. */
const ALERTS = [
  'VmrolloutRolloutFailed',
  'VmrolloutSpecInvalid',
  'VmrolloutStuckInStep',
  'VmrolloutTriggerDown',
  'VmrolloutTriggerWatchRestarting',
  'VmrolloutWorkerDown',
  'VmrolloutZoneOutOfReadsTooLong',
];
/** The runbook_url an alert gets with the default vmRule.runbookUrl: its section of docs/operations.md. */
const runbookOf = (alert: string) => `docs/operations.md#${alert.toLowerCase()}`;

interface AlertingRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations: Record<string, string>;
}
interface RuleGroup {
  name: string;
  rules: AlertingRule[];
}
type VMRule = k8s.KubernetesObject & { spec: { groups: RuleGroup[] } };

interface Alert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
/** At `at` (time since the first sample), exactly `alerts` fire; none when it is omitted. */
interface Check {
  at: string;
  alerts?: Alert[];
}
/** One vmalert-tool test group: its own fresh storage holding `series` (series -> values, 1 sample a minute). */
interface Case {
  name: string;
  alert: string;
  series: Record<string, string>;
  checks: Check[];
}

const vmRuleOf = (values: string[] = []): VMRule | undefined =>
  renderChart({ releaseNamespace: NAMESPACE, values }).find((o) => o.kind === 'VMRule') as VMRule | undefined;

function ruleNamed(rule: VMRule, alert: string): { group: string; rule: AlertingRule } {
  for (const g of rule.spec.groups) {
    const r = g.rules.find((x) => x.alert === alert);
    if (r) return { group: g.name, rule: r };
  }
  throw new Error(`no alert ${alert} in the VMRule`);
}

/** The rule's description as vmalert should expand it (only `$labels.x` and `$value` are used). */
function description(rule: VMRule, alert: string, labels: Record<string, string>, value?: string): string {
  const out = ruleNamed(rule, alert)
    .rule.annotations.description!.replace(/\{\{ \$labels\.(\w+) \}\}/g, (_, k: string) => labels[k] ?? `<no ${k}>`)
    .replace(/\{\{ \$value \}\}/g, value ?? '<no value>');
  if (out.includes('{{')) throw new Error(`unexpanded template left in the description of ${alert}: ${out}`);
  return out;
}

/** Writes the VMRule's groups as a rules file and the cases as one test file; runs vmalert-tool on them. */
function vmalertUnittest(rule: VMRule, cases: Case[]): { status: number | null; output: string } {
  const bin = toolPath('vmalert-tool');
  const dir = harnessTempDir('alerts');
  fs.writeFileSync(path.join(dir, 'rules.yaml'), stringify({ groups: rule.spec.groups }));
  const tests = cases.map((c) => ({
    name: c.name,
    interval: '1m',
    input_series: Object.entries(c.series).map(([series, values]) => ({ series, values })),
    alert_rule_test: c.checks.map((k) => ({
      eval_time: k.at,
      groupname: ruleNamed(rule, c.alert).group,
      alertname: c.alert,
      exp_alerts: (k.alerts ?? []).map((a) => ({ exp_labels: a.labels, exp_annotations: { runbook_url: runbookOf(c.alert), ...a.annotations } })),
    })),
  }));
  const testFile = path.join(dir, 'test.yaml');
  fs.writeFileSync(testFile, stringify({ rule_files: ['rules.yaml'], evaluation_interval: '1m', tests }));
  // vmalert-tool keeps its storage under the OS temp dir: keep it in ours.
  const r = spawnSync(bin, ['unittest', `--files=${testFile}`], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, TMPDIR: dir } });
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}`;
  fs.writeFileSync(path.join(dir, 'output.txt'), output);
  return { status: r.status, output };
}

function expectPasses(rule: VMRule, cases: Case[]): void {
  const { status, output } = vmalertUnittest(rule, cases);
  if (status !== 0) throw new Error(`vmalert-tool unittest failed (exit ${status}):\n${output}`);
  expect(output).toMatch(/SUCCESS/);
}

const demo = { namespace: 'default', name: 'demo' };
const sel = (metric: string, labels: Record<string, string>) =>
  `${metric}{${Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',')}}`;

/** The cases of each alert, against the rendered rule (its descriptions). */
function casesFor(rule: VMRule): Record<string, Case[]> {
  const failed = { ...demo, severity: 'critical' };
  const outOfReads = { ...demo, zone: 'az-b', severity: 'warning' };
  const stuck = { ...demo, zone: 'az-b', step: 'WaitingForQueue', severity: 'warning' };
  const workerDown = { namespace: NAMESPACE, job: WORKER_JOB, severity: 'critical' };
  const triggerDown = { namespace: NAMESPACE, job: TRIGGER_JOB, severity: 'critical' };
  const invalid = { ...demo, severity: 'warning' };
  const trigger = { namespace: NAMESPACE, job: TRIGGER_JOB, instance: '10.0.0.2:9465' };
  return {
    VmrolloutRolloutFailed: [
      {
        name: 'Failed for 1m fires',
        alert: 'VmrolloutRolloutFailed',
        series: { [sel('vmrollout_rollout_phase', { ...demo, phase: 'Failed' })]: '1x10' },
        checks: [
          { at: '0m' },
          {
            at: '1m',
            alerts: [
              {
                labels: failed,
                annotations: { summary: 'Rollout of default/demo failed', description: description(rule, 'VmrolloutRolloutFailed', failed) },
              },
            ],
          },
        ],
      },
      {
        name: 'another phase never fires',
        alert: 'VmrolloutRolloutFailed',
        series: { [sel('vmrollout_rollout_phase', { ...demo, phase: 'Progressing' })]: '1x10' },
        checks: [{ at: '10m' }],
      },
    ],
    VmrolloutZoneOutOfReadsTooLong: [
      {
        // Paused on purpose: a zone out of reads while paused is exactly what an SRE must hear about.
        name: 'out of reads for 1h fires, paused or not',
        alert: 'VmrolloutZoneOutOfReadsTooLong',
        series: {
          [sel('vmrollout_zone_out_of_reads', { ...demo, zone: 'az-b' })]: '1x90',
          [sel('vmrollout_rollout_phase', { ...demo, phase: 'Paused' })]: '1x90',
        },
        checks: [
          { at: '59m' },
          {
            at: '60m',
            alerts: [
              {
                labels: outOfReads,
                annotations: {
                  summary: 'Zone az-b of default/demo out of reads for more than 1h',
                  description: description(rule, 'VmrolloutZoneOutOfReadsTooLong', outOfReads),
                },
              },
            ],
          },
        ],
      },
    ],
    VmrolloutStuckInStep: [
      {
        name: 'same step for 30m while running fires',
        alert: 'VmrolloutStuckInStep',
        series: {
          [sel('vmrollout_zone_step', { ...demo, zone: 'az-b', step: 'WaitingForQueue' })]: '1x40',
          [sel('vmrollout_rollout_phase', { ...demo, phase: 'Progressing' })]: '1x40',
        },
        checks: [
          { at: '29m' },
          {
            at: '30m',
            alerts: [
              {
                labels: stuck,
                annotations: {
                  summary: 'Zone az-b of default/demo in step WaitingForQueue for more than 30m',
                  description: description(rule, 'VmrolloutStuckInStep', stuck),
                },
              },
            ],
          },
        ],
      },
      {
        name: 'a paused rollout is not stuck',
        alert: 'VmrolloutStuckInStep',
        series: {
          [sel('vmrollout_zone_step', { ...demo, zone: 'az-b', step: 'WaitingForQueue' })]: '1x40',
          [sel('vmrollout_rollout_phase', { ...demo, phase: 'Paused' })]: '1x40',
        },
        checks: [{ at: '40m' }],
      },
      {
        // The clock is per step: 20m in one step then 20m in the next is progress.
        name: 'a zone that moves on to the next step is not stuck',
        alert: 'VmrolloutStuckInStep',
        series: {
          [sel('vmrollout_zone_step', { ...demo, zone: 'az-b', step: 'WaitingForQueue' })]: '1x19 stale',
          [sel('vmrollout_zone_step', { ...demo, zone: 'az-b', step: 'RejoiningReads' })]: '_x19 1x20',
          [sel('vmrollout_rollout_phase', { ...demo, phase: 'Progressing' })]: '1x40',
        },
        checks: [{ at: '39m' }],
      },
      {
        // A failed zone waits for a person: VmrolloutRolloutFailed says so, not this one.
        name: 'a failed zone is not stuck',
        alert: 'VmrolloutStuckInStep',
        series: {
          [sel('vmrollout_zone_step', { ...demo, zone: 'az-b', step: 'Failed' })]: '1x40',
          [sel('vmrollout_rollout_phase', { ...demo, phase: 'Failed' })]: '1x40',
        },
        checks: [{ at: '40m' }],
      },
    ],
    VmrolloutWorkerDown: [
      {
        name: 'every worker target down for 5m fires',
        alert: 'VmrolloutWorkerDown',
        series: {
          [sel('up', { namespace: NAMESPACE, job: WORKER_JOB, instance: '10.0.0.1:9464' })]: '0x10',
          [sel('up', { namespace: NAMESPACE, job: WORKER_JOB, instance: '10.0.0.3:9464' })]: '0x10',
        },
        checks: [
          { at: '4m' },
          {
            at: '5m',
            alerts: [
              {
                labels: workerDown,
                annotations: { summary: `No vmrollout worker up in ${NAMESPACE}`, description: description(rule, 'VmrolloutWorkerDown', workerDown) },
              },
            ],
          },
        ],
      },
      {
        // No worker series at all (Deployment scaled to 0, scrape gone) must alert too.
        name: 'no worker series for 5m fires',
        alert: 'VmrolloutWorkerDown',
        series: { [sel('up', { namespace: NAMESPACE, job: TRIGGER_JOB, instance: '10.0.0.2:9465' })]: '1x10' },
        checks: [
          { at: '4m' },
          {
            at: '5m',
            alerts: [
              {
                labels: workerDown,
                annotations: { summary: `No vmrollout worker up in ${NAMESPACE}`, description: description(rule, 'VmrolloutWorkerDown', workerDown) },
              },
            ],
          },
        ],
      },
      {
        name: 'one worker up is enough',
        alert: 'VmrolloutWorkerDown',
        series: {
          [sel('up', { namespace: NAMESPACE, job: WORKER_JOB, instance: '10.0.0.1:9464' })]: '1x10',
          [sel('up', { namespace: NAMESPACE, job: WORKER_JOB, instance: '10.0.0.3:9464' })]: '0x10',
        },
        checks: [{ at: '10m' }],
      },
    ],
    VmrolloutTriggerDown: [
      {
        name: 'the trigger target down for 5m fires',
        alert: 'VmrolloutTriggerDown',
        series: {
          [sel('up', { namespace: NAMESPACE, job: TRIGGER_JOB, instance: '10.0.0.2:9465' })]: '0x10',
          [sel('up', { namespace: NAMESPACE, job: WORKER_JOB, instance: '10.0.0.1:9464' })]: '1x10',
        },
        checks: [
          { at: '4m' },
          {
            at: '5m',
            alerts: [
              {
                labels: triggerDown,
                annotations: { summary: `No vmrollout trigger up in ${NAMESPACE}`, description: description(rule, 'VmrolloutTriggerDown', triggerDown) },
              },
            ],
          },
        ],
      },
      {
        // Deployment scaled to 0, or its scrape gone: the per-object alerts go quiet, this one must not.
        name: 'no trigger series for 5m fires, while the per-object series are gone too',
        alert: 'VmrolloutTriggerDown',
        series: {
          [sel('up', { namespace: NAMESPACE, job: WORKER_JOB, instance: '10.0.0.1:9464' })]: '1x10',
          [sel('vmrollout_rollout_phase', { ...demo, phase: 'Failed' })]: '1x1 stale',
        },
        checks: [
          { at: '4m' },
          {
            at: '5m',
            alerts: [
              {
                labels: triggerDown,
                annotations: { summary: `No vmrollout trigger up in ${NAMESPACE}`, description: description(rule, 'VmrolloutTriggerDown', triggerDown) },
              },
            ],
          },
        ],
      },
      {
        // Two trigger pods during an update: one up is enough; a down worker is VmrolloutWorkerDown's.
        name: 'one trigger up is enough, whatever the workers do',
        alert: 'VmrolloutTriggerDown',
        series: {
          [sel('up', { namespace: NAMESPACE, job: TRIGGER_JOB, instance: '10.0.0.2:9465' })]: '1x10',
          [sel('up', { namespace: NAMESPACE, job: TRIGGER_JOB, instance: '10.0.0.4:9465' })]: '0x10',
          [sel('up', { namespace: NAMESPACE, job: WORKER_JOB, instance: '10.0.0.1:9464' })]: '0x10',
        },
        checks: [{ at: '10m' }],
      },
      {
        // Restarted within 5m: a short gap does not page.
        name: 'down for less than 5m never fires',
        alert: 'VmrolloutTriggerDown',
        series: { [sel('up', { namespace: NAMESPACE, job: TRIGGER_JOB, instance: '10.0.0.2:9465' })]: '1x2 0x3 1x10' },
        checks: [{ at: '6m' }, { at: '10m' }],
      },
    ],
    VmrolloutSpecInvalid: [
      {
        name: 'Invalid for 5m fires',
        alert: 'VmrolloutSpecInvalid',
        series: { [sel('vmrollout_rollout_phase', { ...demo, phase: 'Invalid' })]: '1x10' },
        checks: [
          { at: '4m' },
          {
            at: '5m',
            alerts: [
              {
                labels: invalid,
                annotations: { summary: 'Spec of default/demo is Invalid', description: description(rule, 'VmrolloutSpecInvalid', invalid) },
              },
            ],
          },
        ],
      },
      {
        // Fixed within 5m: the phase moves on (a new generation starts its rollout).
        name: 'a spec fixed within 5m never fires; another phase never fires',
        alert: 'VmrolloutSpecInvalid',
        series: {
          [sel('vmrollout_rollout_phase', { ...demo, phase: 'Invalid' })]: '1x3 stale',
          [sel('vmrollout_rollout_phase', { ...demo, phase: 'Progressing' })]: '_x4 1x10',
          [sel('vmrollout_rollout_phase', { namespace: 'default', name: 'other', phase: 'Failed' })]: '1x14',
        },
        checks: [{ at: '5m' }, { at: '14m' }],
      },
    ],
    VmrolloutTriggerWatchRestarting: [
      {
        // Flat for 15m, then one error restart a minute: more than 3 in 15m from minute 19, firing 5m later.
        name: 'more than 3 error restarts in 15m for 5m fires',
        alert: 'VmrolloutTriggerWatchRestarting',
        series: { [sel('vmrollout_trigger_watch_restarts_total', { ...trigger, reason: 'error' })]: '100x15 101+1x20' },
        checks: [
          { at: '23m' },
          {
            at: '24m',
            alerts: [
              {
                labels: { namespace: NAMESPACE, job: TRIGGER_JOB, severity: 'warning' },
                annotations: {
                  summary: 'vmrollout trigger watches keep failing',
                  description: description(rule, 'VmrolloutTriggerWatchRestarting', { namespace: NAMESPACE, job: TRIGGER_JOB }, '9'),
                },
              },
            ],
          },
        ],
      },
      {
        // Exactly 3 error restarts in every 15m (one each 5m) is not more than 3; idle restarts do not count.
        name: 'at the limit, or restarts for another reason, never fires',
        alert: 'VmrolloutTriggerWatchRestarting',
        series: {
          [sel('vmrollout_trigger_watch_restarts_total', { ...trigger, reason: 'error' })]: '100x4 101x4 102x4 103x4 104x4 105x4 106x4 107x4 108x4',
          [sel('vmrollout_trigger_watch_restarts_total', { ...trigger, reason: 'idle' })]: '0+10x44',
        },
        checks: [{ at: '20m' }, { at: '30m' }, { at: '44m' }],
      },
    ],
  };
}

describe('alerts (VMRule) under vmalert-tool unittest', () => {
  let rule: VMRule;
  beforeAll(() => {
    rule = vmRuleOf()!;
  }, 60_000);

  test('the chart renders one VMRule with the seven alerts, in the release namespace', () => {
    expect(rule).toBeDefined();
    expect(rule.apiVersion).toBe('operator.victoriametrics.com/v1beta1');
    expect(rule.metadata?.namespace).toBe(NAMESPACE);
    expect(rule.spec.groups.flatMap((g) => g.rules.map((r) => r.alert)).sort()).toEqual(ALERTS);
  });

  // An on-call engineer follows runbook_url: each must land on a section that exists.
  test('every alert has a runbook_url whose anchor is a heading of docs/operations.md', () => {
    const anchors = anchorsOf(fs.readFileSync(OPERATIONS_DOC, 'utf8'));
    const urls = rule.spec.groups.flatMap((g) => g.rules.map((r) => [r.alert, r.annotations.runbook_url] as const));
    expect(urls.length).toBe(ALERTS.length);
    for (const [alert, url] of urls) {
      expect(url).toBe(runbookOf(alert));
      expect(anchors).toContain(url!.split('#')[1]);
    }
    // Negative control: a heading that is not there is not found.
    expect(anchors).not.toContain('vmrolloutnosuchalert');
  });

  test('vmRule.runbookUrl sets where the runbooks are; a value with a fragment or a space is refused (values.schema.json)', () => {
    const base = 'https://git.example.com/sre/vmrollout/blob/v1.0.0/docs/operations.md';
    const moved = vmRuleOf([`vmRule.runbookUrl=${base}`])!;
    for (const g of moved.spec.groups) for (const r of g.rules) expect(r.annotations.runbook_url).toBe(`${base}#${r.alert.toLowerCase()}`);
    expect(() => vmRuleOf(['vmRule.runbookUrl=docs/operations.md#alerts'])).toThrow(/- at '\/vmRule\/runbookUrl': .* does not match pattern/);
    expect(() => vmRuleOf(['vmRule.runbookUrl=my runbooks'])).toThrow(/- at '\/vmRule\/runbookUrl': .* does not match pattern/);
  });

  // The job label a VMServiceScrape gives is the Service's name: the rule must name the worker's Service.
  test('VmrolloutWorkerDown watches the job of the worker Service that the VMServiceScrape selects', () => {
    const objs = renderChart({ releaseNamespace: NAMESPACE });
    const scrape = objs.find((o) => o.kind === 'VMServiceScrape') as k8s.KubernetesObject & {
      spec: { selector: { matchLabels: Record<string, string> }; endpoints: { port: string }[] };
    };
    const svc = objs.find((o) => o.kind === 'Service' && o.metadata?.name === WORKER_JOB) as k8s.V1Service | undefined;
    expect(svc).toBeDefined();
    expect(svc!.metadata!.labels).toMatchObject(scrape.spec.selector.matchLabels);
    expect(svc!.spec!.ports!.map((p) => p.name)).toContain(scrape.spec.endpoints[0]!.port);
    expect(ruleNamed(rule, 'VmrolloutWorkerDown').rule.expr).toContain(`job="${WORKER_JOB}"`);
  });

  test('VmrolloutTriggerDown watches the job of the trigger Service that the VMServiceScrape selects', () => {
    const objs = renderChart({ releaseNamespace: NAMESPACE });
    const scrape = objs.find((o) => o.kind === 'VMServiceScrape') as k8s.KubernetesObject & {
      spec: { selector: { matchLabels: Record<string, string> }; endpoints: { port: string }[] };
    };
    const svc = objs.find((o) => o.kind === 'Service' && o.metadata?.name === TRIGGER_JOB) as k8s.V1Service | undefined;
    expect(svc).toBeDefined();
    expect(svc!.metadata!.labels).toMatchObject(scrape.spec.selector.matchLabels);
    expect(svc!.spec!.ports!.map((p) => p.name)).toContain(scrape.spec.endpoints[0]!.port);
    expect(ruleNamed(rule, 'VmrolloutTriggerDown').rule.expr).toContain(`job="${TRIGGER_JOB}"`);
  });

  // A fullname too long for a Service name is cut and hashed (vmrollout.dnsLabel): the jobs follow.
  test('with a long fullname, both down alerts still watch the jobs of the Services', () => {
    const long = `vmrollout-${'x'.repeat(50)}`;
    const objs = renderChart({ releaseNamespace: NAMESPACE, values: [`fullnameOverride=${long}`] });
    const r = objs.find((o) => o.kind === 'VMRule') as VMRule;
    for (const [alert, component] of [
      ['VmrolloutWorkerDown', 'worker'],
      ['VmrolloutTriggerDown', 'trigger'],
    ] as const) {
      const svc = objs.find((o) => o.kind === 'Service' && (o.metadata?.labels ?? {})['app.kubernetes.io/component'] === component)!;
      // Negative control: the plain <fullname>-<component> is not the Service's name here.
      expect(svc.metadata!.name).not.toBe(`${long}-${component}`);
      expect(ruleNamed(r, alert).rule.expr).toContain(`job="${svc.metadata!.name}"`);
    }
  });

  test('every description says what to do: the object and the runbook section', () => {
    const d = description(rule, 'VmrolloutRolloutFailed', { ...demo });
    expect(d).toContain('default/demo');
    expect(d).toContain('docs/operations.md#when-a-zone-fails');
  });

  test.each(ALERTS)(
    '%s fires at its threshold and not before, and not where it must not',
    (alert) => {
      expectPasses(rule, casesFor(rule)[alert]!);
    },
    120_000,
  );

  test('negative control: one wrong expectation makes vmalert-tool fail', () => {
    const [fires] = casesFor(rule).VmrolloutZoneOutOfReadsTooLong!;
    // The same case, but claiming the alert already fires a minute before its threshold.
    const wrong: Case = { ...fires!, name: 'wrong on purpose', checks: [{ at: '59m', alerts: fires!.checks[1]!.alerts }] };
    const { status, output } = vmalertUnittest(rule, [wrong]);
    expect(status).not.toBe(0);
    expect(output).toMatch(/FAILED/);
    expect(output).toContain('alertname: VmrolloutZoneOutOfReadsTooLong');
  }, 120_000);

  test('vmRule.zoneOutOfReadsFor=10m moves the threshold to 10m', () => {
    const moved = vmRuleOf(['vmRule.zoneOutOfReadsFor=10m'])!;
    const labels = { ...demo, zone: 'az-b', severity: 'warning' };
    expectPasses(moved, [
      {
        name: 'out of reads for 10m fires',
        alert: 'VmrolloutZoneOutOfReadsTooLong',
        series: { [sel('vmrollout_zone_out_of_reads', { ...demo, zone: 'az-b' })]: '1x20' },
        checks: [
          { at: '9m' },
          {
            at: '10m',
            alerts: [
              {
                labels,
                annotations: {
                  summary: 'Zone az-b of default/demo out of reads for more than 10m',
                  description: description(moved, 'VmrolloutZoneOutOfReadsTooLong', labels),
                },
              },
            ],
          },
        ],
      },
    ]);
  }, 120_000);

  test('vmRule.alertLabels override the severity; vmRule.labels go on the VMRule; a bad duration is refused (values.schema.json)', () => {
    const r = vmRuleOf(['vmRule.alertLabels.severity=page', 'vmRule.alertLabels.team=sre', 'vmRule.labels.vmalert=main'])!;
    expect(r.metadata?.labels).toMatchObject({ vmalert: 'main' });
    for (const g of r.spec.groups) for (const x of g.rules) expect(x.labels).toEqual({ severity: 'page', team: 'sre' });
    expect(() => vmRuleOf(['vmRule.stuckInStepFor=half an hour'])).toThrow(/- at '\/vmRule\/stuckInStepFor': 'half an hour' does not match pattern/);
  });

  test('vmRule.enabled=false renders no VMRule', () => {
    expect(vmRuleOf(['vmRule.enabled=false'])).toBeUndefined();
  });
});

describe("the VMRule on a real kube-apiserver with the operator's VMRule CRD", () => {
  let kube: KubeCluster;
  beforeAll(async () => {
    kube = await startKube();
    await installCRDs(kube.kubeConfig, VMRULE_CRD);
  }, 180_000);
  afterAll(async () => kube?.stop());

  // Strict field validation refuses unknown fields instead of pruning them: what the API server
  // stores is then what vmalert-tool tested above, plus the CRD's default `record: ""` (an
  // alerting rule to vmalert, as before).
  test('is accepted as rendered, nothing pruned', async () => {
    const rule = vmRuleOf(['vmRule.alertLabels.team=sre', 'vmRule.labels.vmalert=main'])!;
    expect((await kubeRequest(kube.kubeConfig, 'POST', '/api/v1/namespaces', { metadata: { name: NAMESPACE } })).status).toBe(201);
    const collection = `/apis/operator.victoriametrics.com/v1beta1/namespaces/${NAMESPACE}/vmrules`;
    const created = await kubeRequest(kube.kubeConfig, 'POST', `${collection}?fieldValidation=Strict`, rule);
    expect(created).toMatchObject({ status: 201 });
    const stored = JSON.parse((await kubeRequest(kube.kubeConfig, 'GET', `${collection}/${rule.metadata!.name}`)).body) as VMRule;
    const withDefaults = { groups: rule.spec.groups.map((g) => ({ ...g, rules: g.rules.map((r) => ({ ...r, record: '' })) })) };
    expect(stored.spec).toEqual(withDefaults);

    // Negative control: a misspelt rule field is refused, not silently dropped.
    const bad = JSON.parse(JSON.stringify(rule)) as VMRule;
    bad.metadata!.name = 'misspelt';
    (bad.spec.groups[0]!.rules[0] as unknown as Record<string, unknown>).fro = '1m';
    const refused = await kubeRequest(kube.kubeConfig, 'POST', `${collection}?fieldValidation=Strict`, bad);
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.body).toMatch(/unknown field.*fro/);
  }, 60_000);
});
