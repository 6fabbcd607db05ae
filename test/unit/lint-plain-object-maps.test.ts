// The lint rule vmrollout/no-plain-object-map (eslint-rules/plain-object-maps.mjs), run as `make lint`
// runs it (the repository's eslint.config.mjs, a product path): it finds the map that polluted
// Object.prototype (releasedFields before it built data objects: the negative control), each form
// of the pattern, and not the safe ones; every allow-listed map is still one the rule would report.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const ESLINT = path.join(ROOT, 'node_modules/.bin/eslint');
const RULE = 'vmrollout/no-plain-object-map';

interface Message {
  ruleId: string | null;
  line: number;
  message: string;
}

function eslint(args: string[], stdin?: string): Array<{ filePath: string; messages: Message[] }> {
  const r = spawnSync(ESLINT, ['--format', 'json', ...args], { cwd: ROOT, input: stdin, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw r.error;
  if (r.status !== 0 && r.status !== 1) throw new Error(`eslint exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Array<{ filePath: string; messages: Message[] }>;
}

/** The rule's reports on `text` linted as the product file `file` (not written anywhere). */
function reportsOn(text: string, file: string): Message[] {
  return eslint(['--stdin', '--stdin-filename', file], text)[0]!.messages.filter((m) => m.ruleId === RULE);
}

/** releasedFields as it was when a path through `__proto__` reached Object.prototype. */
const POLLUTING_RELEASED_FIELDS = `export function releasedFields(record: AppliedRecord, live: JsonObject, next: JsonObject): JsonObject | undefined {
  const kept = leafFields(next, ['spec']).map((f) => fieldPathString(f.path));
  const out: JsonObject = {};
  for (const [path] of record.fields) {
    const p = fieldPathString(path);
    if (kept.some((k) => overlaps(k, p))) continue;
    const v = valueAt(live, path);
    if (v === undefined) continue;
    let cur = out;
    for (const k of path.slice(0, -1)) cur = (isObject(cur[k]) ? cur[k] : (cur[k] = {})) as JsonObject;
    cur[path[path.length - 1]!] = v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
`;

/** Each form of the pattern (reported), and the safe neighbours (not). One function each. */
const CASES: Array<{ name: string; reported: boolean; body: string }> = [
  { name: 'write into {}', reported: true, body: `const m: Record<string, number> = {}; m[key] = 1; return m;` },
  { name: '??= {} under an outside key', reported: true, body: `const m = dataObject<Record<string, number>>(); m[key] ??= {}; return m;` },
  { name: 'reduce into {}', reported: true, body: `return keys.reduce((acc: Record<string, number>, k) => { acc[k] = 1; return acc; }, {});` },
  { name: 'alias of {}', reported: true, body: `const m: Record<string, unknown> = {}; let cur = m; cur[key] = 1; return m;` },
  { name: 'a ?? {} read', reported: true, body: `const m = given ?? {}; return m[key];` },
  { name: 'Object.fromEntries read', reported: true, body: `const m = Object.fromEntries(keys.map((k) => [k, 1])); return m[key];` },
  { name: 'in on {}', reported: true, body: `const m = { a: 1 }; return key in m;` },
  { name: 'default parameter {}', reported: true, body: `const f = (m: Record<string, number> = {}) => { m[key] = 1; }; f();` },
  { name: 'dataObject()', reported: false, body: `const m = dataObject<number>(); m[key] = 1; return m[key];` },
  { name: 'Object.create(null)', reported: false, body: `const m = Object.create(null) as Record<string, number>; m[key] = 1; return m;` },
  { name: 'a constant key', reported: false, body: `const K = 'k'; const m: Record<string, number> = {}; m[K] = 1; m['x'] = 2; m[SOME_KEY] = 3; return m;` },
  { name: 'an array', reported: false, body: `const a: number[] = []; a[Number(key)] = 1; return a;` },
  { name: 'a Map', reported: false, body: `const m = new Map<string, number>(); m.set(key, 1); return m.get(key);` },
  { name: 'a SCREAMING_CASE table read', reported: false, body: `return TABLE[key as keyof typeof TABLE];` },
  { name: 'delete', reported: false, body: `const m: Record<string, number> = { ...given }; delete m[key]; return m;` },
];

describe('vmrollout/no-plain-object-map', () => {
  it('reports releasedFields as it was (the pollution), not as it is', () => {
    const file = 'kube/applied-fields.ts';
    const now = fs.readFileSync(path.join(ROOT, file), 'utf8');
    const start = now.indexOf('export function releasedFields(');
    const end = now.indexOf('\n}\n', start) + 3;
    expect(start).toBeGreaterThan(0);
    const reverted = now.slice(0, start) + POLLUTING_RELEASED_FIELDS + now.slice(end);
    expect(reportsOn(now, file)).toEqual([]);
    const lines = reportsOn(reverted, file).map((m) => reverted.split('\n')[m.line - 1]!.trim());
    expect(lines).toContain('for (const k of path.slice(0, -1)) cur = (isObject(cur[k]) ? cur[k] : (cur[k] = {})) as JsonObject;');
    expect(lines).toContain('cur[path[path.length - 1]!] = v;');
  });

  it('reports each form of the pattern and none of the safe ones', () => {
    const head = [
      `import { dataObject } from '../api/data-object';`,
      `declare const key: string, keys: string[], given: Record<string, number> | undefined, SOME_KEY: string;`,
      `const TABLE = { a: 1 };`,
    ];
    const starts: number[] = [];
    const lines = [...head];
    CASES.forEach((c, i) => {
      starts.push(lines.length + 1);
      lines.push(`export function case${i}() {`, `  ${c.body}`, `}`);
    });
    const text = lines.join('\n') + '\n';
    const reported = new Set(reportsOn(text, 'kube/scratch-plain-object-maps.ts').map((m) => CASES[starts.filter((s) => s <= m.line).length - 1]!.name));
    expect(CASES.filter((c) => c.reported !== reported.has(c.name)).map((c) => `${c.name}: ${reported.has(c.name) ? 'reported' : 'not reported'}`)).toEqual([]);
  });

  it('every allow-listed map is one the rule would report: the list names no map that no longer needs it', () => {
    const r = spawnSync(ESLINT, ['--print-config', 'api/crd.ts'], { cwd: ROOT, encoding: 'utf8' });
    const [, options] = (JSON.parse(r.stdout) as { rules: Record<string, [number, { allow: Array<{ file: string; name: string }> }]> }).rules[RULE]!;
    expect(options.allow.length).toBeGreaterThan(0);
    const files = [...new Set(options.allow.map((a) => a.file))];
    const results = eslint(['--rule', JSON.stringify({ [RULE]: ['error', {}] }), ...files]);
    const reported = results.flatMap((f) =>
      f.messages.filter((m) => m.ruleId === RULE).map((m) => `${path.relative(ROOT, f.filePath)} ${/^`([A-Za-z_$][\w$]*)/.exec(m.message)?.[1]}`),
    );
    expect(options.allow.filter((a) => !reported.includes(`${a.file} ${a.name}`))).toEqual([]);
  });
});
