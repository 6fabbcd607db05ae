// Objects keyed by what someone else wrote: free-form spec subtrees, annotation contents, label and
// pod names. Any string is a legal key there, `__proto__`, `constructor` and `prototype` included, so
// such an object must not have Object.prototype behind it: on a plain `{}`, `o["__proto__"] = v`
// replaces o's prototype instead of storing a key, `o["__proto__"]` reads Object.prototype (and a
// write through it reaches every object of the process), `o["constructor"]` reads a function that
// was never stored. A null-prototype object has none of that: every key is a plain own data
// property, and JSON.stringify writes it as it would a plain object's. Keys are read with ownValue.
// Pure: workflow code imports it too. `make lint` (eslint-rules/plain-object-maps.mjs) finds the plain
// object maps this rules out.
import type { JsonValue } from './types';

/** A fresh object without a prototype, to be filled with keys from outside. */
export function dataObject<T = JsonValue>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** The value stored under `key` in `o` itself, never one inherited. */
export function ownValue<T>(o: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(o, key) ? o[key] : undefined;
}
