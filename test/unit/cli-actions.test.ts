// The verbs that act (pause, resume, retry, cancel, undo, promote, diff, release-zone): -o json|yaml
// parses and -o wide is refused; their document through cli/output.ts, escaped, and nothing else on
// stdout; and `kubectl-vmdc __complete`, the protocol kubectl_complete-vmdc answers kubectl's TAB with.
import { parse as parseYaml } from 'yaml';
import { ALLOWED, GLOBAL_OPTIONS, parseCommand, UsageError, VERB_OPTIONS, VERBS } from '../../cli/args';
import { completeArgs, completeOutput, DIRECTIVE } from '../../cli/complete-protocol';
import { run } from '../../cli/main';
import { actionPrinter, type ActionDocument } from '../../cli/output';
import { fakeIo } from '../support/fake-io';

const ACTION_VERBS = ['pause', 'resume', 'retry', 'cancel', 'undo', 'promote', 'diff'] as const;

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
