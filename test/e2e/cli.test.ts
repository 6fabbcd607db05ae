/**
 * `kubectl vmdc` end to end: the built bundle (dist/kubectl-vmdc.cjs, built in beforeAll) run as a
 * person runs it, against the real stack (test/e2e/support.ts startE2EStack: Temporal dev server,
 * kube-apiserver, 3 VictoriaMetrics zones, vmagent, vmauth, the zone simulator, the real worker and
 * trigger, payloads encrypted). One VMDistributedCluster, edited in turn by the tests:
 *   generation 2 (v1.151): `get` (-o json and text) mid-rollout, `status` timing out, `pause` and
 *   `resume` (generations 3 and 4, adopted by the same workflow), `status` until it Succeeded,
 *   `history`; generation 5 (v1.152): `cancel` (refused without a terminal, then --yes), `status`
 *   reporting Cancelled; `release-zone --list` (bundle and `npx tsx cli/main.ts`); generation 6
 *   (v1.153): zone az-b fails, its cause is fixed, `retry` → Succeeded; then gates (strategy.gates):
 *   `promote` at BeforeFirstZone and AfterFirstZone (refused mid-zone), `abort` and `cancel` at a
 *   gate, and the negative control: the same edit without gates rolls through with no one promoting.
 * What the plugin shows is checked against the object's status as a poller saw it meanwhile.
 * Short durations (4 s zone downtime, 8 s queueDrainedFor) keep the file around three minutes.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import type { viewDocument } from '../../cli/render-json';
import { ZONE_PHASES, type VMDistributedClusterStatus } from '../../api/types';
import { waitFor } from '../infra/harness/processes';
import { ANNOTATION_FAIL } from '../infra/simulator/simulator';
import {
  DEMO_CLUSTERS,
  DEMO_TOKENS,
  eventNames,
  getObject,
  mergePatch,
  REPO_ROOT,
  runCommand,
  startE2EStack,
  waitVmclusterOperational,
  waitVmdcPhase,
  watchVmdc,
  workerEvents,
  type CommandResult,
  type E2EStack,
  type VmdcSnapshot,
  V1,
  V2,
  V3,
  V4,
} from './support';

jest.setTimeout(6 * 60_000);

const NS = 'default';
const VMDC = 'cli';
const QUEUE_DRAINED_FOR = '8s';
/** cli/build.ts BUNDLE: built by a child process (esbuild's JS API refuses to run inside jest's sandbox). */
const BUNDLE = path.join(REPO_ROOT, 'dist', 'kubectl-vmdc.cjs');
/** Where the outputs are kept (docs/cli.md's walk-through is taken from them). */
const OUT_DIR = path.join(REPO_ROOT, '.tmp', 'cli-e2e');

let stack: E2EStack;
let kc: k8s.KubeConfig;
let env: NodeJS.ProcessEnv;
let watch: ReturnType<typeof watchVmdc>;

beforeAll(async () => {
  let build: CommandResult;
  [build, stack] = await Promise.all([
    runCommand(path.join(REPO_ROOT, 'node_modules', '.bin', 'tsx'), [path.join(REPO_ROOT, 'cli', 'build.ts')], { timeoutMs: 120_000 }),
    startE2EStack({
      namespace: NS,
      vmdcName: VMDC,
      clusters: DEMO_CLUSTERS,
      tokens: DEMO_TOKENS,
      initialVersion: V1,
      zoneDowntimeMs: 4000,
      strategy: { order: 'Declared', readDrainDelay: '500ms', queueDrainedFor: QUEUE_DRAINED_FOR, pollInterval: '250ms', zoneTimeout: '2m' },
    }),
  ]);
  expect({ code: build.code, stderr: build.stderr }).toEqual({ code: 0, stderr: '' });
  kc = stack.kc;
  fs.mkdirSync(OUT_DIR, { recursive: true });
  // The worker encrypts every payload: the plugin reads the progress query with the same keys file.
  const keysFile = path.join(OUT_DIR, 'payload-keys');
  const keys = [...stack.payloadKeys.byId].map(([id, key]) => `${id}:${key.export().toString('base64')}`);
  fs.writeFileSync(keysFile, `${keys.join('\n')}\n`, { mode: 0o600 });
  env = {
    KUBECONFIG: stack.kube.kubeconfigPath,
    TEMPORAL_ADDRESS: stack.temporal.address,
    TEMPORAL_NAMESPACE: stack.temporal.namespace ?? 'default',
    TEMPORAL_PAYLOAD_KEYS_FILE: keysFile,
    TEMPORAL_UI_URL: 'http://127.0.0.1:8233',
  };
  watch = watchVmdc(kc, NS, VMDC);
}, 5 * 60_000);

