// The verbs that act (pause, resume, retry, cancel, undo, promote, abort, diff, release-zone): -o
// json|yaml parses and -o wide is refused; their document through cli/output.ts, escaped, and nothing
// else on stdout; what promote and abort say of the workflow's answer to their Update; and
// `kubectl-vmdc __complete`, the protocol kubectl_complete-vmdc answers kubectl's TAB with.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse as parseYaml } from 'yaml';
import { ABORT_REASON_MAX_LENGTH } from '../../api/rollout-contract';
import { ALLOWED, GLOBAL_OPTIONS, parseCommand, USAGE, UsageError, VERB_OPTIONS, VERBS } from '../../cli/args';
import { abortOutcome, deliver, promoteOutcome, refusedOutcome, type UpdateTarget } from '../../cli/boundary-outcome';
import { completeArgs, completeOutput, DIRECTIVE } from '../../cli/complete-protocol';
import { EXIT, Refused } from '../../cli/exit-codes';
import { run } from '../../cli/main';
import { actionPrinter, type ActionDocument } from '../../cli/output';
import { writeKubeconfig } from '../support/kubeconfig';
import { fakeIo } from '../support/fake-io';

const ACTION_VERBS = ['pause', 'resume', 'retry', 'cancel', 'undo', 'promote', 'abort', 'diff'] as const;

describe('-o on the verbs that act', () => {
  it('json and yaml parse on each; text is the default; wide is refused with a usage error naming the formats', () => {
    for (const verb of ACTION_VERBS) {
      expect(parseCommand([verb, 'x'])).toMatchObject({ verb, name: 'x', output: 'text' });
      for (const o of ['json', 'yaml'] as const) expect(parseCommand([verb, 'x', '-o', o])).toMatchObject({ verb, output: o });
      expect(() => parseCommand([verb, 'x', '-o', 'wide'])).toThrow(
        new UsageError(`-o wide: ${verb} prints no table to widen; its output formats are json, yaml`),
      );
      expect(ALLOWED[verb]).toContain('output');
    }
    expect(parseCommand(['release-zone', '-n', 'ns', 'x', '--zone', 'z', '-o', 'yaml'])).toMatchObject({ verb: 'release-zone', output: 'yaml' });
    expect(parseCommand(['release-zone', '-n', 'ns', '--list', '--output=json'])).toMatchObject({ list: true, output: 'json' });
    expect(() => parseCommand(['release-zone', '-n', 'ns', '--list', '-o', 'wide'])).toThrow(/-o wide: release-zone prints no table/);
    expect(() => parseCommand(['undo', 'x', '-o', 'xml'])).toThrow(/the output formats are wide, json, yaml/);
  });

  it('wide is refused through run() too: exit 3, the verb usage on stderr, nothing on stdout', async () => {
    const io = fakeIo();
    const { out, err } = io;
    expect(await run(['promote', 'x', '-o', 'wide'], io)).toBe(3);
    expect(out).toEqual([]);
    expect(err).toEqual([expect.stringMatching(/^error: -o wide: promote/), 'usage: kubectl vmdc promote NAME [-o json|yaml] [global flags]']);
  });
});

