/**
 * The worker process in-process against a real Temporal dev server: it polls with the prebuilt
 * workflow bundle, serves /metrics (its own families + the Temporal SDK's Prometheus exporter),
 * /healthz and /readyz, and shuts down gracefully.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bundleWorkflowCode, DefaultLogger, Runtime } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { loadConfig } from '../../worker/config';
import { startWorker, type RunningWorker } from '../../worker/main';
import { freePort } from '../infra/harness/ports';
import { harnessTempDir, waitFor } from '../infra/harness/processes';
import { startTemporalDevEnv } from '../infra/harness/temporal';
import { workflowBundleOptions } from '../../process/workflow-bundle';
import { unreachableKubeConfig } from '../infra/harness/kube';

jest.setTimeout(180_000);

const REPO = path.resolve(__dirname, '..', '..');
const packageJsonVersion = (JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version;

let env: TestWorkflowEnvironment;
let running: RunningWorker | undefined;
let sdkBind: string;
let bundlePath: string;

const get = async (url: string) => {
  const r = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  return { status: r.status, body: await r.text() };
};

beforeAll(async () => {
  // The SDK Runtime is process-wide: install it with the Prometheus exporter before the harness
  // (whose quiet Runtime then stays out of the way).
  sdkBind = `127.0.0.1:${await freePort()}`;
  Runtime.install({ logger: new DefaultLogger('WARN'), telemetryOptions: { metrics: { prometheus: { bindAddress: sdkBind } } } });
  env = await startTemporalDevEnv();
});

afterAll(async () => {
  await running?.shutdown().catch(() => {});
  await env?.teardown();
});

it('runs with a prebuilt bundle and serves /metrics, /healthz, /readyz; shuts down gracefully', async () => {
  const dir = harnessTempDir('worker');
  const bundle = (bundlePath = path.join(dir, 'workflow-bundle.js'));
  fs.writeFileSync(bundle, (await bundleWorkflowCode({ ...workflowBundleOptions(), logger: new DefaultLogger('WARN') })).code);
  const config = loadConfig({
    TEMPORAL_ADDRESS: env.address,
    TEMPORAL_NAMESPACE: env.namespace ?? 'default',
    TASK_QUEUE: 'worker-main-test',
    METRICS_HOST: '127.0.0.1',
    METRICS_PORT: '0',
    TEMPORAL_METRICS_BIND: sdkBind,
    WORKFLOW_BUNDLE: bundle,
    SHUTDOWN_GRACE_TIME: '2s',
  });
  // No activity runs here: a kubeconfig pointing nowhere is enough.
  const kubeConfig = unreachableKubeConfig();
  running = await startWorker(config, { installRuntime: false, kubeConfig });
  const base = running.server.url;

  expect(await get(`${base}/healthz`)).toEqual({ status: 200, body: 'ok\n' });
  await waitFor(async () => (await get(`${base}/readyz`)).status === 200, { timeoutMs: 30_000, description: '/readyz 200' });
  expect(running.worker.getState()).toBe('RUNNING');

  // activities report through deps.metrics; record a little so every family has a sample
  running.metrics.zoneStepDuration({ namespace: 'ns', name: 'a' }, 'WaitingForQueue', 42);
  running.metrics.queuePendingBytes({ namespace: 'ns', name: 'a', zone: 'az-b' }, 4096);
  running.metrics.activityError('waitOperational', 'ObjectFailed');

  const metrics = await waitFor(
    async () => {
      const m = await get(`${base}/metrics`);
      // the SDK exporter's series show up once the worker has polled
      return m.status === 200 && /^temporal_\w+/m.test(m.body) ? m.body : undefined;
    },
    { timeoutMs: 30_000, description: 'Temporal SDK metrics in /metrics' },
  );
  // Rollout phases are the trigger's (vmrollout_rollout_phase, from the objects' status), not a worker's.
  expect(metrics).not.toContain('vmrollout_rollouts');
  expect(metrics).toContain('vmrollout_zone_step_duration_seconds_count{namespace="ns",name="a",step="WaitingForQueue"} 1');
  // Unversioned here (no TEMPORAL_WORKER_BUILD_ID): the version only.
  expect(metrics).toContain(`vmrollout_build_info{version="${packageJsonVersion}",build_id=""} 1`);
  expect(metrics).toContain('vmrollout_queue_pending_bytes{namespace="ns",name="a",zone="az-b"} 4096');
  expect(metrics).toContain('vmrollout_activity_errors_total{activity="waitOperational",type="ObjectFailed"} 1');
  expect(metrics).toContain('vmrollout_worker_process_cpu_seconds_total');
  expect(metrics).toMatch(/temporal_\w+\{[^}]*task_queue="worker-main-test"/);
  expect((await get(`${base}/nope`)).status).toBe(404);

  await running.shutdown();
  expect(running.worker.getState()).toBe('STOPPED');
  await expect(get(`${base}/healthz`)).rejects.toThrow();
  running = undefined;
});

const TSX = path.join(REPO, 'node_modules', '.bin', 'tsx');

function runMain(extraEnv: Record<string, string>) {
  const child = spawn(TSX, ['worker/main.ts'], { cwd: REPO, env: { ...process.env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, stderr: () => stderr };
}

it('worker/main.ts as a process: exits 2 with a clear message on bad config', async () => {
  const p = runMain({ METRICS_PORT: 'abc', LOG_LEVEL: 'loud' });
  expect(await p.exited).toBe(2);
  expect(p.stderr()).toContain('invalid worker configuration:');
  expect(p.stderr()).toContain('METRICS_PORT: must be a port number (got "abc")');
  expect(p.stderr()).toContain('LOG_LEVEL: must be one of');
});

it('worker/main.ts as a process: becomes ready, then exits 0 on SIGTERM', async () => {
  const dir = harnessTempDir('worker-proc');
  const kubeconfig = path.join(dir, 'kubeconfig');
  fs.writeFileSync(
    kubeconfig,
    'apiVersion: v1\nkind: Config\nclusters:\n- name: none\n  cluster: { server: "https://127.0.0.1:1" }\nusers:\n- name: none\n  user: {}\ncontexts:\n- name: none\n  context: { cluster: none, user: none }\ncurrent-context: none\n',
  );
  const port = await freePort();
  const p = runMain({
    TEMPORAL_ADDRESS: env.address,
    TASK_QUEUE: 'worker-proc-test',
    METRICS_HOST: '127.0.0.1',
    METRICS_PORT: String(port),
    TEMPORAL_METRICS_BIND: `127.0.0.1:${await freePort()}`,
    WORKFLOW_BUNDLE: bundlePath,
    KUBECONFIG: kubeconfig,
    LOG_LEVEL: 'WARN',
  });
  try {
    await waitFor(async () => (await get(`http://127.0.0.1:${port}/readyz`)).status === 200, {
      timeoutMs: 60_000,
      description: 'worker process /readyz',
      diagnostics: p.stderr,
    });
    const m = await waitFor(
      async () => {
        const r = await get(`http://127.0.0.1:${port}/metrics`);
        return /^temporal_\w+/m.test(r.body) ? r.body : undefined;
      },
      { timeoutMs: 30_000, description: 'SDK metrics from the process' },
    );
    expect(m).toContain('# TYPE vmrollout_zone_step_duration_seconds histogram');
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    expect(p.stderr()).toContain('SIGTERM: shutting down');
  } finally {
    if (p.child.exitCode === null) p.child.kill('SIGKILL');
  }
});
