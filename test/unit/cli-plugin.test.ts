// kubectl vmdc's list, output formats, version and shell completion, without a cluster: what parses,
// the list table, YAML that escapes what others wrote, and the completion script run in a real bash.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse as parseYaml, stringify as plainYaml } from 'yaml';
import { ALLOWED, DEFAULT_STATUS_TIMEOUT_MS, parseCommand, UsageError, VERB_OPTIONS, VERBS } from '../../cli/args';
import { completionScript } from '../../cli/completion';
import { undoPlan } from '../../cli/undo-plan';
import { unifiedDiff } from '../../cli/unified-diff';
import { zoneApplies } from '../../cli/zone-applies';
import { VERB_EXIT_CODES } from '../../cli/exit-codes';
import { renderDocument } from '../../cli/output';
import { listDocument, listRows, renderList } from '../../cli/render-list';
import { versionDocument, versionLines } from '../../cli/verbs/version';
import type { VmdcObject } from '../../kube/vmdc-object';

const NOW = new Date('2026-12-02T01:00:00Z');

describe('parsing list, -o, status timeout, completion', () => {
  it('list, get -A and get without NAME list; -A with a NAME or --watch is refused', () => {
    expect(parseCommand(['list'])).toMatchObject({ verb: 'list', allNamespaces: false, output: 'text' });
    expect(parseCommand(['get', '-A', '-o', 'wide'])).toMatchObject({ verb: 'list', allNamespaces: true, output: 'wide' });
    expect(parseCommand(['get', '-n', 'ns'])).toMatchObject({ verb: 'list', allNamespaces: false, kube: { namespace: 'ns' } });
    expect(() => parseCommand(['get', '-A', 'x'])).toThrow(/-A lists every object: no NAME/);
    expect(() => parseCommand(['get', '-A', '--watch'])).toThrow(/--watch and --interval follow one object/);
    expect(() => parseCommand(['get', '--interval', '5s'])).toThrow(/--watch and --interval follow one object/);
    expect(() => parseCommand(['list', 'x'])).toThrow(/list takes no NAME/);
  });

  it('-o wide|json|yaml on every verb that prints a document; anything else is refused', () => {
    for (const o of ['wide', 'json', 'yaml'] as const) {
      expect(parseCommand(['get', 'x', '-o', o])).toMatchObject({ output: o });
      expect(parseCommand(['status', 'x', '-o', o])).toMatchObject({ output: o });
      expect(parseCommand(['history', 'x', '-o', o])).toMatchObject({ output: o });
      expect(parseCommand(['version', '-o', o])).toMatchObject({ verb: 'version', output: o });
      expect(parseCommand(['list', '-o', o])).toMatchObject({ output: o });
    }
    expect(() => parseCommand(['get', 'x', '-o', 'xml'])).toThrow(/the output formats are wide, json, yaml/);
    expect(() => parseCommand(['completion', 'bash', '-o', 'json'])).toThrow(/completion takes no --output/);
  });

  it('status has a default timeout of an hour; --timeout 0 waits without one', () => {
    expect(DEFAULT_STATUS_TIMEOUT_MS).toBe(3_600_000);
    expect(parseCommand(['status', 'x'])).toMatchObject({ timeoutMs: DEFAULT_STATUS_TIMEOUT_MS });
    expect(parseCommand(['status', 'x', '--timeout', '0'])).not.toHaveProperty('timeoutMs');
    expect(parseCommand(['status', 'x', '--timeout', '5m'])).toMatchObject({ timeoutMs: 300_000 });
  });

  it('completion takes bash or zsh', () => {
    expect(parseCommand(['completion', 'zsh'])).toEqual({ verb: 'completion', shell: 'zsh' });
    expect(() => parseCommand(['completion', 'fish'])).toThrow(UsageError);
    expect(() => parseCommand(['completion'])).toThrow(/one shell: bash or zsh/);
  });
});

