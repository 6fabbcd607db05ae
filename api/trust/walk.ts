// Every object inside a free-form body, with its path computed only when asked for (a rule reports
// few of them; copying the path at every node would cost depth × nodes). Iterative, so any depth the
// validation accepts is fine. Own keys only: a "__proto__" key is data here as everywhere.
import { ownValue } from '../data-object';
import type { JsonObject, JsonValue } from '../types';

interface Trail {
  key: string | number;
  parent: Trail | undefined;
}

export type Path = (string | number)[];

const isObject = (v: JsonValue | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Calls `visit` for `root` and every object below it (in arrays too); `at()` is the object's path below root. */
export function forEachObject(root: JsonValue, visit: (obj: JsonObject, at: () => Path) => void): void {
  const stack: Array<{ v: JsonValue; trail: Trail | undefined }> = [{ v: root, trail: undefined }];
  while (stack.length > 0) {
    const { v, trail } = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i] as JsonValue, trail: { key: i, parent: trail } });
      continue;
    }
    visit(v, () => pathOf(trail));
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) stack.push({ v: ownValue(v, keys[i]!) as JsonValue, trail: { key: keys[i]!, parent: trail } });
  }
}

function pathOf(t: Trail | undefined): Path {
  const out: Path = [];
  for (let n = t; n; n = n.parent) out.push(n.key);
  return out.reverse();
}

/** The object `o` holds under `key` (own), if it is one. */
export function objectAt(o: JsonObject, key: string): JsonObject | undefined {
  const v = ownValue(o, key);
  return isObject(v) ? v : undefined;
}

/** The strings a string-or-list field holds, each with its path relative to the field. */
export function stringsOf(v: JsonValue | undefined): Array<{ at: Path; value: string }> {
  if (typeof v === 'string') return [{ at: [], value: v }];
  if (!Array.isArray(v)) return [];
  return v.flatMap((x, i) => (typeof x === 'string' ? [{ at: [i], value: x }] : []));
}

export { isObject };
