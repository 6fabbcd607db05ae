// The chart's Grafana dashboard (charts/vmrollout/dashboards/vmrollout.json):
//   1. it is a Grafana dashboard by Grafana's own schema: the TypeScript types of the dashboard kind
//      (and of each panel plugin's options) published in @grafana/schema, checked by the TypeScript
//      compiler against the JSON as it is (no JSON Schema of the dashboard is published on npm);
//   2. every panel query parses and returns series on real data: the metrics text of the real
//      worker and trigger registries (production functions, driven through their public APIs),
//      imported into a real VictoriaMetrics and queried with the template variables substituted;
//   3. every query on a series with the object's labels honours the namespace and name variables;
//   4. the chart ships it as a ConfigMap for Grafana's dashboard sidecar (and none when disabled).
// Each check has a negative control that shows it can fail.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import type * as k8s from '@kubernetes/client-node';
import { reportingQueues } from '../../activities/metrics';
import { PHASES, ZONE_STEPS, type Phase, type VMDistributedClusterStatus } from '../../api/types';
import { createMetrics, type TriggerMetrics } from '../../trigger/metrics';
import type { VmdcObject } from '../../kube/vmdc-object';
import { createWorkerMetrics, type WorkerMetrics } from '../../worker/metrics';
import { CHART_DIR, renderChart } from '../infra/harness/chart-identities';
import { httpGet } from '../infra/harness/processes';
import { REPO_ROOT } from '../infra/harness/tools';
import { httpPost, startVictoriaMetrics, type VmProcessHandle } from '../infra/harness/vm';

const DASHBOARD_FILE = path.join(CHART_DIR, 'dashboards', 'vmrollout.json');
const DASHBOARD_TEXT = fs.readFileSync(DASHBOARD_FILE, 'utf8');

