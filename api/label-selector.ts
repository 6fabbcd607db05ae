// spec.vmuserSelector: a Kubernetes label selector of equality terms (`key=value,key2=value2`), the
// form `kubectl -l` takes and the list API's labelSelector passes through. Pure. Labels on objects
// are others' input: read from their own properties only, never through a plain-object map.

/**
 * A label key (an optional DNS-subdomain prefix and a name) and a label value, as Kubernetes validates
 * them; no nested counted repeats: the API server compiles the CRD's copy of this pattern (RE2).
 */
const KEY = '([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?';
const VALUE = '([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?';
/** `key=value` terms, comma-separated. */
export const EQUALITY_SELECTOR_PATTERN = `^${KEY}=${VALUE}(,${KEY}=${VALUE})*$`;
export const SELECTOR_MAX_LENGTH = 1024;
/** More VMUsers matching spec.vmuserSelector than this is a selector that selects too much (SelectorTooBroad). */
export const MAX_SELECTED_VMUSERS = 100;

/** The terms of a selector the spec validated (EQUALITY_SELECTOR_PATTERN): [key, value] pairs. */
export function selectorTerms(selector: string): Array<[string, string]> {
  return selector.split(',').map((term) => {
    const i = term.indexOf('=');
    return [term.slice(0, i), term.slice(i + 1)];
  });
}

/** Whether an object's metadata.labels (any shape) carry every term of `selector`. */
export function selects(selector: string, labels: unknown): boolean {
  if (labels === null || typeof labels !== 'object' || Array.isArray(labels)) return false;
  return selectorTerms(selector).every(([k, v]) => Object.hasOwn(labels, k) && (labels as Record<string, unknown>)[k] === v);
}
