/**
 * Finds references in the documentation and the code that point at nothing: a file or folder that
 * does not exist, an anchor no heading makes, an invariant docs/design.md does not define, a patch
 * workflows/versions.ts does not register, a citation of the design document's old name. Pure: the
 * caller reads the files and answers `exists` / `read` (test/unit/doc-references.test.ts).
 *
 * What counts as a reference:
 *  - in a document (README.md, CONTRIBUTING.md, docs/**.md), outside code blocks: a relative link
 *    `[text](path#anchor)` or `[text]: path`; a backticked path whose first segment is an entry of
 *    the repository's root (`workflows/rollout.ts`, `charts/vmrollout/`), or starts with `./` /
 *    `../`; under a heading that names a folder (`## api/`), a backticked path with a file
 *    extension (`schema.ts`) inside that folder; `patched('<id>')` / `deprecatePatch('<id>')`;
 *  - anywhere (documents and sources): an invariant cited as `[I3]`, `'I3'` or `design.md#i3`; a
 *    `docs/<name>.md#anchor` or a README section by its title, `README "Alerts"`; the old design
 *    document's name.
 * An invariant is defined by an explicit anchor `<a id="i3"></a>` in docs/design.md.
 */

export interface TextFile {
  /** Repository-relative, `/`-separated. */
  path: string;
  text: string;
}

export interface Repo {
  /** A repository-relative file or folder exists. */
  exists(path: string): boolean;
  /** A repository-relative file's text, or undefined when there is none. */
  read(path: string): string | undefined;
  /** Names at the repository's root that a backticked path may start with (not generated ones). */
  rootEntries: ReadonlySet<string>;
  /** The patch ids workflows/versions.ts registers. */
  patches: ReadonlySet<string>;
}

export type ProblemKind = 'file' | 'anchor' | 'invariant' | 'patch' | 'old-design-doc';

export interface Problem {
  kind: ProblemKind;
  file: string;
  line: number;
  message: string;
}

export const DESIGN_DOC = 'docs/design.md';
/** Built, not written, so that this module does not cite the name it forbids. */
const OLD_DESIGN_DOC = new RegExp(['\\bDESIGN', 'md\\b'].join('\\.'));

const FILE_EXTENSION = /\.(ts|js|cjs|mjs|md|ya?ml|json|sh|env|tar\.gz|tgz|txt)$/;
const PLACEHOLDER = /[<>*{}$|…\s]/;

/** GitHub's heading id: the rendered text, lower-cased, punctuation dropped, spaces to dashes. */
export function githubSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*~]/g, '');
  return rendered
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

export interface Line {
  n: number;
  text: string;
  /** The heading text of the section the line is in. */
  section: string;
}

/** The lines outside fenced code blocks. */
export function prose(markdown: string): Line[] {
  const lines: Line[] = [];
  let fence: string | undefined;
  let section = '';
  markdown.split('\n').forEach((text, i) => {
    const f = /^\s*(`{3,}|~{3,})/.exec(text);
    if (f) {
      if (fence === undefined) fence = f[1]![0]!;
      else if (f[1]![0] === fence) fence = undefined;
      return;
    }
    if (fence !== undefined) return;
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (h) section = h[1]!;
    lines.push({ n: i + 1, text, section });
  });
  return lines;
}

/** Every anchor a Markdown document defines: heading slugs (GitHub's de-duplication) and explicit ids. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of prose(markdown)) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (h) {
      const slug = githubSlug(h[1]!);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
  }
  return anchors;
}

/** The targets a line of prose links, outside code spans: `[text](target "title")` and `[label]: target`. */
export function linkTargets(text: string): string[] {
  const outsideCode = text.replace(/`[^`]*`/g, '``');
  return [
    ...[...outsideCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!),
    ...[...outsideCode.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/g)].map((m) => m[1]!),
  ];
}

/** The "may import" table of docs/architecture.md: each folder and the folders of ours it may import. */
export function documentedLayers(architectureDoc: string): Map<string, string[]> {
  const layers = new Map<string, string[]>();
  for (const line of architectureDoc.split('\n')) {
    const row = /^\|\s*`([\w-]+)\/`\s*\|([^|]*)\|/.exec(line);
    if (row) layers.set(row[1]!, [...row[2]!.matchAll(/`([\w-]+)\/`/g)].map((m) => m[1]!).sort());
  }
  return layers;
}

/** The invariant ids docs/design.md defines (`I3` for `<a id="i3"></a>`). */
export function invariantsDefined(designDoc: string): Set<string> {
  return new Set([...designDoc.matchAll(/<a\s+id="i(\d+)"/g)].map((m) => `I${m[1]}`));
}

/** A `/`-separated path with `.` and `..` resolved; undefined when it climbs above the root. */
export function normalize(path: string): string | undefined {
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length === 0) return undefined;
      out.pop();
    } else out.push(part);
  }
  return out.join('/');
}

export function dirOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

