// The patch registry (workflows/versions.ts) against the code and the package version: every patch
// call in workflows/ names a registered id, every registered id is used, and no patch outlives the
// release it is to be removed in.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PATCHES, type Patch } from '../../workflows/versions';

const REPO = path.resolve(__dirname, '..', '..');
const WORKFLOWS = path.join(REPO, 'workflows');
const VERSION = (JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version;

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z.-]+)?$/;

/** Semantic Versioning 2.0 precedence (§11): a pre-release precedes its release; build metadata is ignored. */
export function compareSemver(a: string, b: string): number {
  const pa = SEMVER.exec(a);
  const pb = SEMVER.exec(b);
  if (!pa || !pb) throw new Error(`not a semantic version: ${pa ? b : a}`);
  for (let i = 1; i <= 3; i++) {
    const d = Number(pa[i]) - Number(pb[i]);
    if (d !== 0) return Math.sign(d);
  }
  if (pa[4] === undefined || pb[4] === undefined) return pa[4] === pb[4] ? 0 : pa[4] === undefined ? 1 : -1;
  const xa = pa[4].split('.');
  const xb = pb[4].split('.');
  for (let i = 0; i < Math.min(xa.length, xb.length); i++) {
    const [x, y] = [xa[i]!, xb[i]!];
    const [nx, ny] = [/^\d+$/.test(x), /^\d+$/.test(y)];
    if (nx && ny && Number(x) !== Number(y)) return Math.sign(Number(x) - Number(y));
    if (nx !== ny) return nx ? -1 : 1;
    if (!nx && x !== y) return x < y ? -1 : 1;
  }
  return Math.sign(xa.length - xb.length);
}

/** Each patch still in the registry at `version` although it is to be removed by then. */
export function overdue(patches: readonly Patch[], version: string): string[] {
  return patches.filter((p) => compareSemver(version, p.retireAfter) >= 0).map((p) => `${p.id}: to be removed in ${p.retireAfter}, still here in ${version}`);
}

const PATCH_CALL = /\b(patched|deprecatePatch)\s*\(([^)]*)\)/g;

/** Patch calls naming an unregistered id or no literal id, and registered ids no call names. */
export function registryProblems(sources: ReadonlyMap<string, string>, patches: readonly Patch[]): string[] {
  const registered = new Set(patches.map((p) => p.id));
  const used = new Set<string>();
  const problems: string[] = [];
  for (const [file, text] of sources) {
    for (const m of text.matchAll(PATCH_CALL)) {
      const literal = /^\s*(['"`])([^'"`]+)\1\s*$/.exec(m[2]!);
      const call = `${file}: ${m[0]}`;
      if (!literal) problems.push(`${call}: the id must be a string literal (registered in workflows/versions.ts)`);
      else if (!registered.has(literal[2]!)) problems.push(`${call}: "${literal[2]}" is not registered in workflows/versions.ts`);
      else used.add(literal[2]!);
    }
  }
  for (const id of registered) if (!used.has(id)) problems.push(`"${id}" is registered in workflows/versions.ts but no workflow code uses it`);
  const ids = patches.map((p) => p.id);
  for (const id of new Set(ids.filter((id, i) => ids.indexOf(id) !== i))) problems.push(`"${id}" is registered twice`);
  return problems;
}

function workflowSources(dir = WORKFLOWS): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) for (const [k, v] of workflowSources(p)) out.set(k, v);
    else if (/\.[cm]?[jt]s$/.test(e.name)) out.set(path.relative(REPO, p), fs.readFileSync(p, 'utf8'));
  }
  return out;
}

const patch = (id: string, retireAfter: string): Patch => ({ id, release: '1.0.0', retireAfter });

describe('compareSemver', () => {
  it.each([
    ['1.0.0', '1.0.0', 0],
    ['1.0.0', '1.0.1', -1],
    ['1.10.0', '1.9.0', 1],
    ['2.0.0', '1.99.99', 1],
    ['1.0.0-rc', '1.0.0', -1],
    ['1.0.0-0', '1.0.0-rc', -1],
    ['1.0.0-alpha', '1.0.0-alpha.1', -1],
    ['1.0.0-alpha.1', '1.0.0-alpha.beta', -1],
    ['1.0.0-beta.2', '1.0.0-beta.11', -1],
    ['1.0.0-rc.1', '1.0.0', -1],
    ['1.0.0+build.5', '1.0.0', 0],
    ['0.1.0', '1.0.0-rc', -1],
  ])('%s vs %s → %i', (a, b, want) => {
    expect(compareSemver(a, b)).toBe(want);
    expect(compareSemver(b, a)).toBe(-want || 0);
  });

  it('refuses what is not a version', () => {
    expect(() => compareSemver('1.0', '1.0.0')).toThrow('not a semantic version: 1.0');
  });
});

describe('overdue', () => {
  it('a patch is due for removal from its retireAfter release on, its pre-releases still before it', () => {
    const p = [patch('fix-a', '1.3.0')];
    expect(overdue(p, '1.2.9')).toEqual([]);
    expect(overdue(p, '1.3.0-rc.1')).toEqual([]);
    expect(overdue(p, '1.3.0')).toEqual(['fix-a: to be removed in 1.3.0, still here in 1.3.0']);
    expect(overdue(p, '2.0.0')).toHaveLength(1);
    expect(overdue([patch('fix-b', '1.3.0-0')], '1.3.0-rc.1')).toHaveLength(1);
  });
});

describe('registryProblems', () => {
  const src = (text: string) => new Map([['workflows/x.ts', text]]);
  it('accepts registered ids used by patch calls', () => {
    expect(registryProblems(src(`if (patched('fix-a')) {}\ndeprecatePatch("fix-b");`), [patch('fix-a', '9.0.0'), patch('fix-b', '9.0.0')])).toEqual([]);
  });
  it('an unregistered id, a computed id, an unused entry and a duplicate are each reported', () => {
    expect(registryProblems(src(`patched('fix-x'); patched(ID);`), [patch('fix-a', '9.0.0'), patch('fix-a', '9.0.0')])).toEqual([
      `workflows/x.ts: patched('fix-x'): "fix-x" is not registered in workflows/versions.ts`,
      'workflows/x.ts: patched(ID): the id must be a string literal (registered in workflows/versions.ts)',
      '"fix-a" is registered in workflows/versions.ts but no workflow code uses it',
      '"fix-a" is registered twice',
    ]);
  });
});

describe('workflows/versions.ts', () => {
  it(`no patch outlives its window (package version ${VERSION})`, () => {
    expect(overdue(PATCHES, VERSION)).toEqual([]);
  });

  it('every patch call in workflows/ names a registered id, and every registered id is used', () => {
    const sources = workflowSources();
    // The scan reads the workflow code (a check on the test, not on the code under test).
    expect(sources.has(path.join('workflows', 'rollout.ts'))).toBe(true);
    expect(registryProblems(sources, PATCHES)).toEqual([]);
  });

  it('every entry is well formed: its release a version before its retireAfter', () => {
    for (const p of PATCHES) {
      expect(p.id).toMatch(/^[a-z0-9][-a-z0-9]*$/);
      expect(compareSemver(p.release, p.retireAfter)).toBe(-1);
    }
  });
});
