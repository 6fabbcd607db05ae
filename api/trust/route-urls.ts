// URLs a VMUser or VMAuth routes reads to, written out rather than named as a CRD object: the
// targetRef `static` form (url, urls: in a VMUser's targetRefs, a VMAuth's defaultTargetRefs and
// unauthorizedUserAccessSpec.targetRefs), `url_prefix` (unauthorizedUserAccessSpec, its url_map
// entries, the deprecated unauthorizedAccessConfig) and `default_url` (the VMUserConfigOptions
// inlined in VMUserSpec, VMAuthSpec and unauthorizedUserAccessSpec). Found wherever they are in the
// body, so a field the operator adds in one more place is judged too. Each URL's host must be a
// Service of the namespace or in trustPolicy.allowedRouteHosts (./hosts.ts).
import { ownValue } from '../data-object';
import type { ValidationIssue } from '../validate';
import { formatPath } from '../validate';
import type { ManagedBody } from './bodies';
import { urlHostProblem } from './hosts';
import { allowedBy, type TrustPolicy } from './policy';
import { forEachObject, objectAt, stringsOf, type Path } from './walk';

/** The fields holding a URL or a list of them, and the objects holding them (`static`: only inside that key). */
const URL_FIELDS: ReadonlyArray<{ within?: string; field: string }> = [
  { within: 'static', field: 'url' },
  { within: 'static', field: 'urls' },
  { field: 'url_prefix' },
  { field: 'default_url' },
];

export function routeURLIssues(namespace: string, b: ManagedBody, policy: TrustPolicy): ValidationIssue[] {
  if (b.kind !== 'VMUser' && b.kind !== 'VMAuth') return [];
  const issues: ValidationIssue[] = [];
  forEachObject(b.body, (obj, at) => {
    for (const { within, field } of URL_FIELDS) {
      const holder = within === undefined ? obj : objectAt(obj, within);
      if (!holder) continue;
      for (const { at: rel, value } of stringsOf(ownValue(holder, field))) {
        const problem = urlHostProblem(value, namespace, policy.routeHosts);
        if (problem === undefined) continue;
        const path: Path = [...b.path, ...at(), ...(within === undefined ? [] : [within]), field, ...rel];
        issues.push({ path: formatPath(path), message: `a ${b.kind} URL that ${problem} ${allowedBy('routeHosts')}` });
      }
    }
  });
  return issues;
}