afterAll(async () => {
  watch?.stop();
  await stack?.stop();
}, 120_000);

/** The built bundle, as `kubectl vmdc` runs it (kubectl execs `kubectl-vmdc` with the same arguments). */
const vmdc = (args: string[], timeoutMs = 60_000): Promise<CommandResult> => runCommand(process.execPath, [BUNDLE, ...args], { env, timeoutMs });

const status = async (): Promise<VMDistributedClusterStatus> =>
  ((await getObject(kc, 'VMDistributedCluster', NS, VMDC)).status ?? {}) as VMDistributedClusterStatus;
const generation = async (): Promise<number> => (await getObject(kc, 'VMDistributedCluster', NS, VMDC)).metadata.generation!;

function keep(name: string, text: string): void {
  fs.writeFileSync(path.join(OUT_DIR, name), text);
}

/** The statuses the poller saw while a command ran (and the one in force when it started), plus a margin after. */
async function statusesAround(from: number, to: number): Promise<VmdcSnapshot[]> {
  await new Promise((r) => setTimeout(r, 2000));
  const h = watch.history;
  const before = h.filter((x) => x.at < from).pop();
  return [...(before ? [before] : []), ...h.filter((x) => x.at >= from && x.at <= to + 2000)];
}

/** Each zone as the plugin showed it was, at some moment of the run, what the status said. */
function expectSeen(zones: Array<{ name: string; phase: string; outOfReads: boolean }>, seen: VmdcSnapshot[]): void {
  for (const z of zones) {
    const match = seen.some(
      (s) => s.status.zones?.find((x) => x.name === z.name)?.phase === z.phase && (s.status.zonesOutOfRotation ?? []).includes(z.name) === z.outOfReads,
    );
    expect({ zone: z, seenInStatus: match }).toEqual({ zone: z, seenInStatus: true });
  }
}

/** The text view with what differs between runs (times, ids, byte counts) replaced. */
function normalize(text: string): string {
  return text
    .replace(/g(\d+)-[0-9a-f]{8}/g, 'g$1-<uid>')
    .replace(/[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}/g, '<run>')
    .replace(/▕[█░]+▏/g, '▕<bar>▏')
    .replace(/\d+(\.\d)? (B|KiB|MiB)\b/g, '<bytes>')
    .replace(/≤?\b\d+(s|m\d\ds|h\d\dm)\b/g, '<t>');
}

const ZONE_LINE = /^(az-[abc]) +[✔◌○✖] (\w+) +(-|[1-6]\/6(?: \w+)?) +(-|<t>) +(in|OUT) +(vm-az-[abc]) +(\d+|-)$/;

