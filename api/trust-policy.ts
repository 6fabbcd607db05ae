// What a VMDistributedCluster may make vmrollout do on its author's behalf. vmrollout acts with its
// own (broader) rights, so whoever may create a VMDistributedCluster could borrow them: full specs
// create objects (any image, service account, route) and targetRefs can route reads to VMClusters
// of other namespaces. The person who installs vmrollout decides where that is allowed (chart values
// createNamespaces, allowCrossNamespaceTargetRefs); elsewhere such a spec is Invalid. The trigger
// checks it before starting a workflow, the worker again on the workflow's input.
import { formatPath, validateSpec, type ValidationIssue, type ValidationResult } from './validate';
import type { JsonValue, ManagedObject, NormalizedSpec } from './types';

export interface TrustPolicy {
  /** Namespaces whose VMDistributedClusters may use full specs (create objects). */
  createNamespaces: readonly string[];
  /** Whether targetRefs (VMUser, VMAuth) may name objects of another namespace. */
  crossNamespaceTargetRefs: boolean;
}

/** Nothing enabled: overlays on existing objects, routes within the namespace. */
export const STRICT_TRUST_POLICY: TrustPolicy = { createNamespaces: [], crossNamespaceTargetRefs: false };

export const createNotEnabledMessage = (namespace: string) =>
  `full specs create objects, which is not enabled in namespace ${JSON.stringify(namespace)} (vmrollout's chart value createNamespaces); manage an existing object with overrideSpec instead`;

export const crossNamespaceMessage = (target: string, namespace: string) =>
  `targetRefs to namespace ${JSON.stringify(target)} are not allowed from namespace ${JSON.stringify(namespace)} (vmrollout's chart value allowCrossNamespaceTargetRefs)`;

const isObject = (v: JsonValue | undefined): v is Record<string, JsonValue> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The namespaces a targetRefs list names, with the path of each (relative to the list). */
function targetRefNamespaces(refs: JsonValue | undefined): Array<{ path: (string | number)[]; namespace: string }> {
  if (!Array.isArray(refs)) return [];
  const out: Array<{ path: (string | number)[]; namespace: string }> = [];
  refs.forEach((ref, i) => {
    const crd = isObject(ref) ? ref.crd : undefined;
    if (!isObject(crd)) return;
    if (typeof crd.namespace === 'string') out.push({ path: [i, 'crd', 'namespace'], namespace: crd.namespace });
    if (Array.isArray(crd.objects)) {
      crd.objects.forEach((o, j) => {
        if (isObject(o) && typeof o.namespace === 'string') out.push({ path: [i, 'crd', 'objects', j, 'namespace'], namespace: o.namespace });
      });
    }
  });
  return out;
}

/** Where a route object's targetRefs lists are, per kind. */
const TARGET_REF_LISTS: Record<'vmuser' | 'vmauth', string[][]> = {
  vmuser: [['targetRefs']],
  vmauth: [['unauthorizedUserAccessSpec', 'targetRefs']],
};

/** The issues of `spec` (of a VMDistributedCluster in `namespace`) under `policy`; empty when allowed. */
export function trustIssues(namespace: string, spec: NormalizedSpec, policy: TrustPolicy): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const managed: Array<{ path: (string | number)[]; object: ManagedObject; routes?: 'vmuser' | 'vmauth' }> = [
    ...spec.zones.flatMap((z, i) => [
      { path: ['zones', i, 'vmcluster'], object: z.vmcluster },
      ...(z.vmuser ? [{ path: ['zones', i, 'vmuser'], object: z.vmuser, routes: 'vmuser' as const }] : []),
    ]),
    { path: ['vmauth'], object: spec.vmauth, routes: 'vmauth' },
    { path: ['vmagent'], object: spec.vmagent },
  ];
  const mayCreate = policy.createNamespaces.includes(namespace);
  for (const m of managed) {
    if (m.object.spec && !mayCreate) issues.push({ path: formatPath([...m.path, 'spec']), message: createNotEnabledMessage(namespace) });
    if (!m.routes || policy.crossNamespaceTargetRefs) continue;
    for (const form of ['spec', 'overrideSpec'] as const) {
      const body = m.object[form];
      if (!body) continue;
      for (const listPath of TARGET_REF_LISTS[m.routes]) {
        let list: JsonValue | undefined = body;
        for (const k of listPath) list = isObject(list) ? list[k] : undefined;
        for (const ref of targetRefNamespaces(list)) {
          if (ref.namespace !== '' && ref.namespace !== namespace) {
            issues.push({ path: formatPath([...m.path, form, ...listPath, ...ref.path]), message: crossNamespaceMessage(ref.namespace, namespace) });
          }
        }
      }
    }
  }
  return issues;
}

/** validateSpec, then the policy's issues for a VMDistributedCluster in `namespace`. */
export function validateUnderPolicy(raw: unknown, namespace: string, policy: TrustPolicy): ValidationResult {
  const v = validateSpec(raw);
  if (!v.success) return v;
  const issues = trustIssues(namespace, v.spec, policy);
  return issues.length ? { success: false, issues } : v;
}
