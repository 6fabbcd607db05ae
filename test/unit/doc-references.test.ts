/**
 * The documentation points at things that exist: every relative link, backticked repository path,
 * anchor, invariant id and patch id in README.md, CONTRIBUTING.md and docs/ resolves, and code and
 * tests cite invariants docs/design.md defines (test/support/doc-references.ts says what counts).
 * Negative control: test/fixtures/doc-references/ holds one dangling reference of each kind, and
 * each is reported where it is, while its good references are not. The README stays a landing page.
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { PATCHES } from '../../workflows/versions';
import { REPO_ROOT, toolVersions } from '../infra/harness/tools';
import { anchorsOf, checkDocReferences, documentedLayers, githubSlug, type Problem, type Repo, type TextFile } from '../support/doc-references';

const SKIPPED_DIRS = new Set(['.git', 'node_modules', 'dist', 'coverage', '.tmp', '.demo']);
/** The checker and this test name every form of reference as examples. */
const SELF = ['test/support/doc-references.ts', 'test/unit/doc-references.test.ts'];
const SOURCE_FILE = /\.(ts|js|cjs|mjs|md|ya?ml|json|sh|env)$|^(Makefile|Dockerfile)$/;

/** Every text file under `root` the check reads, repository-relative, minus `skip` (relative paths). */
function walk(root: string, skip: readonly string[] = []): TextFile[] {
  const files: TextFile[] = [];
  const visit = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name) && !skip.includes(child)) visit(child);
      } else if (SOURCE_FILE.test(entry.name) && entry.name !== 'package-lock.json' && !skip.includes(child)) {
        files.push({ path: child, text: fs.readFileSync(path.join(root, child), 'utf8') });
      }
    }
  };
  visit('');
  return files;
}

/** README.md, CONTRIBUTING.md and docs/**.md are the documents; every other file is a source. */
function split(files: TextFile[]): { docs: TextFile[]; sources: TextFile[] } {
  const isDoc = (p: string) => p === 'README.md' || p === 'CONTRIBUTING.md' || (p.startsWith('docs/') && p.endsWith('.md'));
  return { docs: files.filter((f) => isDoc(f.path)), sources: files.filter((f) => !isDoc(f.path)) };
}

function repoAt(root: string, patches: Iterable<string>): Repo {
  const ignored = fs.existsSync(path.join(root, '.gitignore'))
    ? fs
        .readFileSync(path.join(root, '.gitignore'), 'utf8')
        .split('\n')
        .map((l) => l.trim().replace(/\/$/, ''))
    : [];
  const rootEntries = new Set(fs.readdirSync(root).filter((name) => name !== '.git' && !ignored.includes(name)));
  return {
    exists: (p) => fs.existsSync(path.join(root, p)),
    read: (p) => (fs.existsSync(path.join(root, p)) && fs.statSync(path.join(root, p)).isFile() ? fs.readFileSync(path.join(root, p), 'utf8') : undefined),
    rootEntries,
    patches: new Set(patches),
  };
}

/** The layers .dependency-cruiser.cjs enforces: each rule `^X/` may not import outside `^(X|a|b)/`. */
function configuredLayers(): Map<string, string[]> {
  const load = createRequire(__filename);
  const { forbidden } = load(path.join(REPO_ROOT, '.dependency-cruiser.cjs')) as {
    forbidden: Array<{ from?: { path?: string }; to?: { pathNot?: string | string[] } }>;
  };
  const layers = new Map<string, string[]>();
  for (const rule of forbidden) {
    const from = /^\^([\w-]+)\/$/.exec(rule.from?.path ?? '');
    // A layer's allowed layers come first; further entries are single modules (the cli's diff exception).
    const allowed = /^\^\(([\w|-]+)\)\/$/.exec([rule.to?.pathNot ?? ''].flat()[0] ?? '');
    if (from && allowed)
      layers.set(
        from[1]!,
        allowed[1]!
          .split('|')
          .filter((f) => f !== from[1])
          .sort(),
      );
  }
  return layers;
}