describe('kubectl vmdc against a real rollout', () => {
  it('get, mid-rollout: -o json and the text view show the real phase, step and out-of-reads (bundle)', async () => {
    await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: V2 } });
    // In the queue wait of the first zone: out of reads, the backlog shown.
    await waitFor(async () => (await status()).zones?.some((z) => z.phase === 'WaitingForQueue'), {
      timeoutMs: 120_000,
      intervalMs: 100,
      description: 'a zone in its queue wait',
    });

    const t0 = Date.now();
    const json = await vmdc(['get', VMDC, '-o', 'json']);
    const text = await vmdc(['get', VMDC]);
    const t1 = Date.now();
    keep('get-mid-rollout.json', json.stdout);
    keep('get-mid-rollout.txt', text.stdout);
    expect({ code: json.code, stderr: json.stderr }).toEqual({ code: 0, stderr: '' });
    expect({ code: text.code, stderr: text.stderr }).toEqual({ code: 0, stderr: '' });
    const seen = await statusesAround(t0, t1);

    const doc = JSON.parse(json.stdout) as ReturnType<typeof viewDocument>;
    expect(doc).toMatchObject({
      schemaVersion: 1,
      namespace: NS,
      name: VMDC,
      phase: 'Progressing',
      source: 'workflow',
      sourceNote: null,
      ended: null,
      zoneCount: 3,
      clusterVersion: { from: V1, to: V2 },
      workflow: { id: expect.stringMatching(/^vmdc\/default\/cli\/g2-[0-9a-f]{8}$/) },
    });
    expect(doc.workflow!.webUI).toBe(`http://127.0.0.1:8233/namespaces/default/workflows/${encodeURIComponent(doc.workflow!.id)}/${doc.workflow!.runId}`);
    const out = doc.zones.filter((z) => z.outOfReads);
    expect(out).toHaveLength(1);
    expect(doc.zonesOutOfRotation).toEqual([out[0]!.name]);
    expect(doc.currentZone).toBe(out[0]!.name);
    expect(out[0]!.step).toBe(doc.currentStep);
    expectSeen(doc.zones, seen);
    if (out[0]!.step === 'WaitingForQueue') {
      expect(out[0]!.queue).toMatchObject({ source: 'heartbeat', drainedForSeconds: 8 });
      expect(out[0]!.queue!.pods.length).toBeGreaterThan(0);
    }

    const lines = normalize(text.stdout).trimEnd().split('\n');
    for (const l of text.stdout.split('\n')) expect([...l].length).toBeLessThanOrEqual(100);
    expect(text.stdout).not.toMatch(/\x1b\[/); // not a terminal: no colour
    const header = lines.slice(0, lines.indexOf(''));
    // The labels in their order (a long message or the Web UI URL takes more lines).
    expect(header.filter((l) => /^[A-Z][A-Za-z ]*:/.test(l)).map((l) => l.slice(0, l.indexOf(':')))).toEqual([
      'Name',
      'Namespace',
      'Phase',
      'Message',
      'Zone',
      'Version',
      'Generation',
      'Out of reads',
      'Workflow',
      'Web UI',
      'Source',
    ]);
    expect(header).toEqual(
      expect.arrayContaining([
        `Name:         ${VMDC}`,
        `Namespace:    ${NS}`,
        'Phase:        ◌ Progressing',
        `Version:      ${V1} → ${V2}`,
        'Generation:   2',
        'Workflow:     vmdc/default/cli/g2-<uid>',
        'Source:       the workflow (progress query)',
      ]),
    );
    const zoneLine = header.find((l) => l.startsWith('Zone:'))!;
    expect(zoneLine).toMatch(/^Zone: {9}[1-3]\/3 az-[abc] · \w+$/);
    const table = lines.slice(lines.indexOf('') + 1);
    expect(table[0]).toMatch(/^ZONE +PHASE +STEP +IN STEP +READS +VMCLUSTER +GEN$/);
    const rows = table.filter((l) => /^az-/.test(l)).map((l) => ZONE_LINE.exec(l));
    expect(rows.map((m) => m?.[1])).toEqual(['az-a', 'az-b', 'az-c']);
    const shown = rows.map((m) => ({ name: m![1]!, phase: m![2]!, outOfReads: m![5] === 'OUT' }));
    for (const z of shown) expect(ZONE_PHASES).toContain(z.phase);
    expect(shown.filter((z) => z.outOfReads)).toHaveLength(1);
    expectSeen(shown, seen);
    // The zone out of reads is the one the header names, and in its queue wait the backlog is shown.
    const outZone = shown.find((z) => z.outOfReads)!;
    expect(zoneLine).toContain(` ${outZone.name} · `);
    if (outZone.phase === 'WaitingForQueue') {
      const i = table.findIndex((l) => l.startsWith(outZone.name));
      expect(table[i + 1]).toMatch(/^ {4}backlog ▕<bar>▏ (empty <t> of <t>|not empty: <bytes> pending) · sample <t> ago$/);
      expect(table[i + 2]).toMatch(/^ {4}pending \S+ <bytes>/);
    } else {
      // Out of reads, so its queue headroom was read from the real vmagent before it left.
      const i = table.findIndex((l) => l.startsWith(outZone.name));
      expect(table[i + 1]).toMatch(/^ {4}headroom <bytes> of .+ over <t> \(vmagent-vm-global-0: <bytes>\/s\)$/);
    }
  });

  it('status --timeout: exit 2 when the rollout has not ended in time', async () => {
    const r = await vmdc(['status', VMDC, '--timeout', '1s']);
    keep('status-timeout.txt', `${r.stdout}${r.stderr}exit ${r.code}\n`);
    expect({ code: r.code, stderr: r.stderr }).toEqual({
      code: 2,
      stderr: expect.stringMatching(/^timed out after 1s: the rollout has not ended \(Progressing · zone/),
    });
    expect(r.stdout).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ Progressing · zone [1-3]\/3 az-[abc] \w+ · out of reads: /);
  });

  it('pause: spec.paused true and the status says Paused; resume: it goes on', async () => {
    const paused = await vmdc(['pause', VMDC]);
    keep('pause.txt', paused.stdout);
    expect(paused.code).toBe(0);
    expect(paused.stdout).toContain(`VMDistributedCluster ${NS}/${VMDC}: spec.paused set to true`);
    expect(paused.stdout).toMatch(/the trigger signals pause to vmdc\/default\/cli\/g2-/);
    expect((await getObject(kc, 'VMDistributedCluster', NS, VMDC)).spec?.paused).toBe(true);
    await waitFor(async () => (await status()).phase === 'Paused', { timeoutMs: 120_000, intervalMs: 100, description: 'phase Paused' });
    const view = await vmdc(['get', VMDC]);
    keep('get-paused.txt', view.stdout);
    expect(view.stdout).toContain('Phase:        ‖ Paused\n');
    expect(view.stdout).toMatch(/^Generation: {3}3$/m); // the pause is generation 3, adopted by g2's workflow
    expect((await vmdc(['pause', VMDC])).stdout).toContain('spec.paused is already true; nothing changed');

    const resumed = await vmdc(['resume', VMDC]);
    keep('resume.txt', resumed.stdout);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('spec.paused set to false');
    expect((await getObject(kc, 'VMDistributedCluster', NS, VMDC)).spec?.paused).toBe(false);
    await waitFor(async () => (await status()).phase !== 'Paused', { timeoutMs: 60_000, intervalMs: 100, description: 'the rollout to go on' });
    expect(['Progressing', 'Succeeded']).toContain((await status()).phase);
  });

  it('status: exit 0 once the rollout Succeeded; get then shows every zone Done from the final status', async () => {
    const r = await vmdc(['status', VMDC, '--timeout', '3m'], 200_000);
    keep('status-succeeded.txt', r.stdout);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.slice(-2)).toEqual([
      expect.stringMatching(/Z Succeeded · out of reads: none$/),
      `Succeeded: all zones at ${V2} (3 upgraded, 0 already up to date)`,
    ]);
    expect((await status()).phase).toBe('Succeeded');

    const view = await vmdc(['get', VMDC]);
    keep('get-succeeded.txt', view.stdout);
    const shown = normalize(view.stdout).split('\n');
    expect(shown).toEqual(
      expect.arrayContaining([
        'Phase:        ✔ Succeeded',
        'Zone:         3/3 done',
        `Version:      ${V1} → ${V2}`,
        'Out of reads: none',
        'Source:       the status only: the rollout has ended; its status is final',
      ]),
    );
    for (const z of ['a', 'b', 'c']) expect(shown).toContainEqual(expect.stringMatching(new RegExp(`^az-${z} +✔ Done +- +- +in +vm-az-${z} +\\d+$`)));
  });

  it('history lists the finished generation with its version and result', async () => {
    const r = await vmdc(['history', VMDC]);
    keep('history.txt', r.stdout);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const [header, ...rows] = r.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^GEN +VERSION +RESULT +STARTED +DURATION +UID$/);
    const uid = stack.vmdc.metadata.uid!.slice(0, 8);
    expect(rows).toEqual([
      expect.stringMatching(new RegExp(`^2 +${V2} +Succeeded +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\dZ +\\d+(s|m\\d\\ds) +${uid}$`)),
      expect.stringMatching(new RegExp(`^1 +${V1} +Succeeded +.* ${uid}$`)),
    ]);
    const json = JSON.parse((await vmdc(['history', VMDC, '-o', 'json'])).stdout) as Array<{
      generation: number;
      clusterVersion: string;
      result: string;
      executionStatus: string;
    }>;
    expect(json.map((h) => [h.generation, h.clusterVersion, h.result, h.executionStatus])).toEqual([
      [2, V2, 'Succeeded', 'COMPLETED'],
      [1, V1, 'Succeeded', 'COMPLETED'],
    ]);
  });

  it('cancel: refused without a terminal to confirm on; --yes cancels the running rollout (Cancelled, status exit 1)', async () => {
    await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: V3 } });
    const g = await generation();
    await waitFor(
      async () => (await status()).zones?.some((z) => z.phase !== 'Pending' && z.phase !== 'Done') && (await status()).workflow?.id.includes(`/g${g}-`),
      {
        timeoutMs: 120_000,
        intervalMs: 100,
        description: `generation ${g}'s rollout to work on a zone`,
      },
    );

    const asked = await vmdc(['cancel', VMDC]);
    expect(asked.code).toBe(1);
    expect(asked.stdout).toContain('The cleanup runs to its end whatever happens');
    expect(asked.stderr).toContain('stdin is not a terminal, so nobody can confirm: pass --yes');
    expect((await status()).phase).not.toBe('Cancelled');

    const r = await vmdc(['cancel', VMDC, '--yes']);
    keep('cancel.txt', r.stdout);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(new RegExp(`^Cancelling rollout vmdc/default/cli/g${g}-[0-9a-f]{8} of VMDistributedCluster default/cli`));
    expect(r.stdout).toContain('a patched zone rejoins only if its VMCluster is operational and its vmagent backlog drained');
    expect(r.stdout).toMatch(/cancel requested for vmdc\/default\/cli\/g\d+-/);
    await waitVmdcPhase(kc, NS, VMDC, g, ['Cancelled'], { timeoutMs: 120_000, fresh: true });

    const st = await vmdc(['status', VMDC, '--timeout', '30s']);
    expect(st.code).toBe(1);
    expect(st.stdout).toMatch(/ Cancelled · .*out of reads: /);
    const again = await vmdc(['cancel', VMDC, '--yes']);
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 1, stderr: 'error: the rollout has ended (Cancelled): nothing to cancel\n' });
  });

  it('release-zone --list, from the bundle and from the checkout (npx tsx cli/main.ts)', async () => {
    const fromBundle = await vmdc(['release-zone', '-n', NS, '--vmdc', VMDC, '--list']);
    const tsx = await runCommand(
      path.join(REPO_ROOT, 'node_modules', '.bin', 'tsx'),
      [path.join(REPO_ROOT, 'cli', 'main.ts'), 'release-zone', '--namespace', NS, '--list'],
      { env, timeoutMs: 120_000 },
    );
    for (const r of [fromBundle, tsx]) expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const out = (await status()).zonesOutOfRotation ?? [];
    if (out.length === 0) {
      expect(fromBundle.stdout).toMatch(
        new RegExp(`^no route in namespace ${NS} records a zone of VMDistributedCluster ${NS}/${VMDC} \\(uid ${stack.vmdc.metadata.uid}\\) out of reads\\n$`),
      );
      expect(tsx.stdout).toBe(`no route in namespace ${NS} carries an out-of-rotation record\n`);
    } else {
      expect(fromBundle.stdout).toMatch(/^ZONE +ROUTE +VMCLUSTER +SINCE +GENERATION +WORKFLOW\n/);
      for (const z of out) expect(fromBundle.stdout).toContain(`\n${z} `);
    }
    const bad = await vmdc(['release-zone', '--vmdc', VMDC, '--zone', 'az-a']);
    expect({ code: bad.code, usage: bad.stderr.includes('usage: kubectl vmdc release-zone') }).toEqual({ code: 2, usage: true });
  });

  it('retry: a Failed zone whose cause is fixed goes on at the resume signal (refused before it failed and after it succeeded)', async () => {
    await mergePatch(kc, 'VMCluster', NS, 'vm-az-b', { metadata: { annotations: { [ANNOTATION_FAIL]: 'true' } } });
    await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: V4 } });
    const g = await generation();
    const early = await vmdc(['retry', VMDC]);
    expect({ code: early.code, stderr: early.stderr }).toEqual({
      code: 1,
      stderr: expect.stringMatching(/^error: nothing to retry: the rollout is \w+, not Failed\n$/),
    });
    const failed = await waitVmdcPhase(kc, NS, VMDC, g, ['Failed'], { timeoutMs: 180_000, fresh: true });
    expect({ out: failed.zonesOutOfRotation, b: failed.zones?.find((z) => z.name === 'az-b')?.phase }).toEqual({ out: ['az-b'], b: 'Failed' });
    const view = await vmdc(['get', VMDC]);
    keep('get-failed.txt', view.stdout);
    expect(normalize(view.stdout)).toMatch(/^az-b +✖ Failed +4\/6 WaitingOperational +<t> +OUT +vm-az-b +\d+$/m);
    // Not ended: the workflow holds the zone, so the view asks it.
    expect(view.stdout).toContain('Source:       the workflow (progress query)');

    // The cause fixed: the operator brings vm-az-b up at its generation; the rollout waits for a person.
    await mergePatch(kc, 'VMCluster', NS, 'vm-az-b', { metadata: { annotations: { [ANNOTATION_FAIL]: null } } });
    await waitVmclusterOperational(kc, NS, 'vm-az-b');
    expect((await status()).phase).toBe('Failed');

    const r = await vmdc(['retry', VMDC]);
    keep('retry.txt', r.stdout);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(new RegExp(`^resume signal sent to vmdc/default/cli/g${g}-[0-9a-f]{8}: zone az-b retries its failed step`));
    const done = await vmdc(['status', VMDC, '--timeout', '3m'], 200_000);
    expect({ code: done.code, stderr: done.stderr }).toEqual({ code: 0, stderr: '' });
    const final = await status();
    expect({ out: final.zonesOutOfRotation ?? [], zones: final.zones?.map((z) => [z.name, z.phase]) }).toEqual({
      out: [],
      zones: [
        ['az-a', 'Done'],
        ['az-b', 'Done'],
        ['az-c', 'Done'],
      ],
    });
    for (const c of DEMO_CLUSTERS) expect((await getObject(kc, 'VMCluster', NS, c)).spec?.clusterVersion).toBe(V4);
    const again = await vmdc(['retry', VMDC]);
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 1, stderr: 'error: nothing to retry: the rollout is Succeeded, not Failed\n' });
  });

  /** The gate the rollout of `g` waits at, once it does. */
  const awaitingAt = (g: number, zone: string) =>
    waitFor(
      async () => {
        const st = await status();
        return st.observedGeneration === g && st.awaiting?.nextZone === zone ? st : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 100, description: `generation ${g} waiting at a gate before ${zone}` },
    );
  const versions = async () => Promise.all(DEMO_CLUSTERS.map(async (c) => (await getObject(kc, 'VMCluster', NS, c)).spec?.clusterVersion));

  it('gates: the rollout waits before the first zone and after it, every zone in reads, until promote; a promote mid-zone is refused', async () => {
    const eventsBefore = await eventNames(kc, NS, VMDC);
    await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: V1, strategy: { gates: ['BeforeFirstZone', 'AfterFirstZone'] } } });
    const g = await generation();
    const first = await awaitingAt(g, 'az-a');
    expect(first).toMatchObject({ phase: 'Progressing', awaiting: { gates: ['BeforeFirstZone'], nextZone: 'az-a' } });
    expect(first.zonesOutOfRotation ?? []).toEqual([]);
    expect(await versions()).toEqual([V4, V4, V4]);

    const view = await vmdc(['get', VMDC]);
    keep('get-awaiting.txt', view.stdout);
    expect({ code: view.code, stderr: view.stderr }).toEqual({ code: 0, stderr: '' });
    expect(view.stdout).toMatch(/^Awaiting: +approval at gate BeforeFirstZone before zone az-a, for /m);
    expect(view.stdout).toContain(`kubectl vmdc promote ${VMDC} -n ${NS}`);
    const doc = JSON.parse((await vmdc(['get', VMDC, '-o', 'json'])).stdout) as { awaiting: unknown };
    expect(doc.awaiting).toMatchObject({ gates: ['BeforeFirstZone'], nextZone: 'az-a' });

    // What the plan says at the gate, read from the real objects: the order, each zone upgraded, where
    // the gates hold, what each zone's leaving reads removes from the real VMAuth.
    const plan = await vmdc(['plan', VMDC, '-o', 'json']);
    keep('plan.json', plan.stdout);
    expect({ code: plan.code, stderr: plan.stderr }).toEqual({ code: 0, stderr: '' });
    const planned = JSON.parse(plan.stdout) as {
      order: { zones: string[] };
      zones: Array<{ zone: string; would: string; gates: string[]; removals: Array<{ route: { kind: string }; removed: unknown[] }> }>;
    };
    expect(planned.order.zones).toEqual(['az-a', 'az-b', 'az-c']);
    expect(planned.zones.map((z) => [z.zone, z.would, z.gates])).toEqual([
      ['az-a', 'upgrade', ['BeforeFirstZone']],
      ['az-b', 'upgrade', ['AfterFirstZone']],
      ['az-c', 'upgrade', []],
    ]);
    for (const z of planned.zones) expect(z.removals.filter((r) => r.route.kind === 'VMAuth' && r.removed.length > 0)).toHaveLength(1);

    const p1 = await vmdc(['promote', VMDC, '-o', 'json']);
    expect({ code: p1.code, stderr: p1.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(p1.stdout)).toMatchObject({ verb: 'promote', result: 'accepted', gates: ['BeforeFirstZone'], nextZone: 'az-a' });

    // A zone in flight: promote and abort are refused by the workflow's validators, nothing changes.
    await waitFor(async () => ((await status()).zonesOutOfRotation ?? []).includes('az-a'), {
      timeoutMs: 60_000,
      intervalMs: 50,
      description: 'az-a out of reads',
    });
    for (const verb of ['promote', 'abort']) {
      const r = await vmdc([verb, VMDC, '-o', 'json']);
      expect({ verb, code: r.code }).toEqual({ verb, code: 1 });
      expect(JSON.parse(r.stdout)).toMatchObject({
        result: 'refused',
        reason: expect.stringMatching(/^no gate, pauseBetweenZones or canary wait in progress: the rollout is \w+ at zone az-a/),
      });
    }

    const second = await awaitingAt(g, 'az-b');
    expect(second.awaiting!.gates).toEqual(['AfterFirstZone']);
    expect(second.zonesOutOfRotation ?? []).toEqual([]);
    expect(await versions()).toEqual([V1, V4, V4]);
    expect((await vmdc(['promote', VMDC])).code).toBe(0);
    const done = await vmdc(['status', VMDC, '--timeout', '3m'], 200_000);
    expect({ code: done.code, stderr: done.stderr }).toEqual({ code: 0, stderr: '' });
    expect(await versions()).toEqual([V1, V1, V1]);
    expect((await status()).awaiting).toBeUndefined();
    const zoneEvents = (z: string) => ['ZoneLeftReads', 'ZoneUpgraded', 'ZoneOperational', 'ZoneDrained', 'ZoneRejoined'].map((r) => `${r} ${z}`);
    expect(await workerEvents(kc, NS, VMDC, eventsBefore)).toEqual([
      'RolloutAwaitingApproval',
      'RolloutPromoted',
      ...zoneEvents('az-a'),
      'RolloutAwaitingApproval',
      'RolloutPromoted',
      ...zoneEvents('az-b'),
      ...zoneEvents('az-c'),
      'RolloutSucceeded',
    ]);
  });

  it('abort (and cancel) at a gate: Aborted (Cancelled), every zone in reads, none upgraded; negative control: without gates the same change rolls through unasked', async () => {
    await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: V2 } });
    const g = await generation();
    await awaitingAt(g, 'az-a');
    const r = await vmdc(['abort', VMDC, '--reason', 'e2e: stop here', '-o', 'json']);
    keep('abort.json', r.stdout);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(r.stdout)).toMatchObject({ verb: 'abort', result: 'accepted', gates: ['BeforeFirstZone'], nextZone: 'az-a', upgraded: 0 });
    const aborted = await waitVmdcPhase(kc, NS, VMDC, g, ['Aborted'], { timeoutMs: 60_000, fresh: true });
    expect(aborted.message).toBe('aborted at gate BeforeFirstZone before zone az-a (e2e: stop here): every zone in reads, 0 upgraded');
    expect(aborted.zonesOutOfRotation ?? []).toEqual([]);
    expect(aborted.awaiting).toBeUndefined();
    expect(await versions()).toEqual([V1, V1, V1]);
    expect((await workerEvents(kc, NS, VMDC)).at(-1)).toBe('RolloutAborted');
    const late = await vmdc(['promote', VMDC]);
    expect(late.code).toBe(1);

    // A cancel at a gate, on the real Temporal server: Cancelled, nothing out of reads, the gate cleared.
    await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { clusterVersion: V3 } });
    const gc = await generation();
    await awaitingAt(gc, 'az-a');
    expect((await vmdc(['cancel', VMDC, '--yes'])).code).toBe(0);
    const cancelled = await waitVmdcPhase(kc, NS, VMDC, gc, ['Cancelled'], { timeoutMs: 60_000, fresh: true });
    expect({ out: cancelled.zonesOutOfRotation ?? [], awaiting: cancelled.awaiting }).toEqual({ out: [], awaiting: undefined });
    expect(await versions()).toEqual([V1, V1, V1]);

    await mergePatch(kc, 'VMDistributedCluster', NS, VMDC, { spec: { strategy: { gates: [] } } });
    const g2 = await generation();
    await waitVmdcPhase(kc, NS, VMDC, g2, ['Succeeded'], { timeoutMs: 180_000, fresh: true });
    expect(await versions()).toEqual([V3, V3, V3]);
    expect(watch.history.some((s) => s.generation === g2 && s.status.awaiting)).toBe(false);
  });
});
