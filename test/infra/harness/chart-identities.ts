/**
 * The Helm chart's identities on a real API server: render the chart (`helm template`), apply its
 * ServiceAccounts, (Cluster)Roles and (Cluster)RoleBindings, and hand back a KubeConfig per
 * ServiceAccount (a TokenRequest bearer token), so that a test runs the worker's or the trigger's
 * code with exactly the rights the chart grants. Also lists the rendered RBAC rules one by one (for
 * a test that every rule is needed) and renders a copy without one of them.
 */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { VM_OPERATOR_CRDS } from './kube';
import { waitFor } from './processes';
import { REPO_ROOT, toolPath, toolVersions } from './tools';

export const CHART_DIR = path.join(REPO_ROOT, 'charts', 'vmrollout');
/** The VM operator's CRDs the chart's objects need, as in a cluster where the operator runs (its VMServiceScrape and VMRule). */
export const CHART_VM_CRDS = [
  VM_OPERATOR_CRDS,
  path.join(REPO_ROOT, 'test', 'fixtures', 'crds', 'vm-servicescrape-crd.yaml'),
  path.join(REPO_ROOT, 'test', 'fixtures', 'alerts', 'vmrule-crd.yaml'),
];
/** The release name unless told another: objects are named `<release>-vmrollout-…`. */
export const DEFAULT_RELEASE = 'rel';
/** TokenRequest lifetime: longer than any test. */
const TOKEN_SECONDS = 2 * 3600;