const brief = (problems: Problem[]) => problems.map((p) => `${p.kind} ${p.file}:${p.line} ${p.message}`);

describe('references in the documentation and the code', () => {
  it('in this repository all resolve', () => {
    const { docs, sources } = split(walk(REPO_ROOT, ['test/fixtures/doc-references', ...SELF]));
    expect(docs.map((d) => d.path)).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'docs/design.md']));
    const problems = checkDocReferences(
      docs,
      sources,
      repoAt(
        REPO_ROOT,
        PATCHES.map((p) => p.id),
      ),
    );
    expect(brief(problems)).toEqual([]);
  });

  it('the README is a landing page: at most 200 lines', () => {
    const lines = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length;
    expect(lines).toBeLessThanOrEqual(200);
  });

  it('the README names the versions scripts/tool-versions.env pins as tested', () => {
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const pinned = toolVersions();
    expect(readme).toContain(`Temporal CLI ${pinned.TEMPORAL_CLI_VERSION}`);
    expect(readme).toContain(`kube-apiserver v${pinned.KUBERNETES_VERSION}`);
    expect(readme).toContain(`v${pinned.VICTORIAMETRICS_VERSION}`);
    expect(readme).toContain(`v${pinned.VM_OPERATOR_VERSION}`);
  });

  it('docs/architecture.md draws the layers make lint enforces (.dependency-cruiser.cjs)', () => {
    const architecture = fs.readFileSync(path.join(REPO_ROOT, 'docs/architecture.md'), 'utf8');
    const configured = configuredLayers();
    expect(configured.size).toBeGreaterThanOrEqual(8);
    expect(documentedLayers(architecture)).toEqual(configured);
    // Negative control: a table that forgets one allowed import no longer matches.
    const forgetful = architecture.replace('| `activities/` | `api/`, `kube/`, `workflows/` |', '| `activities/` | `api/`, `kube/` |');
    expect(forgetful).not.toBe(architecture);
    expect(documentedLayers(forgetful)).not.toEqual(configured);
  });

  it('reports each kind of dangling reference where it is, and no good one (negative control)', () => {
    const root = path.join(REPO_ROOT, 'test/fixtures/doc-references');
    const { docs, sources } = split(walk(root));
    const problems = checkDocReferences(docs, sources, repoAt(root, ['known-fix']));
    expect(problems.map((p) => `${p.kind} ${p.file}:${p.line}`).sort()).toEqual(
      [
        'file README.md:5', // [missing](docs/missing.md)
        'anchor README.md:6', // docs/guide.md#nowhere
        'file README.md:7', // `scripts/release-zone.ts`
        'anchor docs/guide.md:6', // #no-such-heading
        'file docs/guide.md:12', // `vanished.ts` under `## src/`
        'invariant docs/guide.md:14', // [I7]
        'patch docs/guide.md:16', // patched('never-made')
        'file docs/guide.md:18', // [gone-ref]: ../src/gone.ts
        'invariant src/present.ts:1', // 'I8'
        'old-design-doc src/present.ts:2',
        'anchor src/present.ts:2', // docs/guide.md#gone
        'anchor src/present.ts:3', // README "Gone"
      ].sort(),
    );
  });

  it('derives heading anchors as GitHub does', () => {
    expect(githubSlug('Supported operator versions / CRDs')).toBe('supported-operator-versions--crds');
    expect(githubSlug('What a VMDistributedCluster may ask for (the trust policy)')).toBe('what-a-vmdistributedcluster-may-ask-for-the-trust-policy');
    expect(githubSlug('`docker-compose.yml`')).toBe('docker-composeyml');
    expect(githubSlug('Worker memory (target 4b)')).toBe('worker-memory-target-4b');
    expect([...anchorsOf('# A\n## B\n## B\n```\n# not a heading\n```\n<a id="i2"></a>\n')]).toEqual(['a', 'b', 'b-1', 'i2']);
  });
});
