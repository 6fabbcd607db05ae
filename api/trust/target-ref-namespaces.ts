// The namespaces a VMUser's or VMAuth's targetRefs name (crd.namespace, crd.objects[].namespace, in
// targetRefs, defaultTargetRefs and unauthorizedUserAccessSpec.targetRefs: wherever a `crd` ref
// is in the body). Reads routed to another namespace's VMClusters need allowCrossNamespaceTargetRefs;
// an empty namespace is the operator's "this namespace".
import { ownValue } from '../data-object';
import type { ValidationIssue } from '../validate';
import { formatPath } from '../validate';
import type { ManagedBody } from './bodies';
import { allowedBy, type TrustPolicy } from './policy';
import { forEachObject, isObject, objectAt, type Path } from './walk';

export const crossNamespaceMessage = (target: string, namespace: string) =>
  `targetRefs to namespace ${JSON.stringify(target)} are not allowed from namespace ${JSON.stringify(namespace)} ${allowedBy('crossNamespaceTargetRefs')}`;

export function targetRefNamespaceIssues(namespace: string, b: ManagedBody, policy: TrustPolicy): ValidationIssue[] {
  if ((b.kind !== 'VMUser' && b.kind !== 'VMAuth') || policy.crossNamespaceTargetRefs) return [];
  const issues: ValidationIssue[] = [];
  const check = (ns: unknown, at: () => Path) => {
    if (typeof ns === 'string' && ns !== '' && ns !== namespace)
      issues.push({ path: formatPath([...b.path, ...at()]), message: crossNamespaceMessage(ns, namespace) });
  };
  forEachObject(b.body, (obj, at) => {
    const crd = objectAt(obj, 'crd');
    if (!crd) return;
    check(ownValue(crd, 'namespace'), () => [...at(), 'crd', 'namespace']);
    const objects = ownValue(crd, 'objects');
    if (!Array.isArray(objects)) return;
    objects.forEach((o, j) => {
      if (isObject(o)) check(ownValue(o, 'namespace'), () => [...at(), 'crd', 'objects', j, 'namespace']);
    });
  });
  return issues;
}
