/**
 * Every figure in docs/benchmarks.md and docs/reliability.md comes with the JSON it was read from,
 * committed under docs/results/ with its commit, machine and command (issue 28 item 11;
 * test/support/doc-figures.ts says what counts). A row that says "none: to re-measure" fails it
 * until the figure is measured again and its document committed. Negative control: a document of
 * each kind of fault is reported where it is, and a good one is not.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from '../infra/harness/tools';
import { checkDocFigures, resultDocumentProblems, type FigureDoc, type FigureProblem } from '../support/doc-figures';

/** The documents that publish measurements, and the sections whose tables hold the figures. */
const FIGURE_SECTIONS: ReadonlyArray<[doc: string, sections: string[]]> = [
  ['docs/benchmarks.md', ['Figures', 'The image', 'The real-operator bed']],
  ['docs/reliability.md', ['Results']],
];

const readRepo = (p: string) => {
  const file = path.join(REPO_ROOT, p);
  return fs.existsSync(file) && fs.statSync(file).isFile() ? fs.readFileSync(file, 'utf8') : undefined;
};

const brief = (problems: FigureProblem[]) => problems.map((p) => `${p.file}:${p.line} ${p.message}`);

describe('figures and the documents they were read from', () => {
  it('in docs/benchmarks.md and docs/reliability.md: every results/ link names a committed JSON with its provenance, every figure row links one', () => {
    const docs: FigureDoc[] = FIGURE_SECTIONS.map(([doc, sections]) => ({ path: doc, text: readRepo(doc)!, sections }));
    expect(brief(checkDocFigures(docs, readRepo))).toEqual([]);
  });

  const commit = 'a'.repeat(40);
  const machine = { cpus: 2 };
  const results = new Map<string, string>([
    ['figures/results/good.json', JSON.stringify({ benchmark: 'x', commit, command: 'make bench-x', machine, ratios: {} })],
    // Several runs, each naming its own commit and command; the machine once for all.
    [
      'figures/results/runs.json',
      JSON.stringify({
        machine,
        runs: [
          { commit, command: 'a' },
          { commit, command: 'b' },
        ],
      }),
    ],
    ['figures/results/short-commit.json', JSON.stringify({ commit: 'abc1234', command: 'c', machine })],
    ['figures/results/machine-prose.json', JSON.stringify({ commit, command: 'c', machine: '2 vCPU, 23 GiB' })],
    ['figures/results/one-run-without-command.json', JSON.stringify({ commit, machine, runs: [{ command: 'a' }, {}] })],
    ['figures/results/array.json', '[]'],
    ['figures/results/broken.json', '{"commit": '],
  ]);
  const doc = (text: string, sections = ['Figures']): FigureDoc => ({ path: 'figures/bench.md', text, sections });
  const check = (text: string, sections?: string[]) => brief(checkDocFigures([doc(text, sections)], (p) => results.get(p)));

  it('accepts rows that link a results document with its provenance, at the top level or in every run', () => {
    const text = [
      '# Bench',
      'All read from [results/](results/).',
      '## Figures',
      '| # | figure | read from |',
      '|---|---|---|',
      '| 1 | 1.1 | [good](results/good.json) `ratios` |',
      '| 2 | 2.2 | [runs](./results/runs.json#runs) |',
      '### A subsection stays in its section',
      '| a | b |',
      '| :-- | --: |',
      '| 3 | [good](results/good.json) |',
      '## Elsewhere',
      '| a | b |',
      '|---|---|',
      '| not a figure table | — |',
    ].join('\n');
    expect(check(text)).toEqual([]);
  });

  it('reports each fault where it is (negative control)', () => {
    const text = [
      '# Bench',
      '## Figures',
      '| # | figure | read from |',
      '|---|---|---|',
      '| 1 | 1.1 | none: to re-measure |',
      '| 2 | 2.2 | [a chart](results/chart.png) |',
      '| 3 | 3.3 | [gone](results/gone.json) |',
      '| 4 | 4.4 | [short](results/short-commit.json) |',
      '| 5 | 5.5 | [prose](results/machine-prose.json) |',
      '| 6 | 6.6 | [runs](results/one-run-without-command.json) |',
      '| 7 | 7.7 | [array](results/array.json) [broken](results/broken.json) |',
      '| 8 | 8.8 | `results/good.json` in code is no link |',
      "| 9 | 9.9 | [another document's](../other/results/good.json) |",
      '## Empty',
      'A figure in prose: 1.5 (see [good](results/good.json)).',
    ].join('\n');
    expect(check(text, ['Figures', 'Empty', 'Gone'])).toEqual([
      'figures/bench.md:6 results/chart.png: no such file',
      'figures/bench.md:7 results/gone.json: no such file',
      'figures/bench.md:8 results/short-commit.json: no commit (40 hex digits) at the top level',
      'figures/bench.md:9 results/machine-prose.json: no machine (an object with cpus) at the top level',
      'figures/bench.md:10 results/one-run-without-command.json: no command (a non-empty string) at the top level nor in every one of runs[]',
      'figures/bench.md:11 results/array.json: not a JSON object',
      expect.stringMatching(/^figures\/bench\.md:11 results\/broken\.json: not JSON /),
      'figures/bench.md:5 ## Figures: row "1 | 1.1" links no results/*.json',
      'figures/bench.md:6 ## Figures: row "2 | 2.2" links no results/*.json',
      'figures/bench.md:12 ## Figures: row "8 | 8.8" links no results/*.json',
      'figures/bench.md:13 ## Figures: row "9 | 9.9" links no results/*.json',
      'figures/bench.md:14 ## Empty: no table rows',
      'figures/bench.md:0 no section "## Gone"',
    ]);
  });

  it('reads a committed document as bench/support/provenance.ts writes it', () => {
    expect(resultDocumentProblems(readRepo('docs/results/bench-operator-c082b81.json'))).toEqual([]);
    expect(resultDocumentProblems(undefined)).toEqual(['no such file']);
  });
});
