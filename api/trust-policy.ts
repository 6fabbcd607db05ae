// What a VMDistributedCluster may make vmrollout do on its author's behalf. vmrollout acts with its
// own (broader) rights, so whoever may create a VMDistributedCluster could borrow them: full specs
// create objects, and full specs and overlays alike choose where the objects route reads and send
// samples, which objects they select, which images their pods run, as whom and with what access to
// the node. The person who installs vmrollout decides what is allowed beyond the namespace (chart
// values createNamespaces, allowCrossNamespaceTargetRefs, trustPolicy.*: api/trust/policy.ts);
// anything else makes the spec Invalid. The trigger checks it before starting a workflow, the worker
// again on the workflow's input and on every write. One module per rule, under api/trust/.
import type { NormalizedSpec } from './types';
import { formatPath, validateSpec, type ValidationIssue, type ValidationResult } from './validate';
import { managedBodies, type ManagedBody } from './trust/bodies';
import { podFieldIssues } from './trust/pod-fields';
import { otherDestinationIssues } from './trust/other-destinations';
import { allowedBy, type TrustPolicy } from './trust/policy';
import { remoteWriteIssues } from './trust/remote-write';
import { routeURLIssues } from './trust/route-urls';
import { selectorIssues } from './trust/selectors';
import { targetRefNamespaceIssues } from './trust/target-ref-namespaces';

export { CHART_VALUE, STRICT_TRUST_POLICY, type TrustPolicy } from './trust/policy';
export { crossNamespaceMessage } from './trust/target-ref-namespaces';

export const createNotEnabledMessage = (namespace: string) =>
  `full specs create objects, which is not enabled in namespace ${JSON.stringify(namespace)} ${allowedBy('createNamespaces')}; manage an existing object with overrideSpec instead`;

type BodyRule = (namespace: string, b: ManagedBody, policy: TrustPolicy) => ValidationIssue[];

/** The rules every full spec and overlay is judged by. */
const BODY_RULES: readonly BodyRule[] = [targetRefNamespaceIssues, routeURLIssues, remoteWriteIssues, otherDestinationIssues, selectorIssues, podFieldIssues];

/** The issues of `spec` (of a VMDistributedCluster in `namespace`) under `policy`; empty when allowed. */
export function trustIssues(namespace: string, spec: NormalizedSpec, policy: TrustPolicy): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const mayCreate = policy.createNamespaces.includes(namespace);
  for (const b of managedBodies(spec)) {
    if (b.form === 'spec' && !mayCreate) issues.push({ path: formatPath(b.path), message: createNotEnabledMessage(namespace) });
    for (const rule of BODY_RULES) issues.push(...rule(namespace, b, policy));
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