describe('renderDocument', () => {
  const hostile = { message: 'a\x1b[2Jb\x9bc\u202ed\x07e', name: 'plain', n: null, list: ['x\x85y'] };

  it('YAML escapes every control character and reads back exactly; JSON likewise', () => {
    const yaml = renderDocument(hostile, 'yaml');
    expect(yaml).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
    expect(parseYaml(yaml)).toEqual(hostile);
    expect(JSON.parse(renderDocument(hostile, 'json'))).toEqual(hostile);
    // Negative control: the library's defaults leave C1 and the bidi override raw.
    expect(plainYaml(hostile)).toMatch(/[\x9b\u202e]/);
  });

  it('streams: JSON one line a document, YAML documents after ---', () => {
    expect(renderDocument({ a: 1 }, 'json', { stream: true })).toBe('{"a":1}');
    expect(renderDocument({ a: 1 }, 'yaml', { stream: true })).toBe('---\na: 1');
  });
});

const object = (ns: string, name: string, status: VmdcObject['status'], generation = 2): VmdcObject => ({
  apiVersion: 'vmrollout.io/v1alpha1',
  kind: 'VMDistributedCluster',
  metadata: { namespace: ns, name, generation, creationTimestamp: new Date('2026-12-01T23:00:00Z') },
  spec: {
    clusterVersion: 'v1.151.0-cluster',
    zones: ['az-a', 'az-b', 'az-c'].map((z) => ({ name: z, vmcluster: { name: `vm-${z}` } })),
    vmauth: { name: 'g' },
    vmagent: { name: 'g' },
  },
  ...(status ? { status } : {}),
});

describe('list', () => {
  const objects = [
    object('b', 'dc', { observedGeneration: 2, phase: 'Progressing', currentZone: 'az-b', zonesOutOfRotation: ['az-b'], workflow: { id: 'wf-2', runId: 'r' } }),
    object('a', 'old', { observedGeneration: 1, phase: 'Succeeded' }, 3),
    object('a', 'new', undefined, 1),
  ];

  it('rows sorted by namespace and name; the zone in flight; a status of an earlier rollout says so', () => {
    const rows = listRows(objects, NOW);
    expect(rows.map((r) => [r.namespace, r.name, r.phase, r.zones, r.out, r.generation, r.ageMs])).toEqual([
      ['a', 'new', 'Pending', '3', [], 1, 7_200_000],
      ['a', 'old', 'Succeeded (previous rollout)', '3', [], 3, 7_200_000],
      ['b', 'dc', 'Progressing', '2/3 az-b', ['az-b'], 2, 7_200_000],
    ]);
  });

  it('the table: NAMESPACE only with -A, wide adds VERSION WORKFLOW MESSAGE', () => {
    const rows = listRows(objects, NOW);
    expect(renderList(rows, { allNamespaces: true, wide: false })).toEqual([
      'NAMESPACE  NAME  PHASE                         ZONE(S)   OUT   GENERATION  AGE',
      'a          new   Pending                       3         -     1           2h00m',
      'a          old   Succeeded (previous rollout)  3         -     3           2h00m',
      'b          dc    Progressing                   2/3 az-b  az-b  2           2h00m',
    ]);
    expect(renderList(rows, { allNamespaces: false, wide: true })[0]).toBe(
      'NAME  PHASE                         ZONE(S)   OUT   GENERATION  AGE    VERSION           WORKFLOW  AWAITING  MESSAGE',
    );
    expect(listDocument(rows).items[2]).toEqual({
      namespace: 'b',
      name: 'dc',
      phase: 'Progressing',
      zones: '2/3 az-b',
      zonesOutOfRotation: ['az-b'],
      generation: 2,
      observedGeneration: 2,
      ageSeconds: 7200,
      clusterVersion: 'v1.151.0-cluster',
      workflowId: 'wf-2',
      awaiting: null,
      message: null,
    });
  });

  it('a rollout at a gate: PHASE says it awaits approval, wide names the gates and the zone they hold, the document has them', () => {
    const awaiting = { gates: ['BeforeFirstZone' as const, 'BeforeEachZone' as const], nextZone: 'az-a', since: '2026-12-02T00:59:00Z' };
    const rows = listRows(
      [object('a', 'gated', { observedGeneration: 2, phase: 'Progressing', currentZone: 'az-a', awaiting, workflow: { id: 'wf-3', runId: 'r' } })],
      NOW,
    );
    expect(renderList(rows, { allNamespaces: false, wide: false })).toEqual([
      'NAME   PHASE                            ZONE(S)   OUT  GENERATION  AGE',
      'gated  Progressing (awaiting approval)  1/3 az-a  -    2           2h00m',
    ]);
    expect(renderList(rows, { allNamespaces: false, wide: true })[1]).toBe(
      'gated  Progressing (awaiting approval)  1/3 az-a  -    2           2h00m  v1.151.0-cluster  wf-3      BeforeFirstZone+BeforeEachZone → az-a  -',
    );
    expect(listDocument(rows).items[0]).toMatchObject({ phase: 'Progressing', awaiting });
    // Without awaiting, nothing of it: the rows above.
    expect(listRows(objects, NOW).map((r) => r.awaiting)).toEqual([undefined, undefined, undefined]);
  });

  it('a hostile message cannot break a row (wide)', () => {
    const rows = listRows([object('a', 'x', { observedGeneration: 2, phase: 'Failed', message: 'bad\nNAMESPACE FORGED\x1b[2J' })], NOW);
    const lines = renderList(rows, { allNamespaces: true, wide: true });
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/bad NAMESPACE FORGED$/);
  });
});

