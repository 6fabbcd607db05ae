/**
 * `make demo` end to end: runs scripts/demo.ts non-interactively (DEMO_EXIT_AFTER_ROLLOUT=1)
 * and checks from its output that every zone reached Done, the rollout Succeeded with no failed
 * or stale read, and that no process the demo started is left behind.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT } from './support';

jest.setTimeout(12 * 60_000);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** pids whose command line mentions `needle` (excluding this process). */
function processesMentioning(needle: string): string[] {
  const out: string[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes(needle)) out.push(`${d}: ${cmd.slice(0, 200)}`);
    } catch {
      /* gone */
    }
  }
  return out;
}

it('make demo runs a rollout to Succeeded, zone by zone, and cleans up', async () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'vmrollout-demo-test-'));
  const demoDir = path.join(work, 'demo');
  const tmpDir = path.join(work, 'tmp');
  const tsx = path.join(REPO_ROOT, 'node_modules', '.bin', 'tsx');
  const child = spawn(tsx, [path.join(REPO_ROOT, 'scripts', 'demo.ts')], {
    cwd: REPO_ROOT,
    env: { ...process.env, DEMO_EXIT_AFTER_ROLLOUT: '1', DEMO_DIR: demoDir, VMROLLOUT_TMPDIR: tmpDir, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number | null>((resolve) => {
    const t = setTimeout(() => child.kill('SIGINT'), 11 * 60_000);
    child.on('exit', (c) => {
      clearTimeout(t);
      resolve(c);
    });
  });
  fs.writeFileSync(path.join(work, 'demo-output.txt'), out);
  // The tail (jest elides the middle of long strings); the whole output is in demo-output.txt.
  const context = `--- demo output (${path.join(work, 'demo-output.txt')}), last lines ---\n${out.split('\n').slice(-45).join('\n')}`;

  expect({ code, context }).toEqual({ code: 0, context });
  expect(out).toMatch(/Temporal Web UI: +http:\/\/127\.0\.0\.1:\d+/);
  expect(out).toContain(`export KUBECONFIG=${path.join(demoDir, 'kubeconfig')}`);
  expect(out).toMatch(/workflow id: vmdc\/default\/demo\/g2-/);
  expect(out).toMatch(/signal .* --name pause/);
  expect(out).toMatch(/workflow cancel /);
  for (const z of ['az-a', 'az-b', 'az-c']) expect(out).toMatch(new RegExp(`zone ${z} +Done`));
  expect(out).toMatch(/rollout finished: phase Succeeded; reads during the rollout: [1-9]\d*, failed 0, stale 0/);
  expect(out).toContain('all demo processes stopped');

  // Nothing left running: every pid the demo printed is gone, and no process uses its dirs.
  const pids = [...out.matchAll(/pid (\d+)/g)].map((m) => Number(m[1]));
  expect(pids.length).toBeGreaterThanOrEqual(8);
  await new Promise((r) => setTimeout(r, 500));
  expect(pids.filter(alive)).toEqual([]);
  expect([...processesMentioning(demoDir), ...processesMentioning(tmpDir)]).toEqual([]);
});
