// The rollout activities: every side effect of a rollout (Kubernetes reads and patches, vmagent
// /metrics, the CR status). createActivities(deps) returns the object the worker registers.
import * as os from 'node:os';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import type { KubeConfig } from '@kubernetes/client-node';
import { describeUnverified, recordExpectation } from '../api/record-verification';
import { parseWorkflowId } from '../api/rollout-contract';
import { recordedZones } from '../kube/route-records';
import type { ObjectGeneration, VMDistributedClusterStatus } from '../api/types';
import { describeError, refusedForGood } from '../kube/errors';
import { eventCreator } from '../kube/events';
import { REQUEST_TIMEOUT_MS } from '../kube/request-timeout';
import type { QueueSample } from '../api/rollout-contract';
import type { InputVerdict, QueueTarget, RolloutActivities } from '../workflows/activity-types';
import { FailureType } from '../workflows/failures';
import { STRICT_TRUST_POLICY, type TrustPolicy } from '../api/trust-policy';
import { activityAttempt, activityLog, activityPollContext, callingWorkflowId } from './activity-context';
import { applyObject } from './objects/apply-object';
import { nonRetryable } from './errors';
import { KubeObjects, vmKind } from '../kube/custom-objects';
import { objectState } from './objects/object-state';
import { noopMetrics, reportingQueues, type ActivityMetrics, type QueueSampler } from './metrics';
import { editRoutes, readRecords, readRoutes, withReadableRecords } from './routes/edit-routes';
import { StepTimer, mayReportQueued, statusClient, writeStatus, type CurrentObject } from './status/write-status';
import { withRecordedZones } from '../api/recorded-status';
import { takeOverObject } from './start/take-over';
import { decideInput } from './start/verify-input';
import { writeGuard } from './guard/write-guard';
import type { Write } from './guard/write-binding';
import { VmagentAuth, type VmagentAuthConfig } from './vmagent/auth';
import { waitQueueDrained, watchQueue } from './vmagent/drain';
import { queueReporter } from './vmagent/queue-report';
import { waitCarriersReady } from './reads/carriers';
import { waitReadsDrained } from './reads/drain';
import { measureCanary } from './analysis/measure';
import { readReadHealth } from './reads/read-health';
import { Notifier } from './notify/send';
import { SwitchChecker, confirmSwitch } from './vmauth/switch';
import { readVmagent } from './vmagent/reading';
import { countSamples } from './analysis/count-samples';
import { QueueReader } from './vmagent/queue';
import { waitOperational } from './objects/wait-operational';
import { awaitSwitch } from './reads/await-switch';

export interface ActivityDeps {
  kubeConfig: KubeConfig;
  temporalClient: Client;
  /** What a workflow's input may ask for (default: STRICT_TRUST_POLICY, nothing enabled). */
  policy?: TrustPolicy;
  /** Used to scrape vmagent /metrics (default: global fetch). */
  fetch?: typeof fetch;
  metrics?: ActivityMetrics;
  /** The replica (pod) named in the Events the status writes raise (default: the host name). */
  instance?: string;
  /** Credentials for vmagent /metrics from a Secret. */
  vmagentAuth?: VmagentAuthConfig;
  /** Timeout of one scrape of a pod's /metrics (default 5 s). */
  scrapeTimeoutMs?: number;
  /**
   * TEST-ONLY knob, default true. false: confirmSwitch believes the VMAuth/VMUser statuses alone and
   * confirms nothing in the vmauth pods: the negative control of the e2e that proves the pod
   * confirmation is what keeps reads correct. Never set in the worker's configuration.
   */
  confirmSwitchInPods?: boolean;
  /**
   * TEST-ONLY knob, default true. false: applyObject, editRoutes and writeStatus write for whichever
   * object they are given, not only the calling workflow's (activities/guard/): for tests of the
   * activities' own mechanics outside a rollout workflow, and the negative control of
   * test/integration/write-guard.test.ts. Never set in the worker's configuration.
   */
  bindWrites?: boolean;
  /**
   * TEST-ONLY knob, default true. false: the pods of vmagent, vmauth and vmselect Services are
   * whatever their EndpointSlices list, unverified (activities/pods/service-pods.ts): the negative
   * control of test/integration/pod-identity.test.ts. Never set in the worker's configuration.
   */
  verifyPods?: boolean;
}

