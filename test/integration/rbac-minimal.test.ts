// Every rule of the chart's rendered Roles is needed, and together they are enough: on a real
// kube-apiserver (RBAC) with a real Temporal dev server, the worker's real activities and the real
// trigger run as the chart's ServiceAccounts (test/integration/rbac-exercises.ts).
//  A. With the full render both exercises pass.
//  B. Per rendered rule: the render without that rule (a fresh release in a fresh namespace, so
//     nothing of another case grants anything), and the exercise of every component bound to the
//     rule: at least one of them fails.
// The rules are listed at module load (helm template is synchronous); case k renders the same
// values for its own namespace and release and drops its k-th rule, checked to be the same rule.
import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { VM_KINDS } from '../../api/constants';
import { DRIFT_KINDS } from '../../trigger/drift';
import {
  installChartIdentities,
  renderChart,
  renderedRbacRules,
  ruleLabel,
  serviceAccountName,
  withoutRule,
  type Component,
  type RenderedRule,
} from '../infra/harness/chart-identities';
import { installCRDs, startKube, VM_OPERATOR_CRDS, type KubeCluster } from '../infra/harness/kube';
import { waitFor } from '../infra/harness/processes';
import { startTemporalDevEnv } from '../infra/harness/temporal';
import { createVmagentAuthSecret, triggerExercise, workerExercise, type ExerciseContext, type Failures } from './rbac-exercises';

jest.setTimeout(60_000);

const CRD_FILE = path.resolve(__dirname, '..', '..', 'charts', 'vmrollout', 'crds', 'vmdistributedclusters.vmrollout.io.yaml');
const RELEASE_NS = 'vmrollout-system';

/** Case 0 is the full render (test A); case k+1 drops rule k. Each has its own watched namespace and release. */
const caseOf = (i: number) => ({ ns: `rbac-${i}`, release: `r${i}` });
const valuesFor = (ns: string) => [`watchNamespaces={${ns}}`, `createNamespaces={${ns}}`, `vmauths={${ns}/vm-global}`, 'vmagentMetricsAuthSecret=vmagent-auth'];
const renderCase = (i: number) => {
  const c = caseOf(i);
  const rendered = renderChart({ releaseNamespace: RELEASE_NS, values: valuesFor(c.ns), release: c.release });
  return { ...c, rendered, rules: renderedRbacRules(rendered, c.release) };
};

const BASE = renderCase(0);
const RULES = BASE.rules;

const describeRule = (r: RenderedRule) =>
  `${ruleLabel(r)} {${r.rule.apiGroups?.join(',') || 'core'}: ${r.rule.resources?.join(',')}${r.rule.resourceNames ? ` [${r.rule.resourceNames.join(',')}]` : ''}: ${r.rule.verbs.join(',')}} → ${r.components.join('+')}`;

/** One (resource, verb) that a rule grants, for a rule that grants more than one. */
const GRANTS = RULES.flatMap((r, k) => {
  const pairs = (r.rule.resources ?? []).flatMap((resource) => r.rule.verbs.map((verb) => ({ k, resource, verb })));
  return pairs.length > 1 ? pairs : [];
});

/**
 * A deep copy of `rendered` where rule `ref` grants everything it did but `verb` on `resource`:
 * the rule is split per resource, in place (same apiGroups and resourceNames).
 */
function withoutGrant(rendered: k8s.KubernetesObject[], ref: RenderedRule, resource: string, verb: string): k8s.KubernetesObject[] {
  const copy = JSON.parse(JSON.stringify(rendered)) as k8s.KubernetesObject[];
  const role = copy.find((o) => o.kind === ref.kind && o.metadata?.name === ref.name && o.metadata?.namespace === ref.namespace) as k8s.V1Role;
  const rule = role.rules![ref.ruleIndex]!;
  const split = rule
    .resources!.map((res) => ({ ...rule, resources: [res], verbs: res === resource ? rule.verbs.filter((v) => v !== verb) : rule.verbs }))
    .filter((r) => r.verbs.length > 0);
  role.rules!.splice(ref.ruleIndex, 1, ...split);
  return copy;
}

let kube: KubeCluster;
let temporal: TestWorkflowEnvironment;
const started = Date.now();
const results: Array<{ rule: string; ms: number; outcome: Partial<Record<Component, Failures>> }> = [];

beforeAll(async () => {
  [kube, temporal] = await Promise.all([startKube(), startTemporalDevEnv()]);
  await installCRDs(kube.kubeConfig, [VM_OPERATOR_CRDS, CRD_FILE]);
  await kube.kubeConfig.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: RELEASE_NS } } });
  await createVmagentAuthSecret(kube.kubeConfig, RELEASE_NS);
}, 180_000);

afterAll(async () => {
  await temporal?.teardown();
  await kube?.stop();
  const lines = results.map((r) => {
    const parts = (Object.entries(r.outcome) as Array<[Component, Failures]>).map(
      ([c, f]) => `    ${c}: ${f.length ? f.map((x) => `FAILED ${x}`).join('\n      ') : 'passed'}`,
    );
    return `  ${r.rule} (${r.ms} ms)\n${parts.join('\n')}`;
  });
  console.log(`rbac-minimal: ${RULES.length} rendered rules, file ${Math.round((Date.now() - started) / 1000)} s\n${lines.join('\n')}`);
});

/**
 * Waits until the RBAC authorizer grants every (resource, verb, name) of every rule of `rules` to
 * the ServiceAccounts bound to it: a Role applied a moment ago must not look like a missing one.
 */
