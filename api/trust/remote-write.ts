// Where the VMAgent sends every sample it collects: spec.remoteWrite[].url. Each URL's host must be a
// Service of the namespace or in trustPolicy.allowedRemoteWriteHosts (./hosts.ts). A merge patch
// replaces the whole list, so an overlay's list is judged as a full spec's is.
import { ownValue } from '../data-object';
import type { ValidationIssue } from '../validate';
import { formatPath } from '../validate';
import type { ManagedBody } from './bodies';
import { urlHostProblem } from './hosts';
import { allowedBy, type TrustPolicy } from './policy';
import { isObject } from './walk';

export function remoteWriteIssues(namespace: string, b: ManagedBody, policy: TrustPolicy): ValidationIssue[] {
  if (b.kind !== 'VMAgent') return [];
  const list = ownValue(b.body, 'remoteWrite');
  if (!Array.isArray(list)) return [];
  const issues: ValidationIssue[] = [];
  list.forEach((entry, i) => {
    const url = isObject(entry) ? ownValue(entry, 'url') : undefined;
    if (typeof url !== 'string') return;
    const problem = urlHostProblem(url, namespace, policy.remoteWriteHosts);
    if (problem !== undefined) {
      issues.push({ path: formatPath([...b.path, 'remoteWrite', i, 'url']), message: `a remote write URL that ${problem} ${allowedBy('remoteWriteHosts')}` });
    }
  });
  return issues;
}