export type { ActivityMetrics } from './metrics';
export type { VmagentAuthConfig } from './vmagent/auth';

function errorType(err: unknown): string {
  if (err instanceof ApplicationFailure) return err.type ?? 'ApplicationFailure';
  if (err instanceof Error) return err.name || 'Error';
  return 'Unknown';
}

function inActivity(): boolean {
  try {
    Context.current();
    return true;
  } catch {
    return false;
  }
}

export function createActivities(deps: ActivityDeps): RolloutActivities {
  const kube = new KubeObjects(deps.kubeConfig);
  const metrics = deps.metrics ?? noopMetrics;
  const auth = deps.vmagentAuth ? new VmagentAuth(deps.kubeConfig, deps.vmagentAuth) : undefined;
  const queues = new QueueReader({
    kube,
    kubeConfig: deps.kubeConfig,
    fetch: deps.fetch,
    auth,
    scrapeTimeoutMs: deps.scrapeTimeoutMs,
    verifyPods: deps.verifyPods,
  });
  const stepTimer = new StepTimer();
  const switches = new SwitchChecker({ kube, kubeConfig: deps.kubeConfig, pods: queues.pods });
  const vmdcStatus = statusClient(deps.kubeConfig);
  const createEvent = eventCreator(deps.kubeConfig, { component: 'worker', instance: deps.instance ?? os.hostname() }, REQUEST_TIMEOUT_MS);
  const notifier = new Notifier({ kubeConfig: deps.kubeConfig, metrics, createEvent });
  const policy = deps.policy ?? STRICT_TRUST_POLICY;
  const guard = writeGuard({ vmdcs: vmdcStatus, policy });
  /** Every write activity checks its write first (docs/security.md#every-write-is-bound-to-its-object). */
  const bound = (write: Write): Promise<void> => (deps.bindWrites === false ? Promise.resolve() : guard.check(write));

  const sample = (target: QueueTarget): Promise<QueueSample> => queues.sample(target, inActivity() ? Context.current().cancellationSignal : undefined);
  /** An activity that samples queues: their pending-bytes series live as long as it runs. */
  const sampling = <T>(run: (sample: QueueSampler) => Promise<T>): Promise<T> => reportingQueues(metrics, sample, run);

  /**
   * The records of one object, verified (api/record-verification.ts); those that are not are
   * reported (log, metric; the status condition and its Event where a status is written), never
   * acted on. The object's name, when not given, is the calling workflow's.
   */
  const expectationOf = async (o: { namespace: string; uid: string; name?: string }) =>
    recordExpectation(o.namespace, o.uid, o.name ? await vmdcStatus.get(o.namespace, o.name) : undefined);
  const verifiedRecords = async (object: { namespace: string; uid: string; name?: string }) => {
    const name = object.name ?? parseWorkflowId(callingWorkflowId())?.name;
    const listing = await readRecords(kube, await expectationOf({ ...object, name }));
    const unverified = listing.unverified.map(describeUnverified);
    if (name) metrics.unverifiedRecords({ namespace: object.namespace, name }, unverified.length);
    if (unverified.length > 0)
      activityLog('warn', `route records not acted on: ${unverified.join('; ')}`, { namespace: object.namespace, name, uid: object.uid });
    return { zones: recordedZones(listing.verified), unverified };
  };

  /**
   * The zones out of reads are what the verified route records say, whatever the workflow remembers.
   * `allowed`: who may write instead of the rollout of that generation (a fleet reporting a member it
   * never started: a zone a superseded generation left out is still shown).
   */
  const writeStatusOf = async (input: { object: ObjectGeneration; status: VMDistributedClusterStatus }, allowed?: (current: CurrentObject) => boolean) => {
    if (!allowed) await bound({ kind: 'status', object: input.object });
    const records = await verifiedRecords(input.object);
    const status = withRecordedZones(
      input.status,
      records.zones.map((z) => z.zone),
    );
    return writeStatus(vmdcStatus, { ...input, status }, { metrics, stepTimer, createEvent, unverifiedRecords: records.unverified, notifier, allowed });
  };

  const activities: RolloutActivities = {
    async verifyInput(input) {
      const { namespace, name } = input.object;
      let v: InputVerdict;
      try {
        v = decideInput(input, callingWorkflowId(), await vmdcStatus.get(namespace, name), policy);
      } catch (err) {
        if (!refusedForGood(err, activityAttempt())) throw err;
        v = { verdict: 'refused', message: `workflow input refused, nothing done: cannot read ${namespace}/${name} to check it: ${describeError(err)}` };
      }
      if (v.verdict !== 'ok') activityLog('warn', v.message, { namespace, name, generation: input.object.generation });
      return v;
    },

    takeOverObject: (input) => takeOverObject(deps.temporalClient, activityPollContext(), input),

    writeStatus: (input) => writeStatusOf(input),

    reportQueuedMember: (input) =>
      writeStatusOf({ object: input.object, status: { phase: 'Cancelled', message: input.message } }, (current) =>
        mayReportQueued(current, input.object, input.workflowId, callingWorkflowId()),
      ),

    async readObject(input) {
      return objectState(await kube.get(vmKind(input.kind), input.namespace, input.name));
    },

    async applyObject(input) {
      await bound({ kind: 'apply', input });
      return applyObject(kube, input);
    },

    waitOperational: (input) => waitOperational(kube, activityPollContext(), input),

    readRoutes: (input) => readRoutes(kube, input),

    async editRoutes(input) {
      await bound({ kind: 'routes', input });
      const ctx = activityPollContext();
      const spec = (await expectationOf(input.record.vmdc)).spec;
      const r = await withReadableRecords(() => editRoutes(kube, input, { onAttempt: (route, attempt) => ctx.heartbeat({ route, attempt }) }, spec));
      return { vmauthGeneration: r.vmauthGeneration, vmuserGenerations: r.vmuserGenerations, recorded: r.recorded };
    },

    readRecords: async (input) => (await verifiedRecords(input)).zones,

    waitQueueDrained: (input) => sampling((sample) => waitQueueDrained(activityPollContext(), sample, input)),

    sampleQueue: (input) => sampling((sample) => sample(input)),

    watchQueue: ({ report, ...input }) =>
      sampling((sample) =>
        watchQueue(
          activityPollContext(),
          sample,
          input,
          Date.now,
          queueReporter(report, input.queueDrainedForMs, { writeStatus: writeStatusOf, client: deps.temporalClient }),
        ),
      ),

    readVmagent: (input) => readVmagent(queues, input, inActivity() ? Context.current().cancellationSignal : undefined),

    waitCarriersReady: (input) => sampling((sample) => waitCarriersReady(kube, sample, activityPollContext(), input)),

    async confirmSwitch(input) {
      if (deps.confirmSwitchInPods === false) return { pods: [], message: 'not confirmed in the vmauth pods (test knob confirmSwitchInPods: false)' };
      return confirmSwitch(switches, activityPollContext(), input);
    },

    waitReadsDrained: (input) => waitReadsDrained(queues.pods, activityPollContext(), input),

    measureCanary: (input) => measureCanary(queues.pods, activityPollContext(), input),

    countSamples: (input) => countSamples(queues.pods, activityPollContext(), input),

    readReadHealth: (input) => readReadHealth(queues.pods, input, inActivity() ? Context.current().cancellationSignal : new AbortController().signal),

    awaitSwitch: (input) => awaitSwitch(activities, input),
  };

  // An API request the server refuses for good fails the step at once; count failed attempts by
  // activity and failure type (cancellation is not an error).
  const wrapped = {} as Record<string, unknown>;
  for (const [name, fn] of Object.entries(activities) as Array<[string, (arg: unknown) => Promise<unknown>]>) {
    wrapped[name] = async (arg: unknown) => {
      try {
        return await fn(arg);
      } catch (thrown) {
        const err = refusedForGood(thrown, activityAttempt())
          ? nonRetryable(FailureType.PatchRejected, `${name}: the API server refused the request: ${describeError(thrown)}`)
          : thrown;
        if (!(err instanceof CancelledFailure)) metrics.activityError(name, errorType(err));
        throw err;
      }
    };
  }
  return wrapped as unknown as RolloutActivities;
}