describe('version', () => {
  it('the plugin, the cluster and the served versions; an unreachable cluster is said, not an error', () => {
    expect(versionLines(versionDocument('1.2.3', 'https://k', { servedVersions: ['v1alpha1'], preferredVersion: 'v1alpha1' }))).toEqual([
      'Plugin:   kubectl-vmdc 1.2.3',
      'Cluster:  https://k',
      'CRD:      vmdistributedclusters.vmrollout.io: served v1alpha1 (preferred v1alpha1)',
    ]);
    expect(versionLines(versionDocument('1.2.3', 'https://k', { error: 'connect ECONNREFUSED' }))[2]).toMatch(/not asked: connect ECONNREFUSED/);
    expect(versionLines(versionDocument('1.2.3', 'https://k', { servedVersions: [] }))[2]).toMatch(/not installed/);
  });
});

describe('completion script', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vmdc-completion-'));
  const script = path.join(dir, 'completion.bash');
  fs.writeFileSync(script, completionScript('bash'));

  /** What bash offers after `words` (the last one is being typed). */
  function complete(...words: string[]): string[] {
    const line = ['kubectl-vmdc', ...words];
    const out = execFileSync(
      'bash',
      [
        '-c',
        `source "$0"; kubectl() { echo dc-one dc-two; }; COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _kubectl_vmdc; printf '%s\\n' "\${COMPREPLY[@]}"`,
        script,
        ...line,
      ],
      { encoding: 'utf8' },
    );
    return out.split('\n').filter(Boolean);
  }

  it('offers the verbs, each verb exactly its flags from the table, -o values, shells and object names', () => {
    expect(complete('')).toEqual(expect.arrayContaining([...VERBS]));
    for (const verb of VERBS.filter((v) => v !== 'completion')) {
      const offered = complete(verb, '--');
      for (const flag of Object.keys(VERB_OPTIONS) as Array<keyof typeof VERB_OPTIONS>)
        expect([verb, flag, offered.includes(`--${flag}`)]).toEqual([verb, flag, ALLOWED[verb].includes(flag)]);
      expect(offered).toContain('--namespace');
    }
    expect(complete('get', '-o', '')).toEqual(['wide', 'json', 'yaml']);
    expect(complete('completion', '')).toEqual(['bash', 'zsh']);
    expect(complete('ab')).toEqual(['abort']);
    expect(complete('abort', '--r')).toEqual(['--reason']);
    expect(complete('abort', 'dc-o')).toEqual(['dc-one']);
    expect(complete('get', 'dc-t')).toEqual(['dc-two']);
    expect(complete('list', 'dc-')).toEqual([]);
  });

  it('zsh: the same function through bashcompinit, and both parse', () => {
    expect(completionScript('zsh')).toContain(completionScript('bash'));
    expect(() => execFileSync('bash', ['-n', script])).not.toThrow();
  });
});

