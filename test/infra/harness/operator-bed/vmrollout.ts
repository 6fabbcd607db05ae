/**
 * vmrollout itself beside the real-operator bed, as test/e2e/support.ts's startControlPlane runs
 * it beside the simulator: a Temporal dev server, the real worker and trigger in this process
 * (../in-process-control.ts), each as the chart's ServiceAccount with the rights the chart gives
 * it. The worker reads pods the way it does in a cluster: EndpointSlices, then plain HTTP to the
 * pod IPs (reachable in this namespace).
 */
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { inspect } from 'node:util';
import type * as k8s from '@kubernetes/client-node';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { DEFAULT_TASK_QUEUE } from '../../../../api/rollout-contract';
import { STRICT_TRUST_POLICY, type TrustPolicy } from '../../../../api/trust-policy';
import { parsePayloadKeys, payloadDataConverter } from '../../../../process/payload-codec';
import { startWorkerProcess, writePayloadKeysFile, type ControlProcess } from '../../chaos/control-processes';
import type { TriggerHandle } from '../../../../trigger/main';
import { installCrdFiles } from '../../../e2e/support';
import { installChartIdentities } from '../chart-identities';
import { startInProcessTrigger, startInProcessWorker, type InProcessWorker, type WorkerKnobs } from '../in-process-control';
import { onRuntimeLog, startTemporalDevEnv } from '../temporal';
import { REPO_ROOT } from '../tools';

export interface Vmrollout {
  temporal: TestWorkflowEnvironment;
  /** The client of the worker and the trigger (it encrypts payloads). */
  client: Client;
  trigger: TriggerHandle;
  /** Every log line of the worker (SDK Runtime, INFO and up) and the trigger. */
  logs: string[];
  /** Test-only knobs of the in-process worker's activities, read at each call (see E2EStack.knobs). */
  knobs: WorkerKnobs;
  /**
   * The worker as the chart's pod runs it instead of in this process: `worker/main.ts` as a process
   * of its own, configured by environment, `WORKER_INSTANCE` set as the chart sets it (the pod's
   * name), so it can be SIGKILLed and started again. The in-process worker is back after `done()`.
   */
  workerAsProcess(instance: string): Promise<{ process: ControlProcess; done(): Promise<void> }>;
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
  const payloadKeys = writePayloadKeysFile(undefined, `e2e:${randomBytes(32).toString('base64')}\n`);
  const dataConverter = payloadDataConverter(parsePayloadKeys(payloadKeys.text));
  const client = new Client({ connection: temporal.connection, namespace: temporal.namespace ?? 'default', dataConverter });
  const knobs: WorkerKnobs = { confirmSwitchInPods: true };
  const taskQueue = opts.taskQueue ?? `${DEFAULT_TASK_QUEUE}-real-operator`;
  const policy: TrustPolicy = { ...STRICT_TRUST_POLICY, createNamespaces: [namespace] };
  const control = { temporal, client, dataConverter, taskQueue, policy, identities };
  let worker: InProcessWorker | undefined = await startInProcessWorker({ ...control, knobs });
  const trigger = await startInProcessTrigger({ ...control, namespace, onLog: (line) => void logs.push(line) });
  return {
    temporal,
    client,
    trigger,
    logs,
    knobs,
    async workerAsProcess(instance) {
      await worker?.stop();
      worker = undefined;
      const proc = await startWorkerProcess({
        kubeConfig: identities.worker,
        temporalAddress: temporal.address,
        temporalNamespace: temporal.namespace ?? 'default',
        taskQueue,
        payloadKeysFile: payloadKeys.path,
        createNamespaces: [...policy.createNamespaces],
        crossNamespaceTargetRefs: policy.crossNamespaceTargetRefs,
        extraEnv: { WORKER_INSTANCE: instance },
      });
      return {
        process: proc,
        async done() {
          await proc.stop();
          worker = await startInProcessWorker({ ...control, knobs });
        },
      };
    },
    async stop() {
      await trigger.stop().catch(() => {});
      await worker?.stop();
      stopRuntimeLog();
      await temporal.teardown();
    },
  };
}