async function waitGranted(rules: RenderedRule[], release: string): Promise<void> {
  const authz = kube.kubeConfig.makeApiClient(k8s.AuthorizationV1Api);
  for (const r of rules) {
    for (const component of r.components) {
      const user = `system:serviceaccount:${RELEASE_NS}:${serviceAccountName(component, release)}`;
      for (const res of r.rule.resources ?? []) {
        const [resource, subresource] = res.split('/');
        for (const verb of r.rule.verbs) {
          for (const name of r.rule.resourceNames ?? [undefined]) {
            const resourceAttributes: k8s.V1ResourceAttributes = {
              group: r.rule.apiGroups?.[0] ?? '',
              resource,
              subresource,
              verb,
              namespace: r.namespace ?? 'default',
              name,
            };
            await waitFor(async () => (await authz.createSubjectAccessReview({ body: { spec: { user, resourceAttributes } } })).status?.allowed, {
              timeoutMs: 10_000,
              intervalMs: 50,
              description: `RBAC to grant ${user} ${verb} ${res} (${ruleLabel(r)})`,
            });
          }
        }
      }
    }
  }
}

/** Installs `rendered` as release `release`, waits for its grants, runs the exercises of `components`. */
async function runCase(
  c: { ns: string; release: string },
  rendered: k8s.KubernetesObject[],
  components: Component[],
): Promise<Partial<Record<Component, Failures>>> {
  const ids = await installChartIdentities(kube.kubeConfig, { releaseNamespace: RELEASE_NS, values: [], release: c.release, rendered });
  await waitGranted(renderedRbacRules(rendered, c.release), c.release);
  const ctx = (kc: k8s.KubeConfig): ExerciseContext => ({
    admin: kube.kubeConfig,
    kc,
    temporal: temporal.client,
    ns: c.ns,
    releaseNamespace: RELEASE_NS,
    taskQueue: `rbac-${randomUUID()}`,
  });
  const outcome: Partial<Record<Component, Failures>> = {};
  if (components.includes('worker')) outcome.worker = await workerExercise(ctx(ids.worker));
  if (components.includes('trigger')) outcome.trigger = (await triggerExercise(ctx(ids.trigger))).failures;
  return outcome;
}

test('the rendered rules: each bound to a component; the trigger drift-watches exactly the VM kinds its rule lists', () => {
  expect(RULES.length).toBeGreaterThan(0);
  for (const r of RULES) expect(r.components.length).toBeGreaterThan(0);
  // Roles for every value set: the components' own, create, the VMAuth config Secret, the vmagent credentials.
  const roles = new Set(RULES.map((r) => `${r.kind} ${r.namespace}/${r.name}`));
  expect([...roles].sort()).toEqual(
    [
      `Role rbac-0/${serviceAccountName('trigger', 'r0')}`,
      `Role rbac-0/${serviceAccountName('worker', 'r0')}`,
      `Role rbac-0/${serviceAccountName('worker', 'r0')}-create`,
      `Role rbac-0/${serviceAccountName('worker', 'r0')}-vmauth-config`,
      `Role ${RELEASE_NS}/${serviceAccountName('worker', 'r0')}-vmagent-metrics-auth`,
    ].sort(),
  );
  const driftRule = RULES.find((r) => r.components.includes('trigger') && r.rule.apiGroups?.includes('operator.victoriametrics.com'))!;
  expect([...driftRule.rule.resources!].sort()).toEqual(DRIFT_KINDS.map((k) => VM_KINDS[k]).sort());
  expect(driftRule.rule.verbs).toEqual(['list', 'watch']);
});

test('A: with the full render, the worker and the trigger do everything as their ServiceAccounts', async () => {
  const t0 = Date.now();
  const outcome = await runCase(BASE, BASE.rendered, ['worker', 'trigger']);
  results.push({ rule: '(full render)', ms: Date.now() - t0, outcome });
  expect(outcome).toEqual({ worker: [], trigger: [] });
});

describe('B: without any one rule, an exercise of a component bound to it fails', () => {
  test.each(RULES.map((r, k) => [describeRule(r), k] as const))('without %s', async (label, k) => {
    const t0 = Date.now();
    const c = renderCase(k + 1);
    const target = c.rules[k]!;
    // The same rule as in the listing, for this case's namespace and release.
    expect({ kind: target.kind, ruleIndex: target.ruleIndex, rule: target.rule, components: target.components }).toEqual({
      kind: RULES[k]!.kind,
      ruleIndex: RULES[k]!.ruleIndex,
      rule: RULES[k]!.rule,
      components: RULES[k]!.components,
    });
    const outcome = await runCase(c, withoutRule(c.rendered, target), target.components);
    results.push({ rule: label, ms: Date.now() - t0, outcome });
    const failed = Object.values(outcome).flat();
    expect(failed.length).toBeGreaterThan(0);
  });
});

describe('C: within a rule that grants several (resource, verb), without any one of them, an exercise fails', () => {
  test.each(GRANTS.map((g, j) => [`${g.verb} ${g.resource}`, ruleLabel(RULES[g.k]!), j] as const))('without %s of %s', async (grant, rule, j) => {
    const t0 = Date.now();
    const { k, resource, verb } = GRANTS[j]!;
    const c = renderCase(100 + j);
    const target = c.rules[k]!;
    expect(target.rule).toEqual(RULES[k]!.rule);
    const outcome = await runCase(c, withoutGrant(c.rendered, target, resource, verb), target.components);
    results.push({ rule: `${rule}: ${verb} ${resource}`, ms: Date.now() - t0, outcome });
    expect(Object.values(outcome).flat().length).toBeGreaterThan(0);
  });
});
