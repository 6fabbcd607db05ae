/**
 * Every figure in the measurement documents comes with the JSON it was read from (issue 28 item 11):
 *  - every link to `results/<file>` (the folder beside the document: docs/results/ for docs/*.md)
 *    names a file that exists, parses as a JSON object and
 *    says where it came from: `commit` (40 hex digits), `machine` (an object with `cpus`) and
 *    `command` (the command that made it), as bench/support/provenance.ts writes them. Each at the
 *    top level, or, for a document that gathers several runs under `runs`, in every one of its runs
 *    (each run then names its own);
 *  - every data row of the tables in the sections named (a `##` heading and what follows up to the
 *    next) links at least one `results/*.json`. A section that is gone, or holds no table, is a problem
 *    too: otherwise renaming a heading would pass.
 * Pure: the caller reads the files (test/unit/doc-figures.test.ts). The Markdown is read as
 * test/support/doc-references.ts reads it.
 */
import { dirOf, linkTargets, normalize, prose } from './doc-references';

export interface FigureDoc {
  /** Repository-relative, `/`-separated. */
  path: string;
  text: string;
  /** The `##` headings (their text) whose tables hold figures. */
  sections: readonly string[];
}

export interface FigureProblem {
  file: string;
  line: number;
  message: string;
}

interface Link {
  line: number;
  target: string;
  /** Repository-relative file under docs/results/ it names, or undefined. */
  result?: string;
}

/** The `results/<file>` beside the document a link names, repository-relative; undefined for any other link (and for the folder itself). */
function resultOf(docPath: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined;
  const file = target.replace(/[#?].*$/, '');
  let decoded: string;
  try {
    decoded = decodeURIComponent(file);
  } catch {
    decoded = file;
  }
  const resolved = normalize(`${dirOf(docPath)}/${decoded}`);
  return resolved?.startsWith(normalize(`${dirOf(docPath)}/results/`) + '/') ? resolved : undefined;
}

const isCommit = (v: unknown) => typeof v === 'string' && /^[0-9a-f]{40}$/.test(v);
const isMachine = (v: unknown) => {
  const cpus = isObject(v) ? field(v, 'cpus') : undefined;
  return typeof cpus === 'number' && Number.isInteger(cpus) && cpus > 0;
};
const isCommand = (v: unknown) => typeof v === 'string' && v.trim() !== '';

const PROVENANCE: ReadonlyArray<[name: string, valid: (v: unknown) => boolean, what: string]> = [
  ['commit', isCommit, '40 hex digits'],
  ['machine', isMachine, 'an object with cpus'],
  ['command', isCommand, 'a non-empty string'],
];

function isObject(v: unknown): v is object {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const field = (o: object, key: string): unknown => (o as Record<string, unknown>)[key];

/** What is wrong with a results document's text as the source of a figure (undefined text: no such file). */
export function resultDocumentProblems(text: string | undefined): string[] {
  if (text === undefined) return ['no such file'];
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return [`not JSON (${err instanceof Error ? err.message : String(err)})`];
  }
  if (!isObject(doc)) return ['not a JSON object'];
  const runs = field(doc, 'runs');
  const runList = Array.isArray(runs) && runs.length > 0 ? runs : undefined;
  const problems: string[] = [];
  for (const [name, valid, what] of PROVENANCE) {
    if (valid(field(doc, name))) continue;
    if (runList?.every((run) => isObject(run) && valid(field(run, name)))) continue;
    problems.push(`no ${name} (${what}) at the top level${runList ? ' nor in every one of runs[]' : ''}`);
  }
  return problems;
}

/** The `##` section each prose line is in ('' before the first; a `###` heading stays in its `##`). */
function h2Sections(markdown: string) {
  let section = '';
  return prose(markdown).map((line) => {
    const h = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line.text);
    if (h && h[1]!.length <= 2) section = h[1]!.length === 2 ? h[2]! : '';
    return { ...line, h2: section };
  });
}

const isTableLine = (text: string) => /^\s*\|/.test(text);
const isDelimiterRow = (text: string) => /^\s*\|?(\s*:?-+:?\s*\|)+\s*:?-*:?\s*$/.test(text);

/** A row as a reader finds it: its first two cells. */
function rowLabel(text: string): string {
  const cells = text
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((c) => c.trim());
  const label = cells.slice(0, 2).join(' | ');
  return label.length > 70 ? `${label.slice(0, 69)}…` : label;
}

export function checkDocFigures(docs: readonly FigureDoc[], readResult: (path: string) => string | undefined): FigureProblem[] {
  const problems: FigureProblem[] = [];
  const checked = new Set<string>();
  for (const doc of docs) {
    const lines = h2Sections(doc.text);
    const links = (text: string, line: number): Link[] => linkTargets(text).map((target) => ({ line, target, result: resultOf(doc.path, target) }));

    // Every results document linked from anywhere in the document, once each, where it is first linked.
    for (const link of lines.flatMap((l) => links(l.text, l.n))) {
      if (link.result === undefined || checked.has(link.result)) continue;
      checked.add(link.result);
      for (const message of resultDocumentProblems(readResult(link.result)))
        problems.push({ file: doc.path, line: link.line, message: `${link.target}: ${message}` });
    }

    for (const section of doc.sections) {
      const inSection = lines.filter((l) => l.h2 === section);
      const heading = inSection[0];
      if (heading === undefined) {
        problems.push({ file: doc.path, line: 0, message: `no section "## ${section}"` });
        continue;
      }
      let rows = 0;
      inSection.forEach((l, i) => {
        if (!isTableLine(l.text)) return;
        // The header row is the line before the delimiter row; data rows follow the delimiter.
        const previous = inSection[i - 1];
        if (isDelimiterRow(l.text) || (inSection[i + 1] !== undefined && isDelimiterRow(inSection[i + 1]!.text))) return;
        if (previous === undefined || !isTableLine(previous.text)) return;
        rows++;
        if (!links(l.text, l.n).some((link) => link.result?.endsWith('.json')))
          problems.push({ file: doc.path, line: l.n, message: `## ${section}: row "${rowLabel(l.text)}" links no results/*.json` });
      });
      if (rows === 0) problems.push({ file: doc.path, line: heading.n, message: `## ${section}: no table rows` });
    }
  }
  return problems;
}
