// Objects a VMAuth or VMAgent picks up by label selection: a VMAuth's VMUsers (userSelector,
// userNamespaceSelector), a VMAgent's scrape objects (serviceScrape, podScrape, probe, nodeScrape,
// staticScrape and scrapeConfig selectors), each a pair with selectAllByDefault. The operator
// (internal/controller/operator/factory/k8stools/selectors.go) selects
//   - in the object's namespace: a selector set, no namespace selector;
//   - in every namespace: no selector, no namespace selector and selectAllByDefault: true, or an
//     empty namespace selector;
//   - in the namespaces matching a non-empty namespace selector.
// Selecting another namespace's VMUsers routes its reads; another namespace's scrape objects bring
// their Secrets (bearer tokens, basic auth) into this namespace's VMAgent config. A namespace
// selector is accepted only when it pins kubernetes.io/metadata.name to the namespace.
// In an overlay a field left out keeps the live value, which vmrollout does not see here: an
// overlay touching a pair is judged with selectAllByDefault true when it does not set it.
import { ownValue } from '../data-object';
import type { ValidationIssue } from '../validate';
import { formatPath } from '../validate';
import type { ManagedBody, VmKind } from './bodies';
import { allowedBy, type TrustPolicy } from './policy';
import { isObject } from './walk';
import type { JsonObject, JsonValue } from '../types';

interface Pair {
  selector: string;
  namespaceSelector: string;
  /** What it selects. */
  what: string;
}

const scrapePair = (p: string, what: string): Pair => ({ selector: `${p}Selector`, namespaceSelector: `${p}NamespaceSelector`, what });

/** Each kind's pairs, and what selectAllByDefault selects in all of them. */
const SELECTION: Partial<Record<VmKind, { pairs: readonly Pair[]; all: string }>> = {
  VMAuth: { pairs: [{ selector: 'userSelector', namespaceSelector: 'userNamespaceSelector', what: 'VMUsers' }], all: 'VMUsers' },
  VMAgent: {
    pairs: [
      scrapePair('serviceScrape', 'VMServiceScrapes'),
      scrapePair('podScrape', 'VMPodScrapes'),
      scrapePair('probe', 'VMProbes'),
      scrapePair('nodeScrape', 'VMNodeScrapes'),
      scrapePair('staticScrape', 'VMStaticScrapes'),
      scrapePair('scrapeConfig', 'VMScrapeConfigs'),
    ],
    all: 'scrape objects (VMServiceScrapes, VMPodScrapes, VMProbes, VMNodeScrapes, VMStaticScrapes, VMScrapeConfigs)',
  },
};

const NAME_LABEL = 'kubernetes.io/metadata.name';

/** Whether label selector `s` matches at most namespace `ns` (one of its requirements pins the namespace's name). */
export function pinsNamespace(s: JsonObject, ns: string): boolean {
  const labels = ownValue(s, 'matchLabels');
  if (isObject(labels) && ownValue(labels, NAME_LABEL) === ns) return true;
  const exprs = ownValue(s, 'matchExpressions');
  return (
    Array.isArray(exprs) &&
    exprs.some((e) => {
      if (!isObject(e) || ownValue(e, 'key') !== NAME_LABEL || ownValue(e, 'operator') !== 'In') return false;
      const values = ownValue(e, 'values');
      return Array.isArray(values) && values.length > 0 && values.every((v) => v === ns);
    })
  );
}

const has = (o: JsonObject, k: string) => Object.hasOwn(o, k);
const isSet = (v: JsonValue | undefined) => v !== undefined && v !== null;

export function selectorIssues(namespace: string, b: ManagedBody, policy: TrustPolicy): ValidationIssue[] {
  const selection = SELECTION[b.kind];
  if (!selection || policy.crossNamespaceSelectors) return [];
  const body = b.body;
  const selectAll = has(body, 'selectAllByDefault') ? ownValue(body, 'selectAllByDefault') === true : b.form === 'overrideSpec';
  const hint = `select within the namespace: a selector without its namespace selector, or a namespace selector with matchLabels ${NAME_LABEL}: ${namespace}`;
  const byPath = new Map<string, ValidationIssue>();
  const deny = (field: string, what: string, scope: string) => {
    const path = formatPath([...b.path, field]);
    if (!byPath.has(path)) byPath.set(path, { path, message: `the ${b.kind} would select ${what} ${scope} ${allowedBy('crossNamespaceSelectors')}; ${hint}` });
  };
  for (const { selector, namespaceSelector, what } of selection.pairs) {
    if (!has(body, 'selectAllByDefault') && !has(body, selector) && !has(body, namespaceSelector)) continue;
    const nsSel = ownValue(body, namespaceSelector);
    if (isObject(nsSel)) {
      if (!pinsNamespace(nsSel, namespace)) deny(namespaceSelector, what, `of namespaces other than ${JSON.stringify(namespace)}`);
    } else if (!isSet(ownValue(body, selector)) && selectAll) {
      if (ownValue(body, 'selectAllByDefault') === true) deny('selectAllByDefault', selection.all, 'of every namespace');
      else deny(has(body, selector) ? selector : namespaceSelector, what, 'of every namespace');
    }
  }
  return [...byPath.values()];
}