/** The folder a section heading names (`api/`, `` `test/infra/harness/` ``), if it names one. */
function sectionFolder(section: string): string | undefined {
  const name = section.replace(/`/g, '').trim();
  return /^[\w.-]+(\/[\w.-]+)*\/$/.test(name) ? name : undefined;
}

export function checkDocReferences(docs: readonly TextFile[], sources: readonly TextFile[], repo: Repo): Problem[] {
  const problems: Problem[] = [];
  const anchorCache = new Map<string, Set<string> | undefined>();
  const anchorsIn = (path: string): Set<string> | undefined => {
    if (!anchorCache.has(path)) {
      const text = docs.find((d) => d.path === path)?.text ?? repo.read(path);
      anchorCache.set(path, text === undefined ? undefined : anchorsOf(text));
    }
    return anchorCache.get(path);
  };
  const design = repo.read(DESIGN_DOC);
  const invariants = design === undefined ? new Set<string>() : invariantsDefined(design);

  /** A repository-relative path (with an optional #anchor) that must exist. */
  const checkTarget = (file: string, line: number, target: string, path: string | undefined, anchor: string | undefined) => {
    if (path === undefined || !repo.exists(path)) {
      problems.push({ kind: 'file', file, line, message: `${target}: no such file or folder${path === undefined ? '' : ` (${path})`}` });
      return;
    }
    if (anchor === undefined || anchor === '' || !path.endsWith('.md')) return;
    if (!anchorsIn(path)?.has(anchor)) problems.push({ kind: 'anchor', file, line, message: `${target}: ${path} has no heading or anchor #${anchor}` });
  };

  for (const doc of docs) {
    const dir = dirOf(doc.path);
    for (const { n, text, section } of prose(doc.text)) {
      const code = [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
      for (const token of code) {
        const ref = token.replace(/:\d+(-\d+)?$/, '').replace(/#.*$/, '');
        if (PLACEHOLDER.test(ref) || !/^[\w.@/-]+$/.test(ref)) continue;
        let path: string | undefined;
        const first = ref.split('/')[0]!;
        if (ref.startsWith('./') || ref.startsWith('../')) path = normalize(`${dir}/${ref}`);
        else if (ref.includes('/') && repo.rootEntries.has(first)) path = normalize(ref);
        else {
          const folder = sectionFolder(section);
          if (folder !== undefined && !ref.startsWith('/') && FILE_EXTENSION.test(ref)) path = normalize(`${folder}${ref}`);
          else continue;
        }
        checkTarget(doc.path, n, `\`${token}\``, path, undefined);
      }
      const outsideCode = text.replace(/`[^`]*`/g, '``');
      for (const link of linkTargets(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue;
        const hash = link.indexOf('#');
        const target = hash < 0 ? link : link.slice(0, hash);
        const anchor = hash < 0 ? undefined : decodeURIComponent(link.slice(hash + 1));
        const path = target === '' ? doc.path : normalize(`${dir}/${decodeURIComponent(target)}`);
        checkTarget(doc.path, n, link, path, anchor);
      }
      for (const m of outsideCode.matchAll(/\b(?:patched|deprecatePatch)\(\s*['"]([^'"]+)['"]\s*\)/g)) {
        if (PLACEHOLDER.test(m[1]!)) continue;
        if (!repo.patches.has(m[1]!))
          problems.push({ kind: 'patch', file: doc.path, line: n, message: `patch '${m[1]}' is not registered in workflows/versions.ts` });
      }
      // In backticks too: `patched('id')` is how a document names a patch.
      for (const token of code) {
        for (const m of token.matchAll(/\b(?:patched|deprecatePatch)\(\s*['"]([^'"]+)['"]\s*\)/g)) {
          if (PLACEHOLDER.test(m[1]!)) continue;
          if (!repo.patches.has(m[1]!))
            problems.push({ kind: 'patch', file: doc.path, line: n, message: `patch '${m[1]}' is not registered in workflows/versions.ts` });
        }
      }
    }
  }

  const isDoc = new Set(docs.map((d) => d.path));
  for (const file of [...docs, ...sources]) {
    file.text.split('\n').forEach((text, i) => {
      const line = i + 1;
      if (OLD_DESIGN_DOC.test(text))
        problems.push({ kind: 'old-design-doc', file: file.path, line, message: `cites the design document by its old name: it is ${DESIGN_DOC}` });
      for (const m of text.matchAll(/\[(I\d+)\]|(?<![\w])['"](I\d+)['"]|design\.md#i(\d+)\b/g)) {
        const id = m[1] ?? m[2] ?? `I${m[3]}`;
        if (!invariants.has(id)) problems.push({ kind: 'invariant', file: file.path, line, message: `invariant ${id} is not defined in ${DESIGN_DOC}` });
      }
      // Code and configuration citing a document's section: the document and the section must exist.
      if (isDoc.has(file.path)) return;
      for (const m of text.matchAll(/\b((?:docs\/[\w.-]+|README|CONTRIBUTING)\.md)(?:#([\w-]+))?/g)) {
        checkTarget(file.path, line, m[0], m[1], m[2]);
      }
      // The older form, a section of the README by its title.
      for (const m of text.matchAll(/\bREADME "([^"]+)"/g)) {
        if (!anchorsIn('README.md')?.has(githubSlug(m[1]!)))
          problems.push({ kind: 'anchor', file: file.path, line, message: `${m[0]}: README.md has no such section` });
      }
    });
  }
  return problems;
}
