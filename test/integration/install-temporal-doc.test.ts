/**
 * docs/install.md "The namespace and the search attributes" stays true:
 *  - the by-hand commands it prints, run line by line with the real `temporal` CLI against a real dev
 *    server, create the namespace with the retention they name and register exactly the search
 *    attributes every rollout sets (api/rollout-contract.ts), with their types;
 *  - what it says of the chart's hook is what the rendered hook Job does: the hook kinds, the default
 *    retention, and the same search-attribute command.
 * Negative control: the printed command with one `--type` left out registers another type and
 * leaves an attribute missing, and the check tells.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type * as k8s from '@kubernetes/client-node';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTE_KEYS } from '../../api/rollout-contract';
import { renderChart } from '../infra/harness/chart-identities';
import { useTemporalDevEnv } from '../infra/harness/temporal';
import { REPO_ROOT, toolPath } from '../infra/harness/tools';

jest.setTimeout(180_000);

const INSTALL_DOC = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'install.md'), 'utf8');
const SECTION = '### The namespace and the search attributes';

/** The text of the doc's section, up to the next heading of its level or above. */
function section(): string {
  const start = INSTALL_DOC.indexOf(`\n${SECTION}\n`);
  if (start < 0) throw new Error(`docs/install.md has no section "${SECTION}"`);
  const rest = INSTALL_DOC.slice(start + SECTION.length + 2);
  const end = rest.search(/\n#{2,3} /);
  return end < 0 ? rest : rest.slice(0, end);
}

/** The `temporal …` command lines of the section's first sh block. */
function byHandCommands(): string[] {
  const block = /```sh\n([\s\S]*?)```/.exec(section());
  if (!block) throw new Error(`no sh block in "${SECTION}"`);
  return block[1]!.split('\n').filter((l) => l.startsWith('temporal '));
}

/** Splits a command line as the shell would (the doc's lines hold no quotes). */
const argv = (line: string) => line.split(/\s+/).filter(Boolean).slice(1);

const TYPE_NAMES: Record<number, string> = {
  [temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD]: 'KEYWORD',
  [temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT]: 'INT',
};

/** What each of vmrollout's attributes is in `namespace`: its type, or "missing". */
async function attributes(env: ReturnType<typeof useTemporalDevEnv>, namespace: string): Promise<Map<string, string>> {
  const { customAttributes } = await env().connection.operatorService.listSearchAttributes({ namespace });
  const out = new Map<string, string>();
  for (const key of SEARCH_ATTRIBUTE_KEYS) {
    const type = customAttributes?.[key.name];
    out.set(key.name, type === undefined || type === null ? 'missing' : (TYPE_NAMES[type] ?? `type ${type}`));
  }
  return out;
}

const expected = new Map(SEARCH_ATTRIBUTE_KEYS.map((k) => [k.name, k.type]));

describe('the by-hand commands of docs/install.md on a real Temporal dev server', () => {
  const env = useTemporalDevEnv({ searchAttributes: [] });
  const run = (args: string[]) =>
    promisify(execFile)(toolPath('temporal'), args, { env: { ...process.env, TEMPORAL_ADDRESS: env().address }, timeout: 60_000 });

  /** Runs the command, again while the frontend does not know a namespace created a moment ago. */
  async function runUntilKnown(args: string[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await run(args);
        return;
      } catch (err) {
        if (attempt >= 15 || !/not found|NotFound/i.test(String((err as { stderr?: string }).stderr ?? err))) throw err;
      }
    }
  }

  test('create the namespace with its retention and register the four attributes with their types', async () => {
    const commands = byHandCommands();
    expect(commands.map((c) => argv(c).slice(0, 3).join(' '))).toEqual([
      'operator namespace create',
      'operator search-attribute create',
      'operator search-attribute list',
    ]);
    for (const line of commands.filter((c) => !c.includes(' list '))) await runUntilKnown(argv(line));
    const ns = argv(commands[0]!)[argv(commands[0]!).indexOf('--namespace') + 1]!;
    const described = await env().connection.workflowService.describeNamespace({ namespace: ns });
    expect(Number(described.config?.workflowExecutionRetentionTtl?.seconds)).toBe(7 * 24 * 3600);
    expect(commands[0]).toContain('--retention 7d');
    expect(await attributes(env, ns)).toEqual(expected);
  });

  // As the doc warns: the CLI pairs --name and --type by position, so the types shift by one.
  test('negative control: the same command with one --type left out registers a wrong type and leaves one missing', async () => {
    const create = byHandCommands().find((c) => c.includes('search-attribute create'))!;
    await runUntilKnown(['operator', 'namespace', 'create', '--namespace', 'vmrollout-negative', '--retention', '1d']);
    const broken = argv(
      create.replace('--name VmdcGeneration --type Int', '--name VmdcGeneration').replace('--namespace vmrollout', '--namespace vmrollout-negative'),
    );
    await runUntilKnown(broken);
    const got = await attributes(env, 'vmrollout-negative');
    expect(got.get('VmdcGeneration')).toBe('KEYWORD');
    expect(got.get('VmdcClusterVersion')).toBe('missing');
    expect(got).not.toEqual(expected);
  });
});

describe("what docs/install.md says of the chart's hook is what the chart renders", () => {
  const script = (values: string[]) => {
    const job = renderChart({ releaseNamespace: 'vmrollout', values: ['temporalSetup.enabled=true', ...values] }).find(
      (o) => o.kind === 'Job' && o.metadata?.name?.endsWith('-temporal-setup'),
    ) as k8s.V1Job | undefined;
    expect(job).toBeDefined();
    return { job: job!, text: job!.spec!.template.spec!.containers[0]!.args!.join('\n') };
  };

  test('a pre-install,pre-upgrade hook; namespace create only with createNamespace, at the default retention the doc names', () => {
    const text = section();
    const { job, text: withCreate } = script(['temporalSetup.createNamespace=true']);
    expect(job.metadata!.annotations!['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(text).toContain('`pre-install,pre-upgrade`');
    const retention = /--retention (\S+)/.exec(withCreate)![1]!;
    expect(text).toContain(`(default \`${retention}\`)`);
    expect(withCreate).toContain('temporal operator namespace describe');
    expect(script([]).text).not.toContain('namespace create');
  });

  test('the search-attribute command of the hook is the one the doc prints, but for the namespace', () => {
    const hook = /temporal operator search-attribute create .*/.exec(script([]).text)![0].replace('"$TEMPORAL_NAMESPACE"', 'vmrollout');
    expect(byHandCommands()).toContain(hook);
  });
});
