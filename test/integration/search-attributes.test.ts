/**
 * The worker and the trigger as processes (`node --import tsx worker/main.ts` / `trigger/main.ts`)
 * against a real Temporal dev server whose namespace has none of vmrollout's search attributes:
 * each refuses to start (exit 2), naming all four and the command that creates them. That command,
 * run as printed with the real `temporal` CLI, is enough: the trigger then starts. (With the
 * attributes registered at the server's start, worker-main.test.ts and chaos-control-processes
 * start both processes.)
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { SEARCH_ATTRIBUTE_KEYS } from '../../api/rollout-contract';
import { freePort } from '../infra/harness/ports';
import { harnessTempDir, httpGet, startProcess, waitFor, type ManagedProcess } from '../infra/harness/processes';
import { useTemporalDevEnv } from '../infra/harness/temporal';
import { REPO_ROOT, toolPath } from '../infra/harness/tools';

jest.setTimeout(180_000);

const env = useTemporalDevEnv({ searchAttributes: [] });
let n = 0;

/** A kubeconfig that points nowhere: neither process reaches Kubernetes before the check. */
function deadKubeconfig(): string {
  const file = path.join(harnessTempDir('search-attributes-kube'), 'kubeconfig');
  fs.writeFileSync(
    file,
    'apiVersion: v1\nkind: Config\nclusters:\n- name: none\n  cluster: { server: "https://127.0.0.1:1" }\nusers:\n- name: none\n  user: {}\ncontexts:\n- name: none\n  context: { cluster: none, user: none }\ncurrent-context: none\n',
  );
  return file;
}

async function startMain(entry: 'worker/main.ts' | 'trigger/main.ts', extraEnv: Record<string, string> = {}): Promise<ManagedProcess> {
  return startProcess({
    name: `${path.dirname(entry)}-${++n}`,
    command: process.execPath,
    args: ['--import', 'tsx', path.join(REPO_ROOT, entry)],
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TMPDIR: process.env.TMPDIR,
      TEMPORAL_ADDRESS: env().address,
      TEMPORAL_NAMESPACE: env().namespace ?? 'default',
      KUBECONFIG: deadKubeconfig(),
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: '0',
      TEMPORAL_METRICS_BIND: '',
      LOG_LEVEL: 'warn',
      ...extraEnv,
    },
  });
}

/** The exit code, or 'still running' after 60 s (the process started despite the missing attributes). */
async function exitCode(p: ManagedProcess): Promise<number | null | 'still running'> {
  const timeout = new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 60_000).unref());
  return Promise.race([p.exited().then((e) => e.code), timeout]);
}

const refusals: string[] = [];

it.each(['worker/main.ts', 'trigger/main.ts'] as const)('%s exits 2 naming the four missing attributes and how to create them', async (entry) => {
  const p = await startMain(entry);
  try {
    const code = await exitCode(p);
    const log = fs.readFileSync(p.logPath, 'utf8');
    expect({ code, log }).toEqual({ code: 2, log: expect.stringContaining('lacks search attributes that vmrollout sets on every rollout') });
    for (const k of SEARCH_ATTRIBUTE_KEYS) expect(log).toMatch(new RegExp(`^  - ${k.name} \\((Keyword|Int)\\): not registered$`, 'm'));
    expect(log).toContain(`temporal operator search-attribute create --address ${env().address} --namespace ${env().namespace ?? 'default'} `);
    expect(log).toContain('temporalSetup.enabled=true');
    refusals.push(log);
  } finally {
    await p.stop();
  }
});

it('the create command it printed, run with the real CLI, is enough: the trigger then starts', async () => {
  expect(refusals).toHaveLength(2);
  const commands = refusals[0]!.split('\n').filter((l) => l.startsWith('  temporal operator search-attribute create '));
  expect(commands).toHaveLength(1);
  const [, ...args] = commands[0]!.trim().split(' ');
  await promisify(execFile)(toolPath('temporal'), args, { timeout: 30_000 });

  const port = await freePort();
  const p = await startMain('trigger/main.ts', { METRICS_PORT: String(port) });
  try {
    await waitFor(async () => (await httpGet(`http://127.0.0.1:${port}/healthz`)).status === 200, {
      timeoutMs: 60_000,
      description: 'the trigger process serving /healthz',
      diagnostics: () => fs.readFileSync(p.logPath, 'utf8'),
    });
    const exited = p.exited();
    p.signal('SIGTERM');
    expect((await exited).code).toBe(0);
  } finally {
    await p.stop();
  }
});
