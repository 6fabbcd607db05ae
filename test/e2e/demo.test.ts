/**
 * `make demo` end to end: runs scripts/demo.ts non-interactively (DEMO_EXIT_AFTER_ROLLOUT=1)
 * and checks from its output (the views of `kubectl vmdc get --watch` it prints) that the rollout
 * went zone by zone — one zone in flight and at most one out of reads at a time, in order, each
 * to Done — and Succeeded with no failed or stale read, that it printed the commands (temporal and
 * the plugin's) to pause, resume and cancel, and that no process the demo started is left behind.
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

interface ShownView {
  workflow?: string;
  phase?: string;
  zones: Array<{ name: string; phase: string; out: boolean }>;
  backlog: boolean;
}

/** The views the demo printed: each starts at a `── <time> ───` rule (cli/screen.ts appendScreen). */
function shownViews(out: string): ShownView[] {
  const views: ShownView[] = [];
  let cur: ShownView | undefined;
  for (const line of out.split('\n')) {
    if (/^── \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ ─+$/.test(line)) {
      cur = { zones: [], backlog: false };
      views.push(cur);
      continue;
    }
    if (!cur || line.startsWith('[+')) {
      cur = undefined;
      continue;
    }
    const wf = /^Workflow: +(\S+)$/.exec(line);
    if (wf) cur.workflow = wf[1];
    const ph = /^Phase: +\S+ (\w+)$/.exec(line);
    if (ph) cur.phase = ph[1];
    const z = /^(az-[abc]) +[✔◌○✖] (\w+) .* (in|OUT) +vm-az-[abc] /.exec(line);
    if (z) cur.zones.push({ name: z[1]!, phase: z[2]!, out: z[3] === 'OUT' });
    if (/^ {4}backlog /.test(line)) cur.backlog = true;
  }
  return views;
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
  for (const verb of ['pause', 'resume', 'cancel'])
    expect(out).toMatch(new RegExp(`^  ${verb}: +(\\S+kubectl-vmdc\\.cjs|npx tsx cli/main\\.ts) ${verb} demo$`, 'm'));

  // Zone by zone, as the plugin's views showed it: the rollout of generation 2 (the version bump).
  const views = shownViews(out).filter((v) => /^vmdc\/default\/demo\/g2-/.test(v.workflow ?? ''));
  expect(views.length).toBeGreaterThanOrEqual(6);
  const ZONES = ['az-a', 'az-b', 'az-c'];
  const inFlight: string[] = [];
  for (const v of views) {
    expect(v.zones.map((z) => z.name)).toEqual(ZONES);
    expect(v.zones.filter((z) => z.out).length).toBeLessThanOrEqual(1);
    const busy = v.zones.findIndex((z) => !['Pending', 'Done', 'Skipped'].includes(z.phase));
    if (busy < 0) continue;
    // Before the zone in flight every zone is done, after it none has started.
    expect({
      view: v,
      before: v.zones.slice(0, busy).every((z) => z.phase === 'Done'),
      after: v.zones.slice(busy + 1).every((z) => z.phase === 'Pending'),
    }).toEqual({ view: v, before: true, after: true });
    if (inFlight.at(-1) !== v.zones[busy]!.name) inFlight.push(v.zones[busy]!.name);
  }
  expect(inFlight).toEqual(ZONES);
  for (const z of ZONES) expect({ z, wentOut: views.some((v) => v.zones.some((x) => x.name === z && x.out)) }).toEqual({ z, wentOut: true });
  expect(views.some((v) => v.backlog)).toBe(true);
  expect(views.at(-1)).toMatchObject({ phase: 'Succeeded', zones: ZONES.map((name) => ({ name, phase: 'Done', out: false })) });
  expect(out).toMatch(/rollout finished: phase Succeeded; reads during the rollout: [1-9]\d*, failed 0, stale 0/);
  expect(out).toContain('all demo processes stopped');

  // Nothing left running: every pid the demo printed is gone, and no process uses its dirs.
  const pids = [...out.matchAll(/pid (\d+)/g)].map((m) => Number(m[1]));
  expect(pids.length).toBeGreaterThanOrEqual(8);
  await new Promise((r) => setTimeout(r, 500));
  expect(pids.filter(alive)).toEqual([]);
  expect([...processesMentioning(demoDir), ...processesMentioning(tmpDir)]).toEqual([]);
});