interface Target {
  refId: string;
  expr: string;
  legendFormat?: string;
  datasource?: { type?: string; uid?: string };
}
interface PanelJson {
  id: number;
  type: string;
  title: string;
  datasource?: { type?: string; uid?: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: Target[];
  options?: unknown;
  fieldConfig?: { defaults?: { custom?: unknown; mappings?: Array<{ type: string; options: Record<string, { text: string }> }> } };
  panels?: PanelJson[];
}
interface VariableJson {
  name: string;
  type: string;
  query: string | { query: string };
  datasource?: { type?: string; uid?: string };
}
interface DashboardJson {
  schemaVersion: number;
  uid: string;
  panels: PanelJson[];
  templating: { list: VariableJson[] };
}

const dashboard = JSON.parse(DASHBOARD_TEXT) as DashboardJson;

/** Every panel but the rows (and the panels of collapsed rows). */
const panels = (d: DashboardJson): PanelJson[] => d.panels.flatMap((p) => (p.type === 'row' ? (p.panels ?? []) : [p]));

// ---------------------------------------------------------------------------------------
// 1. Grafana's schema

/**
 * Panel types → the module of @grafana/schema with that plugin's `Options`, and whether it has a
 * custom `FieldConfig` (those without take none).
 */
const PANEL_SCHEMAS: Record<string, { module: string; fieldConfig: boolean }> = {
  timeseries: { module: 'timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen', fieldConfig: true },
  'state-timeline': { module: 'statetimeline/panelcfg/x/StateTimelinePanelCfg_types.gen', fieldConfig: true },
  stat: { module: 'stat/panelcfg/x/StatPanelCfg_types.gen', fieldConfig: false },
  bargauge: { module: 'bargauge/panelcfg/x/BarGaugePanelCfg_types.gen', fieldConfig: false },
};

/**
 * The TypeScript source the compiler checks: the dashboard JSON as an object literal that must
 * satisfy Dashboard, and each panel's options and custom field config that of its plugin. Grafana's
 * TS enums are string enums; in JSON they are their string values (`${E}`), hence JsonOf.
 */
function schemaCheckSource(d: DashboardJson): string {
  const lines = [
    `import type { Dashboard } from '@grafana/schema';`,
    ...Object.entries(PANEL_SCHEMAS).map(([type, s], i) => `import type * as P${i} from '@grafana/schema/dist/esm/raw/composable/${s.module}'; // ${type}`),
    `type JsonOf<T> = T extends string ? \`\${T}\` : T extends number | boolean | null | undefined ? T : T extends Array<infer U> ? Array<JsonOf<U>> : T extends object ? { [K in keyof T]: JsonOf<T[K]> } : T;`,
    `export const dashboard = ${JSON.stringify(d, null, 1)} satisfies JsonOf<Dashboard>;`,
  ];
  const types = Object.keys(PANEL_SCHEMAS);
  for (const p of panels(d)) {
    const i = types.indexOf(p.type);
    if (i < 0) throw new Error(`panel ${p.id} "${p.title}": no schema for panel type ${p.type} (add it to PANEL_SCHEMAS)`);
    lines.push(`export const options${p.id} = ${JSON.stringify(p.options ?? {})} satisfies JsonOf<P${i}.Options>;`);
    const custom = PANEL_SCHEMAS[p.type]!.fieldConfig ? `JsonOf<P${i}.FieldConfig>` : 'Record<string, never>';
    lines.push(`export const custom${p.id} = ${JSON.stringify(p.fieldConfig?.defaults?.custom ?? {})} satisfies ${custom};`);
  }
  return lines.join('\n') + '\n';
}

/** Compiles the source with the project's compiler options; returns the diagnostics (empty: valid). */
function typeCheck(source: string): string[] {
  const file = path.join(REPO_ROOT, 'test', 'integration', '__dashboard_schema_check__.ts');
  const config = ts.getParsedCommandLineOfConfigFile(path.join(REPO_ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  const options: ts.CompilerOptions = { ...config!.options, noEmit: true, rootDir: REPO_ROOT, types: [], sourceMap: false };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (f) => f === file || fileExists.call(host, f);
  host.readFile = (f) => (f === file ? source : readFile.call(host, f));
  host.getSourceFile = (f, lang, ...rest) => (f === file ? ts.createSourceFile(f, source, lang) : getSourceFile.call(host, f, lang, ...rest));
  const program = ts.createProgram([file], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) =>
        `${d.file && d.start !== undefined ? `line ${d.file.getLineAndCharacterOfPosition(d.start).line + 1}: ` : ''}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
    );
}

describe("the dashboard JSON, by Grafana's schema (@grafana/schema)", () => {
  it("type-checks as a Dashboard, each panel's options and field config as its plugin's", () => {
    expect(typeCheck(schemaCheckSource(dashboard))).toEqual([]);
  }, 120_000);

  it('negative control: a misspelled key, a wrong enum value, a missing required field each fail', () => {
    const broken = JSON.parse(DASHBOARD_TEXT) as DashboardJson & Record<string, unknown>;
    (broken.panels[1] as unknown as Record<string, unknown>).gridPos = { w: 8, x: 0, y: 1 }; // no h
    (broken.templating.list[1] as unknown as Record<string, unknown>).type = 'prometheus'; // not a VariableType
    broken.schemaVersion = '39' as unknown as number;
    const stat = panels(broken).find((p) => p.type === 'stat')!;
    (stat.options as Record<string, unknown>).colourMode = 'background'; // misspelled option
    const errors = typeCheck(schemaCheckSource(broken)).join('\n');
    expect(errors).toMatch(/Property 'h' is missing/);
    expect(errors).toMatch(/"prometheus"' is not assignable to type 'VariableType'/);
    expect(errors).toMatch(/'string' is not assignable to type 'number'/);
    expect(errors).toMatch(/colourMode/);
  }, 120_000);

  it('the template variables: a Prometheus data source, namespace and name from vmrollout_rollout_phase', () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
    const vars = Object.fromEntries(dashboard.templating.list.map((v) => [v.name, v]));
    expect(vars.datasource).toMatchObject({ type: 'datasource', query: 'prometheus' });
    expect(vars.namespace).toMatchObject({ type: 'query', query: { query: 'label_values(vmrollout_rollout_phase, namespace)' } });
    expect(vars.name).toMatchObject({ type: 'query', query: { query: 'label_values(vmrollout_rollout_phase{namespace=~"$namespace"}, name)' } });
    for (const p of panels(dashboard)) {
      expect(p.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
      for (const t of p.targets ?? []) expect(t.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
    }
    const ids = dashboard.panels.flatMap((p) => [p.id, ...(p.panels ?? []).map((c) => c.id)]);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of dashboard.panels) expect(p.gridPos.x + p.gridPos.w).toBeLessThanOrEqual(24);
  });

  it('the state timelines name every rollout phase and zone step of api/types, in code order', () => {
    const byTitle = (title: string) => panels(dashboard).find((p) => p.title === title)!;
    const check = (title: string, label: string, values: readonly string[]) => {
      const p = byTitle(title);
      const expr = p.targets![0]!.expr;
      values.forEach((v, i) => expect(expr).toMatch(new RegExp(`(^|\\s)${i + 1} \\* \\w+\\{[^}]*${label}="${v}"\\}`)));
      const texts = Object.entries(p.fieldConfig!.defaults!.mappings![0]!.options).map(([k, o]) => [Number(k), o.text]);
      expect(texts).toEqual(values.map((v, i) => [i + 1, v]));
    };
    check('Rollout phase per object', 'phase', PHASES);
    check('Zone step per zone', 'step', [...ZONE_STEPS, 'Failed']);
  });
});

// ---------------------------------------------------------------------------------------
// 2. Every panel query on real data

const NS = 'monitoring';
const vmdc = (name: string, status: VMDistributedClusterStatus): VmdcObject => ({
  metadata: { namespace: NS, name, uid: `uid-${name}`, generation: 3 },
  status,
});
const target = (zone: string) => ({ namespace: NS, vmagentName: 'vmagent', vmclusterName: `vm-${zone}`, queueEmptyBytes: 0, zone, objectName: 'vm-global' });
const sample = (pendingBytes: number) => async () => ({
  at: new Date().toISOString(),
  pendingBytes,
  unreadablePods: 0,
  totalPods: 1,
  drained: pendingBytes === 0,
  message: '',
});

/** /api/v1/query at `time` (s); throws on anything but a success. */
async function query(vm: VmProcessHandle, expr: string, time: number): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> {
  const r = await httpGet(`${vm.url}/api/v1/query?query=${encodeURIComponent(expr)}&time=${time}`);
  const body = JSON.parse(r.body) as { status: string; error?: string; data?: { result: Array<{ metric: Record<string, string>; value: [number, string] }> } };
  if (r.status !== 200 || body.status !== 'success') throw new Error(`query ${expr}: HTTP ${r.status}: ${r.body}`);
  return body.data!.result;
}

/** The expression as Grafana sends it: variables substituted (a single value, or the All value `.*`). */
function substitute(expr: string, vars: { namespace: string; name: string }): string {
  const out = expr
    .replaceAll('$namespace', vars.namespace)
    .replaceAll('$name', vars.name)
    .replaceAll('$__rate_interval', '2m')
    .replaceAll('$__range', '1h')
    .replaceAll('$__interval', '30s');
  if (out.includes('$')) throw new Error(`a variable the test does not know in: ${out}`);
  return out;
}

describe('every panel query on the real metrics of the worker and the trigger', () => {
  let vm: VmProcessHandle;
  let at: number;
  const imported: string[] = [];

  /** Imports a registry's text as one scrape at `ms`, with the job and instance a scrape would add. */
  async function scrape(text: string, job: string, instance: string, ms: number): Promise<void> {
    const r = await httpPost(`${vm.url}/api/v1/import/prometheus?timestamp=${ms}&extra_label=job=${job}&extra_label=instance=${instance}`, text);
    expect(r.status).toBeLessThan(300);
    imported.push(text);
  }

  beforeAll(async () => {
    vm = await startVictoriaMetrics({ name: 'vm-dashboard' });
    const trigger: TriggerMetrics = createMetrics({ defaultMetrics: true });
    const workers: WorkerMetrics[] = [createWorkerMetrics(), createWorkerMetrics()];
    // Two scrapes a minute apart, on whole seconds; the queries look at the second one.
    at = Math.floor(Date.now() / 1000);
    const now = at * 1000;
    const t0 = now - 60_000;

    // The trigger, as its watch and reconciler drive it.
    const phase = (name: string, p: Phase, extra: VMDistributedClusterStatus = {}) => trigger.objectStatus(vmdc(name, { phase: p, ...extra }), false);
    phase('vm-global', 'Progressing', {
      zonesOutOfRotation: ['az-b'],
      zones: [
        { name: 'az-a', phase: 'Done' },
        { name: 'az-b', phase: 'Upgrading' },
      ],
    });
    phase('vm-other', 'Succeeded');
    trigger.eventsSeen.inc({ type: 'add' }, 2);
    trigger.workflowsStarted.inc({ result: 'started' });
    trigger.startDuration.observe(0.4);
    trigger.watchRestarts.inc({ reason: 'relist' });
    trigger.driftedFields.set({ namespace: NS, name: 'vm-global' }, 1);
    // The workers, as the activities drive them.
    workers[0]!.zoneStepDuration({ namespace: NS, name: 'vm-global' }, 'LeavingReads', 4);
    workers[1]!.zoneStepDuration({ namespace: NS, name: 'vm-other' }, 'Upgrading', 3000);
    workers[1]!.activityError('waitOperational', 'ObjectFailed');

    // Scrape 1, while worker 1 runs a queue wait for az-b.
    const scrapeAll = async (ms: number) => {
      await scrape(await trigger.registry.metrics(), 'rel-vmrollout-trigger', 'trigger-0', ms);
      await scrape(await workers[0]!.registry.metrics(), 'rel-vmrollout-worker', 'worker-0', ms);
      await scrape(await workers[1]!.registry.metrics(), 'rel-vmrollout-worker', 'worker-1', ms);
    };
    await reportingQueues(workers[1]!, sample(8 << 20), async (s) => {
      await s(target('az-b'));
      await scrapeAll(t0);
    });

    // A minute later: az-b waits for its queue, more of everything.
    phase('vm-global', 'Progressing', {
      zonesOutOfRotation: ['az-b'],
      zones: [
        { name: 'az-a', phase: 'Done' },
        { name: 'az-b', phase: 'WaitingForQueue' },
      ],
    });
    trigger.workflowsStarted.inc({ result: 'started' });
    trigger.startDuration.observe(1.5);
    trigger.watchRestarts.inc({ reason: 'relist' });
    workers[0]!.zoneStepDuration({ namespace: NS, name: 'vm-global' }, 'Upgrading', 95);
    workers[0]!.zoneStepDuration({ namespace: NS, name: 'vm-global' }, 'LeavingReads', 6);
    workers[1]!.zoneStepDuration({ namespace: NS, name: 'vm-other' }, 'Upgrading', 4000);
    workers[1]!.activityError('waitOperational', 'ObjectFailed');
    await reportingQueues(workers[0]!, sample(4096), async (s) => {
      await s(target('az-b'));
      await scrapeAll(now);
    });
    expect((await httpGet(`${vm.url}/internal/force_flush`)).status).toBe(200);
  }, 120_000);

  afterAll(async () => vm?.stop());

  it('the imported text is what the registries render: no per-worker phase gauge, the new trigger gauges', () => {
    const all = imported.join('\n');
    expect(all).not.toMatch(/^vmrollout_rollouts\{/m);
    expect(all).toMatch(/^vmrollout_rollout_phase\{namespace="monitoring",name="vm-global",phase="Progressing"\} 1$/m);
    expect(all).toMatch(/^vmrollout_zone_step\{namespace="monitoring",name="vm-global",zone="az-b",step="WaitingForQueue"\} 1$/m);
    expect(all).toMatch(/^vmrollout_trigger_start_duration_seconds_count 2$/m);
  });

  const queries = panels(dashboard).flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, refId: t.refId, expr: t.expr })));

  it('the dashboard has a query for each thing it must show', () => {
    const all = queries.map((q) => q.expr).join('\n');
    for (const m of [
      'sum by (phase) (vmrollout_rollout_phase',
      'vmrollout_zone_step_duration_seconds_bucket',
      'vmrollout_zone_out_of_reads',
      'sum by (namespace, name, zone) (vmrollout_queue_pending_bytes',
      'rate(vmrollout_activity_errors_total',
      'vmrollout_trigger_start_duration_seconds_bucket',
      'vmrollout_trigger_workflows_started_total',
      'vmrollout_trigger_reconcile_errors_total',
      'vmrollout_trigger_watch_restarts_total',
      'vmrollout_worker_process_start_time_seconds',
      'vmrollout_trigger_process_start_time_seconds',
      'vmrollout_build_info',
    ]) {
      expect(all).toContain(m);
    }
  });

  it.each(queries.map((q) => [`${q.panel} (${q.refId})`, q.expr] as const))(
    '%s: parses and returns series, for one object and for All',
    async (_title, expr) => {
      for (const vars of [
        { namespace: NS, name: 'vm-global' },
        { namespace: '.*', name: '.*' },
      ]) {
        const result = await query(vm, substitute(expr, vars), at);
        expect(result.length).toBeGreaterThan(0);
        for (const r of result) expect(Number.isFinite(Number(r.value[1]))).toBe(true);
      }
    },
  );

  it("the values are right: phases by object, the zone in its step, each replica's backlog only while its wait ran", async () => {
    const byPhase = await query(
      vm,
      substitute('sum by (phase) (vmrollout_rollout_phase{namespace=~"$namespace", name=~"$name"})', { namespace: '.*', name: '.*' }),
      at,
    );
    expect(Object.fromEntries(byPhase.map((r) => [r.metric.phase, Number(r.value[1])]))).toEqual({ Progressing: 1, Succeeded: 1 });
    const step = panels(dashboard).find((p) => p.title === 'Zone step per zone')!.targets![0]!.expr;
    const steps = await query(vm, substitute(step, { namespace: NS, name: 'vm-global' }), at);
    expect(steps.map((r) => [r.metric.zone, Number(r.value[1])])).toEqual([['az-b', ZONE_STEPS.indexOf('WaitingForQueue') + 1]]);
    // Each replica exported the backlog only while its wait ran: worker 1 in the first scrape only
    // (8 MiB), worker 0 in the second only (4096).
    const scrapes = await query(vm, 'count_over_time(vmrollout_queue_pending_bytes[5m])', at);
    expect(scrapes.map((r) => [r.metric.instance, r.metric.zone, Number(r.value[1])]).sort()).toEqual([
      ['worker-0', 'az-b', 1],
      ['worker-1', 'az-b', 1],
    ]);
    const last = await query(vm, 'last_over_time(vmrollout_queue_pending_bytes[5m])', at);
    expect(Object.fromEntries(last.map((r) => [r.metric.instance, Number(r.value[1])]))).toEqual({ 'worker-0': 4096, 'worker-1': 8 << 20 });
  });

  /** Series names whose samples in the registries' text carry the object's `namespace` and `name` labels. */
  const objectSeries = (): Set<string> => {
    const out = new Set<string>();
    for (const line of imported.join('\n').split('\n')) {
      const m = /^(\w+)\{([^}]*)\}/.exec(line);
      if (m && /(^|,)namespace="/.test(m[2]!) && /(^|,)name="/.test(m[2]!)) out.add(m[1]!);
    }
    return out;
  };

  /** The selectors of `expr` on an object series that do not filter by both variables. */
  const unfiltered = (expr: string, series: Set<string>): string[] =>
    [...expr.matchAll(/\b(vmrollout_\w+)(\{[^}]*\})?/g)]
      .filter(([, name, labels]) => series.has(name!) && !(labels?.includes('namespace=~"$namespace"') && labels.includes('name=~"$name"')))
      .map(([selector]) => selector);

  it('every query on a series with the object labels filters it by the namespace and name variables', () => {
    const series = objectSeries();
    // The registries' object-labelled series, so that the check below has something to check.
    for (const s of [
      'vmrollout_rollout_phase',
      'vmrollout_zone_step',
      'vmrollout_zone_step_duration_seconds_bucket',
      'vmrollout_queue_pending_bytes',
      'vmrollout_trigger_drifted_fields',
    ]) {
      expect(series).toContain(s);
    }
    const offenders = queries.map((q) => ({ query: `${q.panel} (${q.refId})`, selectors: unfiltered(q.expr, series) })).filter((o) => o.selectors.length > 0);
    expect(offenders).toEqual([]);
    // Negative control: the step-duration query as it was (all objects) is reported.
    expect(unfiltered('histogram_quantile(0.95, sum by (step, le) (rate(vmrollout_zone_step_duration_seconds_bucket[$__rate_interval])))', series)).toEqual([
      'vmrollout_zone_step_duration_seconds_bucket',
    ]);
  });

  it('the zone step durations of one object leave out the others', async () => {
    const expr = panels(dashboard).find((p) => p.title === 'Zone step durations (p50, p95)')!.targets![0]!.expr;
    const steps = async (name: string) => (await query(vm, substitute(expr, { namespace: NS, name }), at)).map((r) => r.metric.step).sort();
    // vm-other had only Upgrading (both scrapes), vm-global LeavingReads in both and Upgrading in the second only.
    expect(await steps('vm-other')).toEqual(['Upgrading']);
    const all = await query(vm, substitute(expr, { namespace: '.*', name: '.*' }), at);
    expect(all.map((r) => r.metric.step).sort()).toEqual(['LeavingReads', 'Upgrading']);
    expect(await steps('nothing-here')).toEqual([]);
  });

  it("the template variables' label_values queries find the objects", async () => {
    for (const v of dashboard.templating.list.filter((x) => x.type === 'query')) {
      const q = typeof v.query === 'string' ? v.query : v.query.query;
      const m = /^label_values\((.+), (\w+)\)$/.exec(q);
      expect(m).not.toBeNull();
      const selector = substitute(m![1]!, { namespace: '.*', name: '.*' });
      const r = await httpGet(`${vm.url}/api/v1/label/${m![2]}/values?match[]=${encodeURIComponent(selector)}&start=${at - 3600}&end=${at}`);
      const values = (JSON.parse(r.body) as { data: string[] }).data;
      expect(values).toEqual(v.name === 'namespace' ? [NS] : ['vm-global', 'vm-other']);
    }
  });

  it('negative control: a panel query with a misspelled metric returns no series (so the check above can fail)', async () => {
    const expr = queries.find((q) => q.panel === 'Rollouts by phase')!.expr;
    expect((await query(vm, substitute(expr, { namespace: '.*', name: '.*' }), at)).length).toBeGreaterThan(0);
    const misspelled = expr.replace('vmrollout_rollout_phase', 'vmrollout_rollout_phsae');
    expect(await query(vm, substitute(misspelled, { namespace: '.*', name: '.*' }), at)).toEqual([]);
    // A query that does not parse is an error, not an empty result.
    await expect(query(vm, 'sum by (phase (vmrollout_rollout_phase)', at)).rejects.toThrow(/HTTP 4\d\d/);
  });
});

// ---------------------------------------------------------------------------------------
// 3. The chart's ConfigMap

describe("the chart ships the dashboard for Grafana's sidecar", () => {
  const configMaps = (values: string[] = []) =>
    renderChart({ releaseNamespace: 'vmrollout-system', values }).filter(
      (o): o is k8s.V1ConfigMap => o.kind === 'ConfigMap' && !!(o as k8s.V1ConfigMap).data?.['vmrollout.json'],
    );

  it('by default: one ConfigMap with the sidecar label and the JSON intact', () => {
    const [cm, ...rest] = configMaps();
    expect(rest).toEqual([]);
    expect(cm!.metadata).toMatchObject({
      name: 'rel-vmrollout-dashboard',
      namespace: 'vmrollout-system',
      labels: { grafana_dashboard: '1', 'app.kubernetes.io/name': 'vmrollout' },
    });
    expect(cm!.metadata!.annotations).toBeUndefined();
    expect(cm!.data!['vmrollout.json']).toBe(DASHBOARD_TEXT.trim());
    expect(JSON.parse(cm!.data!['vmrollout.json']!)).toEqual(dashboard);
  });

  it('labels, annotations (a folder) and the namespace from the values', () => {
    const [cm] = configMaps([
      'grafanaDashboard.labels.grafana_dashboard=null',
      'grafanaDashboard.labels.dashboards=vmrollout',
      'grafanaDashboard.annotations.grafana_folder=VictoriaMetrics',
      'grafanaDashboard.namespace=grafana',
    ]);
    expect(cm!.metadata!.namespace).toBe('grafana');
    expect(cm!.metadata!.labels).toMatchObject({ dashboards: 'vmrollout' });
    expect(cm!.metadata!.labels).not.toHaveProperty('grafana_dashboard');
    expect(cm!.metadata!.annotations).toEqual({ grafana_folder: 'VictoriaMetrics' });
  });

  it('disabled: none', () => {
    expect(configMaps(['grafanaDashboard.enabled=false'])).toEqual([]);
  });
});
