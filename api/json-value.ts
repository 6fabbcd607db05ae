// JSON values as the API server carries them: is a value JSON at all, how deep it nests (iterative
// walks, so any depth the API server accepts is fine), and are two values equal. Pure: workflow code
// imports it too.
import type { JsonObject, JsonValue } from './types';

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

/** A value as a validation message names it (never a long string in full). */
export function describe(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'an array';
  switch (typeof input) {
    case 'string':
      return input.length > 40 ? `a string` : `string ${JSON.stringify(input)}`;
    case 'number':
      return `number ${String(input)}`;
    case 'boolean':
      return `boolean ${String(input)}`;
    case 'object':
      return 'an object';
    case 'undefined':
      return 'nothing';
    default:
      return `a ${typeof input}`;
  }
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  // Realm-independent: an object literal's prototype is an Object.prototype (of any realm) or null.
  if (Object.prototype.toString.call(v) !== '[object Object]') return false;
  const proto = Object.getPrototypeOf(v) as object | null;
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/** The children of a JSON container: [key, value] pairs (array slots included, empty ones as undefined). */
export function childrenOf(v: object): [string | number, unknown][] {
  if (Array.isArray(v)) return Array.from({ length: v.length }, (_, i) => [i, v[i]] as [number, unknown]);
  return Object.keys(v).map((k) => [k, (v as Record<string, unknown>)[k]]);
}

export function isContainer(v: unknown): v is object {
  return Array.isArray(v) || isPlainObject(v);
}

/** The path from the root to a node of an iterative walk. */
interface Trail {
  key: string | number;
  parent: Trail | undefined;
}

function trailPath(t: Trail | undefined): (string | number)[] {
  const out: (string | number)[] = [];
  for (let n = t; n; n = n.parent) out.push(n.key);
  return out.reverse();
}

/**
 * Finds the first non-JSON value inside a candidate JSON value (a value JSON cannot carry, an empty
 * array slot, or a cycle); returns its relative path. Iterative: depth is bounded only by memory.
 */
export function findNonJson(root: unknown): { path: (string | number)[]; why: string } | undefined {
  const done = new Set<object>();
  const onPath = new Set<object>();
  // Depth-first, children after parents; a container is left (exit) once its children are done.
  const stack: { v: unknown; trail: Trail | undefined; exit?: boolean; slot?: boolean }[] = [{ v: root, trail: undefined }];
  while (stack.length > 0) {
    const { v, trail, exit, slot } = stack.pop()!;
    if (exit) {
      onPath.delete(v as object);
      done.add(v as object);
      continue;
    }
    if (slot) return { path: trailPath(trail), why: 'must be a JSON value (got an empty array slot)' };
    if (v === null || typeof v === 'string' || typeof v === 'boolean') continue;
    if (typeof v === 'number') {
      if (Number.isFinite(v)) continue;
      return { path: trailPath(trail), why: `must be a JSON value (got ${String(v)})` };
    }
    if (!isContainer(v)) return { path: trailPath(trail), why: `must be a JSON value (got ${describe(v)})` };
    if (onPath.has(v)) return { path: trailPath(trail), why: 'must be a JSON value (got a reference to an enclosing object: a cycle)' };
    if (done.has(v)) continue; // shared (not cyclic): already checked
    onPath.add(v);
    stack.push({ v, trail, exit: true });
    const kids = childrenOf(v);
    for (let i = kids.length - 1; i >= 0; i--) {
      const [key, child] = kids[i]!;
      const t = { key, parent: trail };
      stack.push(Array.isArray(v) && !(key in v) ? { v: undefined, trail: t, slot: true } : { v: child, trail: t });
    }
  }
  return undefined;
}

/**
 * How many levels of JSON objects and arrays `root` nests (a scalar: 0; `{}`: 1; `{"a": []}`: 2),
 * iteratively; shared sub-values are measured once, cycles count as infinitely deep.
 */
export function jsonDepth(root: unknown): number {
  const height = new Map<object, number>();
  const stack: { v: object; exit: boolean }[] = [];
  if (isContainer(root)) stack.push({ v: root, exit: false });
  while (stack.length > 0) {
    const { v, exit } = stack.pop()!;
    if (exit) {
      let h = 0;
      for (const [, child] of childrenOf(v)) {
        if (isContainer(child)) h = Math.max(h, height.get(child) ?? Infinity);
      }
      height.set(v, h + 1);
      continue;
    }
    if (height.has(v)) continue;
    height.set(v, Infinity); // in progress: a cycle back to it stays infinite
    stack.push({ v, exit: true });
    for (const [, child] of childrenOf(v)) if (isContainer(child) && !height.has(child)) stack.push({ v: child, exit: false });
  }
  return isContainer(root) ? (height.get(root) ?? Infinity) : 0;
}

/** Deep structural equality of JSON values (key order ignored, array order significant). */
export function jsonEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as JsonValue[];
    return a.length === bb.length && a.every((x, i) => jsonEqual(x, bb[i]));
  }
  const ao = a as JsonObject;
  const bo = b as JsonObject;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => hasOwn(bo, k) && jsonEqual(ao[k], bo[k]));
}
