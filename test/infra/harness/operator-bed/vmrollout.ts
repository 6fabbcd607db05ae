/**
 * vmrollout itself beside the real-operator bed, as test/e2e/support.ts's startControlPlane runs
 * it beside the simulator: a Temporal dev server, the real worker and trigger in this process, each
 * as the chart's ServiceAccount with the rights the chart gives it. The worker reads pods the way it
 * does in a cluster: EndpointSlices, then plain HTTP to the pod IPs (reachable in this namespace).
 */
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { inspect } from 'node:util';
import type * as k8s from '@kubernetes/client-node';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../../../activities';
import { DEFAULT_TASK_QUEUE } from '../../../../api/rollout-contract';
import type { TrustPolicy } from '../../../../api/trust-policy';
import { withKeepAliveAgent } from '../../../../kube/keep-alive';
import { parsePayloadKeys, payloadDataConverter } from '../../../../process/payload-codec';
import { bundleAtStart } from '../../../../process/workflow-bundle';
import { createLogger } from '../../../../trigger/log';
import { startTrigger, type TriggerHandle } from '../../../../trigger/main';
import { installCrdFiles } from '../../../e2e/support';
import { installChartIdentities } from '../chart-identities';
import { onRuntimeLog, startTemporalDevEnv } from '../temporal';
import { REPO_ROOT } from '../tools';

export interface Vmrollout {
  temporal: TestWorkflowEnvironment;
  /** The client of the worker and the trigger (it encrypts payloads). */
  client: Client;
  worker: Worker;
  trigger: TriggerHandle;
  /** Every log line of the worker (SDK Runtime, INFO and up) and the trigger. */
  logs: string[];
  /** Test-only knobs of the worker's activities, read at each call (see E2EStack.knobs). */
  knobs: { confirmSwitchInPods: boolean };
  stop(): Promise<void>;
}

const RELEASE_NAMESPACE = 'vmrollout-system';

export async function startVmrollout(opts: { kc: k8s.KubeConfig; namespace: string; vmauth: string; taskQueue?: string }): Promise<Vmrollout> {
  const { kc, namespace } = opts;
  await installCrdFiles(kc, path.join(REPO_ROOT, 'charts', 'vmrollout', 'crds'));
  const identities = await installChartIdentities(kc, {
    releaseNamespace: RELEASE_NAMESPACE,
    values: [`watchNamespaces={${namespace}}`, `createNamespaces={${namespace}}`, `vmauths={${namespace}/${opts.vmauth}}`],
  });
  const temporal = await startTemporalDevEnv();
  const logs: string[] = [];
  const stopRuntimeLog = onRuntimeLog((e) => logs.push(`${e.level} ${e.message} ${inspect(e.meta, { depth: 8, breakLength: Infinity })}`));
  const dataConverter = payloadDataConverter(parsePayloadKeys(`e2e:${randomBytes(32).toString('base64')}\n`));
  const client = new Client({ connection: temporal.connection, namespace: temporal.namespace ?? 'default', dataConverter });
  const knobs = { confirmSwitchInPods: true };
  const taskQueue = opts.taskQueue ?? `${DEFAULT_TASK_QUEUE}-real-operator`;
  const policy: TrustPolicy = { createNamespaces: [namespace], crossNamespaceTargetRefs: false };
  const noMetrics = { queuePendingBytes() {}, activityError() {}, queueWatchEnded() {}, zoneStepDuration() {} };
  const worker = await Worker.create({
    connection: temporal.nativeConnection,
    namespace: temporal.namespace ?? 'default',
    taskQueue,
    ...bundleAtStart(),
    dataConverter,
    activities: createActivities({
      kubeConfig: withKeepAliveAgent(identities.worker),
      temporalClient: client,
      policy,
      get confirmSwitchInPods() {
        return knobs.confirmSwitchInPods;
      },
      metrics: noMetrics,
    }),
  });
  const workerRun = worker.run();
  const trigger = await startTrigger(
    {
      temporal: { address: temporal.address, namespace: temporal.namespace ?? 'default' },
      taskQueue,
      watchNamespaces: [namespace],
      policy,
      metricsPort: 0,
      logLevel: 'debug',
      relistIntervalMs: 60_000,
      watchIdleTimeoutMs: 60_000,
    },
    {
      kubeConfig: withKeepAliveAgent(identities.trigger),
      temporalClient: client,
      serveMetrics: false,
      log: createLogger('debug', (line) => void logs.push(line)),
    },
  );
  await trigger.synced;
  return {
    temporal,
    client,
    worker,
    trigger,
    logs,
    knobs,
    async stop() {
      await trigger.stop().catch(() => {});
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await workerRun.catch(() => {});
      stopRuntimeLog();
      await temporal.teardown();
    },
  };
}