export type Component = 'worker' | 'trigger';
const COMPONENTS: Component[] = ['worker', 'trigger'];
const RBAC_KINDS = ['ServiceAccount', 'Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'];
const CLUSTER_SCOPED = ['ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'Namespace'];

export interface RenderOptions {
  releaseNamespace: string;
  /** `helm --set` values, e.g. `watchNamespaces={a,b}`. */
  values?: string[];
  /** `helm --values` files, before the --set values. */
  valueFiles?: string[];
  /** Default CHART_DIR (e.g. a copy of it). */
  chartDir?: string;
  /** Default DEFAULT_RELEASE. */
  release?: string;
  includeCRDs?: boolean;
}

/** `<release>-vmrollout-<component>`: the ServiceAccount (and the main Role) of a component. */
export function serviceAccountName(component: Component, release = DEFAULT_RELEASE): string {
  return `${release}-vmrollout-${component}`;
}

/**
 * `helm template` renders for this Kubernetes (the version the tests run; helm's own default, 1.20,
 * is below the chart's kubeVersion).
 */
export const KUBE_VERSION_ARGS: readonly string[] = ['--kube-version', toolVersions().KUBERNETES_VERSION!];

/** `helm template` of the chart, parsed. A failing render (e.g. a `fail` of the chart) throws with helm's stderr. */
export function renderChart(opts: RenderOptions): k8s.KubernetesObject[] {
  const args = ['template', opts.release ?? DEFAULT_RELEASE, opts.chartDir ?? CHART_DIR, '--namespace', opts.releaseNamespace, ...KUBE_VERSION_ARGS];
  if (opts.includeCRDs) args.push('--include-crds');
  for (const f of opts.valueFiles ?? []) args.push('--values', f);
  for (const v of opts.values ?? []) args.push('--set', v);
  let out: string;
  try {
    out = execFileSync(toolPath('helm'), args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const stderr = (err as { stderr?: string | Buffer }).stderr?.toString() ?? '';
    throw new Error(`helm ${args.join(' ')} failed: ${stderr.trim() || String(err)}`);
  }
  return parseAllDocuments(out)
    .map((d) => d.toJS() as k8s.KubernetesObject | null)
    .filter((o): o is k8s.KubernetesObject => !!o);
}

/** The rendered ServiceAccounts, (Cluster)Roles and (Cluster)RoleBindings. */
export function rbacObjects(rendered: k8s.KubernetesObject[]): k8s.KubernetesObject[] {
  return rendered.filter((o) => RBAC_KINDS.includes(o.kind ?? ''));
}

/** One rule of a rendered Role or ClusterRole, and the ServiceAccounts bound to that role. */
export interface RenderedRule {
  kind: 'Role' | 'ClusterRole';
  /** The Role's namespace; undefined for a ClusterRole. */
  namespace?: string;
  name: string;
  ruleIndex: number;
  rule: k8s.V1PolicyRule;
  /** The components whose ServiceAccount a rendered binding binds to this role (in the same namespace for a Role). */
  components: Component[];
}

/** Identifies one rendered rule (what withoutRule takes). */
export type RuleRef = Pick<RenderedRule, 'kind' | 'namespace' | 'name' | 'ruleIndex'>;

export const ruleLabel = (r: RuleRef): string => `${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name} rules[${r.ruleIndex}]`;

function componentOf(subject: k8s.RbacV1Subject, release: string): Component | undefined {
  return subject.kind === 'ServiceAccount' ? COMPONENTS.find((c) => serviceAccountName(c, release) === subject.name) : undefined;
}

/** Every rule of every rendered Role and ClusterRole, as (kind, namespace, name, ruleIndex), in rendering order. */
export function renderedRbacRules(rendered: k8s.KubernetesObject[], release = DEFAULT_RELEASE): RenderedRule[] {
  const bindings = rendered.filter((o) => o.kind === 'RoleBinding' || o.kind === 'ClusterRoleBinding') as Array<k8s.V1RoleBinding | k8s.V1ClusterRoleBinding>;
  const out: RenderedRule[] = [];
  for (const o of rendered) {
    if (o.kind !== 'Role' && o.kind !== 'ClusterRole') continue;
    const role = o as k8s.V1Role | k8s.V1ClusterRole;
    const kind = o.kind;
    const namespace = kind === 'Role' ? role.metadata?.namespace : undefined;
    const name = role.metadata!.name!;
    const components = new Set<Component>();
    for (const b of bindings) {
      if (b.roleRef.kind !== kind || b.roleRef.name !== name) continue;
      if (kind === 'Role' && (b.kind !== 'RoleBinding' || b.metadata?.namespace !== namespace)) continue;
      for (const s of b.subjects ?? []) {
        const c = componentOf(s, release);
        if (c) components.add(c);
      }
    }
    (role.rules ?? []).forEach((rule, ruleIndex) => out.push({ kind, namespace, name, ruleIndex, rule, components: [...components].sort() }));
  }
  return out;
}

/** A deep copy of `rendered` without one rule (a role left with no rule keeps `rules: []`). */
export function withoutRule(rendered: k8s.KubernetesObject[], ref: RuleRef): k8s.KubernetesObject[] {
  let found = false;
  const copy = JSON.parse(JSON.stringify(rendered)) as k8s.KubernetesObject[];
  for (const o of copy) {
    if (o.kind !== ref.kind || o.metadata?.name !== ref.name) continue;
    if (ref.kind === 'Role' && o.metadata?.namespace !== ref.namespace) continue;
    const role = o as k8s.V1Role;
    if (!role.rules || ref.ruleIndex >= role.rules.length) break;
    role.rules.splice(ref.ruleIndex, 1);
    found = true;
  }
  if (!found) throw new Error(`withoutRule: no ${ruleLabel(ref)} in the rendered chart`);
  return copy;
}

/** The namespaces the rendered objects are in (the release namespace included). */
function namespacesOf(objects: k8s.KubernetesObject[], releaseNamespace: string): string[] {
  const set = new Set([releaseNamespace]);
  for (const o of objects) if (o.metadata?.namespace) set.add(o.metadata.namespace);
  return [...set];
}

async function ensureNamespace(core: k8s.CoreV1Api, name: string): Promise<void> {
  try {
    await core.createNamespace({ body: { metadata: { name } } });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
}

/**
 * Applies `objects` (server-side apply, field manager `vmrollout-test`: created or brought to the
 * rendered state; objects of an earlier install that this render lacks are NOT deleted).
 * Namespaced objects without a namespace go to `releaseNamespace`.
 */
export async function applyObjects(kc: k8s.KubeConfig, objects: k8s.KubernetesObject[], releaseNamespace: string): Promise<void> {
  const api = k8s.KubernetesObjectApi.makeApiClient(kc);
  for (const obj of objects) {
    const body = { ...obj, metadata: { ...obj.metadata } };
    if (!CLUSTER_SCOPED.includes(obj.kind ?? '') && !body.metadata.namespace) body.metadata.namespace = releaseNamespace;
    await api.patch(body, undefined, undefined, 'vmrollout-test', true, k8s.PatchStrategy.ServerSideApply);
  }
}

/** A KubeConfig for the API server of `kc` (its cluster and CA) that authenticates with `token`. */
export function tokenKubeConfig(kc: k8s.KubeConfig, user: string, token: string, namespace?: string): k8s.KubeConfig {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('tokenKubeConfig: the kubeconfig has no current cluster');
  const out = new k8s.KubeConfig();
  out.loadFromOptions({
    clusters: [
      {
        name: cluster.name,
        server: cluster.server,
        caData: cluster.caData,
        caFile: cluster.caFile,
        skipTLSVerify: cluster.skipTLSVerify,
        tlsServerName: cluster.tlsServerName,
      },
    ],
    users: [{ name: user, token }],
    contexts: [{ name: user, cluster: cluster.name, user, ...(namespace ? { namespace } : {}) }],
    currentContext: user,
  });
  return out;
}

/** A bearer token of the ServiceAccount (TokenRequest API), valid TOKEN_SECONDS. */
export async function serviceAccountToken(kc: k8s.KubeConfig, namespace: string, name: string): Promise<string> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const tr = await core.createNamespacedServiceAccountToken({ name, namespace, body: { spec: { audiences: [], expirationSeconds: TOKEN_SECONDS } } });
  const token = tr.status?.token;
  if (!token) throw new Error(`TokenRequest for ServiceAccount ${namespace}/${name} returned no token`);
  return token;
}

/** Waits until the RBAC authorizer (its informers) grants each component the first rule bound to it. */
async function waitForRbac(kc: k8s.KubeConfig, rules: RenderedRule[], releaseNamespace: string, release: string): Promise<void> {
  const authz = kc.makeApiClient(k8s.AuthorizationV1Api);
  for (const component of COMPONENTS) {
    const r = rules.find((x) => x.components.includes(component) && x.rule.verbs.length > 0 && (x.rule.resources?.length ?? 0) > 0);
    if (!r) continue;
    const [resource, subresource] = r.rule.resources![0]!.split('/');
    const resourceAttributes: k8s.V1ResourceAttributes = {
      group: r.rule.apiGroups?.[0] ?? '',
      resource,
      subresource,
      verb: r.rule.verbs[0],
      namespace: r.namespace ?? 'default',
      name: r.rule.resourceNames?.[0],
    };
    const user = `system:serviceaccount:${releaseNamespace}:${serviceAccountName(component, release)}`;
    await waitFor(async () => (await authz.createSubjectAccessReview({ body: { spec: { user, resourceAttributes } } })).status?.allowed, {
      timeoutMs: 15_000,
      description: `RBAC to grant ${user} ${ruleLabel(r)}`,
    });
  }
}

export interface ChartIdentities {
  /** As the worker's ServiceAccount. */
  worker: k8s.KubeConfig;
  /** As the trigger's ServiceAccount. */
  trigger: k8s.KubeConfig;
  /** Everything `helm template` rendered (Deployments etc. included, though only RBAC was applied). */
  rendered: k8s.KubernetesObject[];
}

/**
 * Renders the chart with `values`, creates the release namespace (and every namespace a Role or
 * RoleBinding is in) if missing, applies the ServiceAccounts, (Cluster)Roles and (Cluster)RoleBindings
 * (not the Deployments, Services, CRDs or VMServiceScrape) as the admin of `kc`, and returns a
 * KubeConfig per ServiceAccount (bearer token of a TokenRequest, same API server and CA as `kc`).
 * `rendered` may be given instead of rendering (e.g. withoutRule's copy).
 */
export async function installChartIdentities(
  kc: k8s.KubeConfig,
  opts: { releaseNamespace: string; values: string[]; release?: string; rendered?: k8s.KubernetesObject[] },
): Promise<ChartIdentities> {
  const release = opts.release ?? DEFAULT_RELEASE;
  const rendered = opts.rendered ?? renderChart({ releaseNamespace: opts.releaseNamespace, values: opts.values, release });
  const rbac = rbacObjects(rendered);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  for (const ns of namespacesOf(rbac, opts.releaseNamespace)) await ensureNamespace(core, ns);
  // ServiceAccounts and roles before the bindings that name them.
  const order = (o: k8s.KubernetesObject) => RBAC_KINDS.indexOf(o.kind ?? '');
  await applyObjects(
    kc,
    [...rbac].sort((a, b) => order(a) - order(b)),
    opts.releaseNamespace,
  );
  await waitForRbac(kc, renderedRbacRules(rendered, release), opts.releaseNamespace, release);
  const identity = async (component: Component) => {
    const name = serviceAccountName(component, release);
    return tokenKubeConfig(
      kc,
      `system:serviceaccount:${opts.releaseNamespace}:${name}`,
      await serviceAccountToken(kc, opts.releaseNamespace, name),
      opts.releaseNamespace,
    );
  };
  return { worker: await identity('worker'), trigger: await identity('trigger'), rendered };
}