describe('exit codes', () => {
  it("docs/cli.md's table lists every verb with exactly the codes of VERB_EXIT_CODES", () => {
    const doc = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'cli.md'), 'utf8');
    const header = doc.split('\n').find((l) => l.startsWith('| verb | 0 |'))!;
    const codes = header
      .split('|')
      .slice(2, -1)
      .map((c) => Number(c.trim()));
    const documented = new Map<string, number[]>();
    for (const row of doc.split('\n').filter((l) => /^\| `[a-z-]+` \|/.test(l) && l.split('|').length === header.split('|').length)) {
      const cells = row
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim());
      documented.set(
        cells[0]!.replace(/`/g, ''),
        codes.filter((_, i) => cells[i + 1] !== '—'),
      );
    }
    expect(new Set(documented.keys())).toEqual(new Set([...VERBS, 'import']));
    for (const [verb, codesOf] of Object.entries(VERB_EXIT_CODES)) expect([verb, documented.get(verb)]).toEqual([verb, [...codesOf]]);
  });
});

describe('undoPlan', () => {
  const withStatus = (clusterVersion: string, lastSucceeded?: { clusterVersion: string; generation: number }): VmdcObject => ({
    metadata: { name: 'x', generation: 3 },
    spec: { clusterVersion },
    status: lastSucceeded ? { lastSucceeded } : {},
  });

  it('the recorded last success, unless the spec already asks for it or nothing is recorded', () => {
    expect(undoPlan(withStatus('v2', { clusterVersion: 'v1', generation: 2 }))).toEqual({ kind: 'undo', from: 'v2', to: 'v1', succeededGeneration: 2 });
    expect(undoPlan(withStatus('v1', { clusterVersion: 'v1', generation: 2 }))).toMatchObject({ kind: 'refused', reason: expect.stringMatching(/already v1/) });
    expect(undoPlan(withStatus('v2'))).toMatchObject({ kind: 'refused', reason: expect.stringMatching(/no succeeded rollout is recorded/) });
  });
});

describe('unifiedDiff', () => {
  /** GNU diff -u's hunks of the same texts (its header lines carry file names and times). */
  function gnu(before: string, after: string): string[] {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vmdc-diff-'));
    fs.writeFileSync(path.join(dir, 'a'), before);
    fs.writeFileSync(path.join(dir, 'b'), after);
    try {
      execFileSync('diff', ['-u', path.join(dir, 'a'), path.join(dir, 'b')], { encoding: 'utf8' });
      return [];
    } catch (err) {
      return ((err as { stdout: string }).stdout.trimEnd().split('\n') as string[]).slice(2);
    }
  }
  const text = (n: number, change: (i: number) => string | undefined = () => undefined) =>
    Array.from({ length: n }, (_, i) => change(i) ?? `line ${i}`)
      .filter((l) => l !== '')
      .join('\n') + '\n';

  it.each([
    ['one changed line', text(10), text(10, (i) => (i === 5 ? 'changed' : undefined))],
    ['two hunks far apart', text(40), text(40, (i) => (i === 2 ? 'x' : i === 30 ? 'y' : undefined))],
    ['changes close together share a hunk', text(20), text(20, (i) => (i === 5 || i === 9 ? 'z' : undefined))],
    ['lines removed and added at the ends', text(8), `new first\n${text(8, (i) => (i === 7 ? '' : undefined))}`],
    ['from nothing', '', text(3)],
  ])('%s: the hunks GNU diff -u gives', (_what, before, after) => {
    const ours = unifiedDiff(before, after, { from: 'a', to: 'b' });
    expect(ours.slice(0, 2)).toEqual(['--- a', '+++ b']);
    expect(ours.slice(2)).toEqual(gnu(before, after));
  });

  it('equal texts: no diff', () => {
    expect(unifiedDiff(text(5), text(5), { from: 'a', to: 'b' })).toEqual([]);
  });
});

describe('zoneApplies', () => {
  it("each zone's VMCluster apply as the workflow builds it: clusterVersion set, overlay nulls dropped; an invalid spec is said", () => {
    const obj = object('ns', 'dc', undefined);
    (obj.spec as { overrideSpec?: unknown }).overrideSpec = { vmselect: { replicaCount: 2, extraArgs: null } };
    const plan = zoneApplies(obj);
    expect(plan).toMatchObject({ ok: true });
    if (!plan.ok) return;
    expect(plan.applies.map((a) => [a.zone, a.namespace, a.name, a.create])).toEqual([
      ['az-a', 'ns', 'vm-az-a', false],
      ['az-b', 'ns', 'vm-az-b', false],
      ['az-c', 'ns', 'vm-az-c', false],
    ]);
    expect(plan.applies[0]!.spec).toEqual({ vmselect: { replicaCount: 2 }, clusterVersion: 'v1.151.0-cluster' });
    expect(zoneApplies({ ...obj, spec: { zones: [] } })).toMatchObject({ ok: false, reason: expect.stringMatching(/^invalid spec/) });
  });
});