describe('promote and abort: what the workflow answered their Update', () => {
  const WORKFLOW_ID = 'vmdc/team-a/dc/g4-1a2b3c4d';
  const target = (verb: 'promote' | 'abort'): UpdateTarget => ({ verb, namespace: 'team-a', name: 'dc', uid: 'u-1', workflowId: WORKFLOW_ID });
  const ids = { namespace: 'team-a', name: 'dc', uid: 'u-1', workflowId: WORKFLOW_ID };

  /** What the verb prints with `-o output` and how it ends: its exit code, or the error that gives it. */
  function said(outcome: ReturnType<typeof promoteOutcome>, output: 'text' | 'json') {
    const lines: string[] = [];
    let end: number | unknown;
    try {
      end = deliver(
        outcome,
        actionPrinter(output, (l) => lines.push(l)),
      );
    } catch (err) {
      end = err;
    }
    return { lines, end };
  }

  it('promote at a gate: the gate passed and the zone that starts; the document has gates and nextZone', () => {
    const gate = promoteOutcome(target('promote'), { gates: ['BeforeFirstZone'], nextZone: 'az-a' });
    expect(said(gate, 'text')).toEqual({
      lines: [`${WORKFLOW_ID}: gate BeforeFirstZone passed; zone az-a starts now`, 'follow it: kubectl vmdc get dc -n team-a --watch'],
      end: EXIT.ok,
    });
    const { lines, end } = said(gate, 'json');
    expect(end).toBe(EXIT.ok);
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([{ verb: 'promote', ...ids, result: 'accepted', gates: ['BeforeFirstZone'], nextZone: 'az-a' }]);
    const two = promoteOutcome(target('promote'), { gates: ['BeforeFirstZone', 'BeforeEachZone'], nextZone: 'az-c' });
    expect(two.lines[0]).toBe(`${WORKFLOW_ID}: gates BeforeFirstZone + BeforeEachZone passed; zone az-c starts now`);
  });

  it('promote of the pauseBetweenZones wait (also the only answer of a build before gates): as before, no gate', () => {
    const pause = promoteOutcome(target('promote'), { after: 'az-a', skippedMs: 3_300_000 });
    expect(pause.lines[0]).toBe(`${WORKFLOW_ID}: the wait after zone az-a ended 55m00s early; the next zone starts now`);
    expect(pause.document).toEqual({ verb: 'promote', ...ids, result: 'accepted', afterZone: 'az-a', skippedMs: 3_300_000 });
  });

  it('abort: where it stopped, every zone in reads, how many upgraded; the document has gates (null: the pause), nextZone, upgraded', () => {
    const atGate = abortOutcome(target('abort'), { gates: ['AfterFirstZone'], nextZone: 'az-b', upgraded: 1 });
    expect(said(atGate, 'text')).toEqual({
      lines: [
        `${WORKFLOW_ID}: aborted at gate AfterFirstZone, before zone az-b: every zone is in`,
        'reads; 1 zone upgraded, the zones not reached keep their version',
        'The phase becomes Aborted; a new spec starts a new rollout.',
        'follow it: kubectl vmdc get dc -n team-a --watch (ends at Aborted)',
      ],
      end: EXIT.ok,
    });
    const yaml: string[] = [];
    expect(
      deliver(
        atGate,
        actionPrinter('yaml', (l) => yaml.push(l)),
      ),
    ).toBe(EXIT.ok);
    expect(yaml.map((y) => parseYaml(y) as unknown)).toEqual([
      { verb: 'abort', ...ids, result: 'accepted', gates: ['AfterFirstZone'], nextZone: 'az-b', upgraded: 1 },
    ]);
    const inPause = abortOutcome(target('abort'), { nextZone: 'az-c', upgraded: 2 });
    expect(inPause.lines[0]).toBe(
      `${WORKFLOW_ID}: aborted in the pause between zones, before zone az-c: every zone is in reads; 2 zones upgraded, the zones not reached keep their version`,
    );
    expect(inPause.document).toMatchObject({ result: 'accepted', gates: null, nextZone: 'az-c', upgraded: 2 });
  });

  it.each(['promote', 'abort'] as const)(
    '%s refused by the workflow: the document says why, no line for a person, and it ends as a refusal (exit 1)',
    (verb) => {
      const reason = `no gate, pauseBetweenZones or canary wait in progress: the rollout is Progressing at zone az-b, step Upgrading; nothing to ${verb}`;
      const text = said(refusedOutcome(target(verb), reason), 'text');
      expect(text.lines).toEqual([]);
      expect(text.end).toEqual(new Refused(`${WORKFLOW_ID} refused the ${verb}: ${reason}`));
      const json = said(refusedOutcome(target(verb), reason), 'json');
      expect(json.end).toBeInstanceOf(Refused);
      expect(json.lines.map((l) => JSON.parse(l) as unknown)).toEqual([{ verb, ...ids, result: 'refused', reason }]);
    },
  );

  it("abort refused by a worker from before gates: Temporal's words, and what they mean", () => {
    const reason = 'No registered handler for update: abort';
    expect((said(refusedOutcome(target('abort'), reason), 'text').end as Refused).message).toBe(
      `${WORKFLOW_ID} refused the abort: ${reason} (its worker runs a vmrollout from before gates, which cannot abort)`,
    );
    expect(refusedOutcome(target('promote'), reason).refused!.message).toBe(`${WORKFLOW_ID} refused the promote: ${reason}`);
  });
});

