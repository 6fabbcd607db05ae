/**
 * vmrollout's control plane in the test process, as the chart runs it: the real worker (workflow
 * bundle + activities) and the real trigger, each as the chart's ServiceAccount (its KubeConfig from
 * ./chart-identities.ts), on one task queue, payloads through the test's data converter. Used beside
 * the zone simulator (test/e2e/support.ts) and beside the real operator (./operator-bed/vmrollout.ts).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities, type ActivityDeps, type ActivityMetrics } from '../../../activities';
import { noopMetrics } from '../../../activities/metrics';
import type { TrustPolicy } from '../../../api/trust-policy';
import { withKeepAliveAgent } from '../../../kube/keep-alive';
import { bundleAtStart } from '../../../process/workflow-bundle';
import { createLogger } from '../../../trigger/log';
import { startTrigger, type TriggerHandle } from '../../../trigger/main';

export interface InProcessControlOptions {
  temporal: TestWorkflowEnvironment;
  client: Client;
  dataConverter?: DataConverter;
  taskQueue: string;
  policy: TrustPolicy;
  /** The chart's identities (installChartIdentities). */
  identities: { worker: KubeConfig; trigger: KubeConfig };
}

/** Test-only knobs of the worker's activities, read at each call. */
export interface WorkerKnobs {
  confirmSwitchInPods: boolean;
}

export interface InProcessWorker {
  worker: Worker;
  /** Shuts it down and waits until it stopped. */
  stop(): Promise<void>;
}

/** The real worker, running. */
export async function startInProcessWorker(
  o: InProcessControlOptions & { knobs: WorkerKnobs; metrics?: ActivityMetrics; fetch?: ActivityDeps['fetch'] },
): Promise<InProcessWorker> {
  const { knobs } = o;
  const worker = await Worker.create({
    connection: o.temporal.nativeConnection,
    namespace: o.temporal.namespace ?? 'default',
    taskQueue: o.taskQueue,
    ...bundleAtStart(),
    dataConverter: o.dataConverter,
    activities: createActivities({
      kubeConfig: withKeepAliveAgent(o.identities.worker), // as worker/main.ts and the trigger's default do
      temporalClient: o.client,
      policy: o.policy,
      ...(o.fetch ? { fetch: o.fetch } : {}),
      get confirmSwitchInPods() {
        return knobs.confirmSwitchInPods;
      },
      metrics: o.metrics ?? noopMetrics,
    }),
  });
  const run = worker.run();
  return {
    worker,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await run.catch(() => {});
    },
  };
}

/** The real trigger watching `namespace`, synced; every log line goes to `onLog`. */
export async function startInProcessTrigger(
  o: InProcessControlOptions & { namespace: string; onLog: (line: string) => void; finalizerRecheckIntervalMs?: number },
): Promise<TriggerHandle> {
  const trigger = await startTrigger(
    {
      temporal: { address: o.temporal.address, namespace: o.temporal.namespace ?? 'default' },
      taskQueue: o.taskQueue,
      watchNamespaces: [o.namespace],
      policy: o.policy,
      metricsPort: 0,
      logLevel: 'debug',
      relistIntervalMs: 60_000,
      watchIdleTimeoutMs: 60_000,
      ...(o.finalizerRecheckIntervalMs !== undefined ? { finalizerRecheckIntervalMs: o.finalizerRecheckIntervalMs } : {}),
    },
    {
      kubeConfig: withKeepAliveAgent(o.identities.trigger),
      temporalClient: o.client,
      serveMetrics: false,
      log: createLogger('debug', o.onLog),
    },
  );
  await trigger.synced;
  return trigger;
}