describe('kubectl vmdc abort on the command line', () => {
  it('--reason up to 256 characters (as the workflow checks: UTF-16 units); longer is a usage error; only abort takes it', () => {
    expect(ABORT_REASON_MAX_LENGTH).toBe(256);
    expect(parseCommand(['abort', 'x'])).toEqual(expect.objectContaining({ verb: 'abort', name: 'x', output: 'text' }));
    expect(parseCommand(['abort', 'x'])).not.toHaveProperty('reason');
    expect(parseCommand(['abort', 'x', '--reason', 'error budget burnt in az-a', '-o', 'json'])).toMatchObject({
      reason: 'error budget burnt in az-a',
      output: 'json',
    });
    expect(parseCommand(['abort', 'x', '--reason', 'r'.repeat(256)])).toMatchObject({ reason: 'r'.repeat(256) });
    expect(() => parseCommand(['abort', 'x', '--reason', 'r'.repeat(257)])).toThrow(new UsageError('--reason is 257 characters long: at most 256'));
    // 128 emoji are 256 UTF-16 units; 129 are 258, over what the workflow's validator takes.
    expect(parseCommand(['abort', 'x', '--reason', '🛑'.repeat(128)])).toMatchObject({ reason: '🛑'.repeat(128) });
    expect(() => parseCommand(['abort', 'x', '--reason', '🛑'.repeat(129)])).toThrow(/at most 256/);
    expect(() => parseCommand(['abort', 'x', '--reason', ' '])).toThrow(/--reason must not be empty/);
    expect(() => parseCommand(['promote', 'x', '--reason', 'r'])).toThrow(new UsageError('promote takes no --reason'));
  });

  /** An API server that serves one VMDistributedCluster (and counts what it is asked). */
  async function apiServer(object: object) {
    const asked: string[] = [];
    const server = http.createServer((req, res) => {
      asked.push(`${req.method} ${req.url}`);
      const own = req.url === '/apis/vmrollout.io/v1alpha1/namespaces/team-a/vmdistributedclusters/dc';
      res
        .writeHead(own ? 200 : 404, { 'content-type': 'application/json' })
        .end(JSON.stringify(own ? object : { kind: 'Status', code: 404, reason: 'NotFound' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const kubeconfig = writeKubeconfig(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
    return { kubeconfig, asked, close };
  }

  it('through run(): a --reason too long is refused before any request (3, the usage); an object with no workflow is refused (1, no document)', async () => {
    const api = await apiServer({
      apiVersion: 'vmrollout.io/v1alpha1',
      kind: 'VMDistributedCluster',
      metadata: { name: 'dc', namespace: 'team-a', uid: 'u-1' },
      status: {},
    });
    try {
      const long = fakeIo();
      expect(await run(['abort', 'dc', '--kubeconfig', api.kubeconfig, '--reason', 'r'.repeat(257)], long)).toBe(EXIT.error);
      expect(long.err).toEqual(['error: --reason is 257 characters long: at most 256', USAGE.abort]);
      expect(api.asked).toEqual([]);

      const none = fakeIo();
      expect(await run(['abort', 'dc', '--kubeconfig', api.kubeconfig, '--reason', 'r'.repeat(256), '-o', 'json'], none)).toBe(EXIT.failed);
      expect(none.err).toEqual(['error: status.workflow names no workflow to abort']);
      expect(none.out).toEqual([]);
      // The control: the same run got as far as the object.
      expect(api.asked).toEqual(['GET /apis/vmrollout.io/v1alpha1/namespaces/team-a/vmdistributedclusters/dc']);
    } finally {
      await api.close();
    }
  });
});

describe('an action verb document', () => {
  const hostile: ActionDocument = {
    verb: 'promote',
    namespace: 'team-a',
    name: 'dc',
    result: 'refused',
    reason: 'no wait \x1b[2J\x1b]8;;http://evil\x07runs\u202e\x9b\nnow: "quoted"',
  };

  function printed(output: 'text' | 'json' | 'yaml'): string[] {
    const lines: string[] = [];
    const out = actionPrinter(output, (l) => lines.push(l));
    out.line('a line for a person');
    out.document(hostile);
    return lines;
  }

  it('text: the lines only; json, yaml: the one document only, which reads back as written', () => {
    expect(printed('text')).toEqual(['a line for a person']);
    const [json, ...moreJson] = printed('json');
    expect(moreJson).toEqual([]);
    expect(JSON.parse(json!)).toEqual(hostile);
    const [yaml, ...moreYaml] = printed('yaml');
    expect(moreYaml).toEqual([]);
    expect(parseYaml(yaml!)).toEqual(hostile);
  });

  it('escapes, never removes, what others wrote: no raw ESC, BEL, C1 or bidi override', () => {
    for (const o of ['json', 'yaml'] as const) {
      const [text] = printed(o);
      expect(text).not.toMatch(/[\x1b\x07\x7f-\x9f\u202a-\u202e]/);
      expect(text).toContain(o === 'json' ? '\\u001b[2J' : '\\e[2J');
      expect(text).toContain('\\u202e');
      expect(text).toContain('\\u009b');
    }
  });
});

describe('kubectl-vmdc __complete (what kubectl_complete-vmdc answers kubectl with)', () => {
  const candidates = (...args: string[]) => completeArgs(args).candidates;

  it('the verbs first, then each verb exactly its flags from the one table, with no file completion', () => {
    expect(completeArgs([''])).toEqual({ candidates: [...VERBS, 'help'], directive: DIRECTIVE.noFileComp });
    expect(candidates('re')).toEqual(['resume', 'retry', 'release-zone']);
    expect(candidates('a')).toEqual(['abort']);
    expect(candidates('abort', 'dc', '--re')).toEqual(['--reason']);
    expect(candidates('promote', 'dc', '--re')).toEqual([]);
    expect(completeArgs(['abort', '--reason', ''])).toEqual({ candidates: [], directive: DIRECTIVE.noFileComp });
    expect(completeArgs(['abort', '--reason', 'why', 'd'])).toMatchObject({ names: {} });
    expect(candidates('--kube')).toEqual(['--kubeconfig']);
    for (const verb of VERBS.filter((v) => v !== 'completion')) {
      const offered = candidates(verb, '--');
      for (const flag of Object.keys(VERB_OPTIONS) as Array<keyof typeof VERB_OPTIONS>)
        expect([verb, flag, offered.includes(`--${flag}`)]).toEqual([verb, flag, ALLOWED[verb].includes(flag)]);
      for (const flag of Object.keys(GLOBAL_OPTIONS)) expect(offered).toContain(`--${flag}`);
    }
  });

  it('-o values as each verb takes them; shells; a file flag leaves the shell its file completion', () => {
    expect(candidates('get', 'x', '-o', '')).toEqual(['wide', 'json', 'yaml']);
    expect(candidates('undo', 'x', '--output', '')).toEqual(['json', 'yaml']);
    expect(candidates('pause', '--output=j')).toEqual(['--output=json']);
    expect(candidates('completion', '')).toEqual(['bash', 'zsh']);
    expect(completeArgs(['get', '--kubeconfig', ''])).toEqual({ candidates: [], directive: DIRECTIVE.default });
    expect(completeArgs(['get', '--timeout', ''])).toEqual({ candidates: [], directive: DIRECTIVE.noFileComp });
  });

  it("a NAME asks for the cluster's objects with the kube flags given so far (a flag's value is no verb or name)", () => {
    expect(completeArgs(['-n', 'team-a', 'get', 'd'])).toEqual({ candidates: [], directive: DIRECTIVE.noFileComp, names: { namespace: 'team-a' } });
    expect(completeArgs(['undo', '--context', 'c', '--kubeconfig', '/k', 'x'])).toMatchObject({ names: { context: 'c', kubeconfig: '/k' } });
    expect(completeArgs(['get', 'dc', ''])).not.toHaveProperty('names');
    expect(completeArgs(['list', ''])).not.toHaveProperty('names');
    expect(completeArgs(['bogus', ''])).toEqual({ candidates: [], directive: DIRECTIVE.noFileComp });
  });

  it("Cobra's output: one candidate a line, then :DIRECTIVE; through run(), nothing on stderr", async () => {
    expect(completeOutput(['json', 'yaml'], 4)).toEqual(['json', 'yaml', ':4']);
    const io = fakeIo();
    const { out, err } = io;
    expect(await run(['__complete', 'status', 'x', '-o', ''], io)).toBe(0);
    expect(out).toEqual(['wide', 'json', 'yaml', ':4']);
    // A NAME with a kubeconfig that cannot be read: no names and no error, still the directive.
    out.length = 0;
    expect(await run(['__complete', '--kubeconfig', '/nonexistent/kubeconfig', 'get', ''], io)).toBe(0);
    expect(out).toEqual([':4']);
    expect(err).toEqual([]);
  });
});
