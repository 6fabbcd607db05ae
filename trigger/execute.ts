// Carries out the trigger's decisions (trigger/decide.ts) for one object: gathers the facts decide()
// needs (the spec hash of the workflow a generation may adopt), then starts, signals and cancels
// workflows on Temporal and writes the object's status, finalizer and Events.
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { mergeConditions } from '../api/conditions';
import { ROUTE_RECORDS_FINALIZER } from '../api/constants';
import {
  SA_NAMESPACE,
  SIGNAL_PAUSE,
  SIGNAL_RESUME,
  SIGNAL_SUPERSEDE,
  WORKFLOW_TYPE,
  parseWorkflowId,
  rolloutPriority,
  runningWorkflowsQuery,
  uidPrefix,
  visibilityString,
  type SupersedeSignal,
} from '../api/rollout-contract';
import type { Condition, FleetMembership, ObjectGeneration, VMDistributedClusterStatus, WorkflowRef } from '../api/types';
import type { EventType } from '../kube/events';
import type { VmdcObject } from '../kube/vmdc-object';
import { adoptionCandidate, decide, type Action, type SpecValidator } from './decide';
import { releaseOrHold } from './deletion';
import { tryCreateEvent, type KubeOps } from './kube';
import type { Logger } from './log';
import type { TriggerMetrics } from './metrics';
import { objectKey, type WatchEventType } from './watch';
import { MEMO_SPEC_HASH, rolloutStartOptions } from '../api/rollout-start';
import { FLEET_WORKFLOW_TYPE, SIGNAL_FLEET_MEMBER, fleetWorkflowId, type FleetInput, type FleetMemberRequest } from '../api/fleet-contract';

function validCondition(status: VMDistributedClusterStatus | undefined): Condition | undefined {
  return status?.conditions?.find((c) => c.type === 'Valid');
}

export interface ReconcilerDeps {
  temporal: Client;
  kube: KubeOps;
  validator: SpecValidator;
  taskQueue: string;
  log: Logger;
  metrics: TriggerMetrics;
  now?: () => Date;
}

function isNotFound(err: unknown): boolean {
  return err instanceof WorkflowNotFoundError || (err as { name?: string })?.name === 'WorkflowNotFoundError';
}

export interface ReconcileOutcome {
  /** Being deleted and held by the finalizer: look again later. */
  blocked: boolean;
  /** Held because these workflows of it still run: look again as soon as they close. */
  running: string[];
}

export class Reconciler {
  private readonly lastPaused = new Map<string, boolean>();
  private readonly specHashes = new Map<string, string | null>();
  private readonly cancelRequested = new Set<string>();
  /** Per object: its generation not yet observed, and when a watch event first showed it (trigger lag). */
  private readonly generationSeen = new Map<string, { generation: number; at: number }>();
  private readonly now: () => Date;

  constructor(private readonly deps: ReconcilerDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** A watch event: remembers when a generation not yet observed was first seen (until it is observed, or the object goes). */
  seen(type: WatchEventType, obj: VmdcObject): void {
    const key = objectKey(obj);
    const generation = obj.metadata?.generation;
    if (type === 'delete' || typeof generation !== 'number' || obj.status?.observedGeneration === generation) this.generationSeen.delete(key);
    else if (this.generationSeen.get(key)?.generation !== generation) this.generationSeen.set(key, { generation, at: this.now().getTime() });
  }

  /** Forget what was sent, so the paused state is forwarded once more (after a relist). */
  forgetSignals(): void {
    this.lastPaused.clear();
  }

  /**
   * Decides and executes. `blocked`: the object is being deleted and its finalizer stays for now
   * (a workflow of it still runs, or route records name it): the caller looks again later, since
   * neither a workflow ending nor a person releasing a zone changes the object itself.
   */
  async reconcile(type: WatchEventType, obj: VmdcObject): Promise<ReconcileOutcome> {
    const candidate = type === 'delete' || obj.metadata?.deletionTimestamp ? undefined : adoptionCandidate(obj);
    const previousSpecHash = candidate ? await this.lookupSpecHash(candidate) : undefined;
    const actions = decide(type, obj, { lastPaused: this.lastPaused, validator: this.deps.validator, previousSpecHash });
    const outcome: ReconcileOutcome = { blocked: false, running: [] };
    for (const a of actions) {
      const r = await this.execute(a, obj);
      if (r === 'stop') break;
      if (r) {
        outcome.blocked = true;
        outcome.running.push(...r.running);
      }
    }
    return outcome;
  }

  private async lookupSpecHash(workflowId: string): Promise<string | null> {
    const cached = this.specHashes.get(workflowId);
    if (cached !== undefined) return cached;
    let hash: string | null = null;
    try {
      const d = await this.deps.temporal.workflow.getHandle(workflowId).describe();
      const h = d.memo?.[MEMO_SPEC_HASH];
      hash = typeof h === 'string' ? h : null;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    this.specHashes.set(workflowId, hash);
    return hash;
  }

  /** 'stop': skip the remaining actions; an object: the finalizer stays (held by `running`, or by records). */
  private async execute(a: Action, obj: VmdcObject): Promise<void | 'stop' | { running: string[] }> {
    const log = this.deps.log.child({ object: objectKey(obj), generation: obj.metadata?.generation });
    switch (a.type) {
      case 'ensureFinalizer':
        return (await this.ensureFinalizer(a.object, log)) ? undefined : 'stop';
      case 'finalize':
        return this.finalize(a, obj, log);
      case 'start':
        return this.start(a, obj, log);
      case 'adopt':
        return this.adopt(a, log);
      case 'reportInvalid':
        return this.reportInvalid(a, obj, log);
      case 'signal':
        return this.signalPaused(a.workflowId, a.signal, log);
      case 'supersede':
        return this.supersede(a.workflowId, a.generation, log);
      case 'cancel':
        await this.cancel(a.object, a.workflowIds, log);
        return;
    }
  }

  private async start(a: Extract<Action, { type: 'start' }>, obj: VmdcObject, log: Logger): Promise<void> {
    const { temporal, taskQueue, metrics, kube } = this.deps;
    const og = a.input.object;
    if (a.input.spec.fleet && !(await this.exists(a.workflowId))) return this.handOver(a, a.input.spec.fleet, obj, log);
    let runId: string;
    try {
      const handle = await temporal.workflow.start(WORKFLOW_TYPE, {
        workflowId: a.workflowId,
        taskQueue,
        args: [a.input],
        ...rolloutStartOptions(a.input, a.specHash),
        // A running workflow of this generation is reused; a closed one is never started again.
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
      runId = handle.firstExecutionRunId;
      metrics.workflowsStarted.inc({ result: 'started' });
      const seen = this.generationSeen.get(objectKey(obj));
      if (seen?.generation === og.generation) {
        metrics.startDuration.observe((this.now().getTime() - seen.at) / 1000);
        this.generationSeen.delete(objectKey(obj));
      }
      log.info('rollout workflow started (or already running)', { workflowId: a.workflowId, runId, previousWorkflowIds: a.input.previousWorkflowIds });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      const d = await temporal.workflow.getHandle(a.workflowId).describe();
      runId = d.runId;
      metrics.workflowsStarted.inc({ result: 'existing' });
      log.info('rollout workflow of this generation already closed; not starting it again', { workflowId: a.workflowId, runId, status: d.status.name });
    }
    this.specHashes.set(a.workflowId, a.specHash);

    const workflow: WorkflowRef = { id: a.workflowId, runId };
    const written = await kube.patchStatus(og, (fresh) => {
      const st = fresh.status ?? {};
      const patch: VMDistributedClusterStatus = {};
      if (st.observedGeneration !== og.generation) patch.observedGeneration = og.generation;
      if (st.workflow?.id !== workflow.id || st.workflow?.runId !== workflow.runId) patch.workflow = workflow;
      this.clearInvalid(st, og, patch);
      return Object.keys(patch).length ? patch : undefined;
    });
    if (written) {
      await this.event(obj, 'Normal', 'RolloutStarted', `Started rollout workflow ${a.workflowId} (run ${runId}) for generation ${og.generation}`, log);
    }
  }

  private async exists(workflowId: string): Promise<boolean> {
    try {
      await this.deps.temporal.workflow.getHandle(workflowId).describe();
      return true;
    } catch (err) {
      if (!isNotFound(err)) throw err;
      return false;
    }
  }

  /**
   * A fleet member's generation (spec.fleet): handed to its fleet's parent workflow (started if it
   * is not running), which starts it as a child in its region's turn (workflows/fleet.ts). The
   * status names that child already, and says it is queued, until the child writes its own.
   */
  private async handOver(a: Extract<Action, { type: 'start' }>, fleet: FleetMembership, obj: VmdcObject, log: Logger): Promise<void> {
    const { temporal, taskQueue, metrics, kube } = this.deps;
    const og = a.input.object;
    const fleetId = fleetWorkflowId(og.namespace, fleet.name);
    const request: FleetMemberRequest = { workflowId: a.workflowId, input: a.input, specHash: a.specHash };
    const input: FleetInput = { namespace: og.namespace, name: fleet.name };
    await temporal.workflow.signalWithStart(FLEET_WORKFLOW_TYPE, {
      workflowId: fleetId,
      taskQueue,
      args: [input],
      signal: SIGNAL_FLEET_MEMBER,
      signalArgs: [request],
      typedSearchAttributes: [{ key: SA_NAMESPACE, value: og.namespace }],
      priority: rolloutPriority(og.namespace),
      staticSummary: `fleet ${og.namespace}/${fleet.name}: one rollout per region at a time`,
    });
    metrics.workflowsStarted.inc({ result: 'queued' });
    this.specHashes.set(a.workflowId, a.specHash);
    log.info('handed to its fleet', { workflowId: a.workflowId, fleetWorkflowId: fleetId, region: fleet.region });
    const message = `queued in fleet ${fleet.name} (workflow ${fleetId}), region ${fleet.region}: starts once no other member of the region rolls out`;
    let queued = false;
    const written = await kube.patchStatus(og, (fresh) => {
      const st = fresh.status ?? {};
      const patch: VMDistributedClusterStatus = {};
      if (st.observedGeneration !== og.generation) patch.observedGeneration = og.generation;
      // The child may have started and written its own status already: that one stands.
      queued = st.workflow?.id !== a.workflowId;
      if (queued) Object.assign(patch, { workflow: { id: a.workflowId, runId: '' }, phase: 'Pending', message });
      this.clearInvalid(st, og, patch);
      return Object.keys(patch).length ? patch : undefined;
    });
    if (written && queued) await this.event(obj, 'Normal', 'RolloutQueued', `Generation ${og.generation} ${message}`, log);
  }

  /** After an Invalid generation, a valid one sets Valid=True and leaves the Invalid phase. */
  private clearInvalid(st: VMDistributedClusterStatus, og: ObjectGeneration, patch: VMDistributedClusterStatus): void {
    const valid = validCondition(st);
    if (valid && (valid.status !== 'True' || valid.observedGeneration !== og.generation)) {
      patch.conditions = mergeConditions(
        st.conditions,
        [{ type: 'Valid', status: 'True', reason: 'ValidSpec', message: 'The spec is valid.', observedGeneration: og.generation }],
        { now: this.now().toISOString() },
      );
    }
    if (st.phase === 'Invalid') {
      patch.phase = 'Pending';
      patch.message = '';
    }
  }

  private async adopt(a: Extract<Action, { type: 'adopt' }>, log: Logger): Promise<void> {
    const og = a.object;
    const written = await this.deps.kube.patchStatus(og, (fresh) => {
      const st = fresh.status ?? {};
      if (st.workflow?.id !== a.workflow.id) return undefined; // someone moved on; the next event decides again
      const patch: VMDistributedClusterStatus = {};
      if (st.observedGeneration !== og.generation) patch.observedGeneration = og.generation;
      this.clearInvalid(st, og, patch);
      return Object.keys(patch).length ? patch : undefined;
    });
    log.info('generation changes only spec.paused: the workflow in the status stays in charge (nothing to roll out if it has ended)', {
      workflowId: a.workflow.id,
      written,
    });
  }

  private async reportInvalid(a: Extract<Action, { type: 'reportInvalid' }>, obj: VmdcObject, log: Logger): Promise<void> {
    const og = a.object;
    const message = `Invalid spec at generation ${og.generation}: ${a.message}`;
    const written = await this.deps.kube.patchStatus(og, (fresh) => {
      const st = fresh.status ?? {};
      const cond = validCondition(st);
      const dropWorkflow = !!a.supersededWorkflowId && st.workflow?.id === a.supersededWorkflowId;
      if (st.observedGeneration === og.generation && st.phase === 'Invalid' && st.message === message && cond?.status === 'False' && !dropWorkflow)
        return undefined;
      const patch: VMDistributedClusterStatus = {
        observedGeneration: og.generation,
        phase: 'Invalid',
        message,
        conditions: mergeConditions(st.conditions, [{ type: 'Valid', status: 'False', reason: 'InvalidSpec', message, observedGeneration: og.generation }], {
          now: this.now().toISOString(),
        }),
      };
      // The superseded workflow loses status.workflow, hence its right to write the status (it
      // would otherwise overwrite Invalid with its own final phase). Visibility still finds it.
      if (dropWorkflow) (patch as { workflow?: WorkflowRef | null }).workflow = null;
      return patch;
    });
    if (written) {
      this.deps.metrics.validationFailures.inc();
      log.warn('invalid spec: no rollout started', { issues: a.issues.map((i) => ({ path: i.path, message: i.message })) });
      await this.event(obj, 'Warning', 'InvalidSpec', message, log);
    }
  }

  private async signalPaused(workflowId: string, signal: typeof SIGNAL_PAUSE | typeof SIGNAL_RESUME, log: Logger): Promise<void> {
    try {
      await this.deps.temporal.workflow.getHandle(workflowId).signal(signal);
      this.deps.metrics.signalsSent.inc({ signal });
      log.info(`sent ${signal}`, { workflowId });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      log.debug(`workflow already closed; ${signal} not sent`, { workflowId });
    }
    this.lastPaused.set(workflowId, signal === SIGNAL_PAUSE);
  }

  private async supersede(workflowId: string, generation: number, log: Logger): Promise<void> {
    const arg: SupersedeSignal = { generation };
    try {
      await this.deps.temporal.workflow.getHandle(workflowId).signal(SIGNAL_SUPERSEDE, arg);
      this.deps.metrics.signalsSent.inc({ signal: SIGNAL_SUPERSEDE });
      log.info('sent supersede', { workflowId, newGeneration: generation });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    this.lastPaused.delete(workflowId);
  }

  /** Ids of this object's (this uid's) workflows that may run: the known ids plus a visibility query. */
  private async candidateIds(og: Omit<ObjectGeneration, 'generation'>, knownIds: string[]): Promise<string[]> {
    const prefix = uidPrefix(og.uid);
    const ids = new Set(knownIds);
    for await (const wf of this.deps.temporal.workflow.list({ query: runningWorkflowsQuery(og) })) ids.add(wf.workflowId);
    return [...ids].filter((id) => parseWorkflowId(id)?.uidPrefix === prefix);
  }

  /**
   * Cancels every running workflow of this object (this uid): the known ids plus a visibility query.
   * A workflow this trigger already asked to cancel is not asked again (an object being deleted is
   * reconciled on every status write of its cleanup).
   */
  async cancel(og: Omit<ObjectGeneration, 'generation'>, knownIds: string[], log: Logger = this.deps.log): Promise<string[]> {
    const { temporal } = this.deps;
    const cancelled: string[] = [];
    for (const id of await this.candidateIds(og, knownIds)) {
      if (this.cancelRequested.has(id)) continue;
      try {
        await temporal.workflow.getHandle(id).cancel();
        cancelled.push(id);
        this.deps.metrics.workflowsCancelled.inc();
        log.info('object deleted: cancelled its rollout workflow', { workflowId: id });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      if (this.cancelRequested.size >= 10_000) this.cancelRequested.clear();
      this.cancelRequested.add(id);
      this.lastPaused.delete(id);
      this.specHashes.delete(id);
    }
    return cancelled;
  }

  /**
   * The running workflows of this uid. Visibility may lag behind a workflow's close (or start), so
   * each candidate is confirmed with a describe, and the known ids are always described.
   */
  private async runningWorkflows(og: Omit<ObjectGeneration, 'generation'>, knownIds: string[]): Promise<string[]> {
    const running: string[] = [];
    for (const id of await this.candidateIds(og, knownIds)) {
      try {
        const d = await this.deps.temporal.workflow.getHandle(id).describe();
        if (d.status.name === 'RUNNING') running.push(id);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    return running;
  }

  /**
   * Adds the finalizer to the object (read-modify-write of metadata.finalizers; other finalizers are
   * kept). False when the object can no longer take it: gone, another uid, or being deleted.
   */
  private async ensureFinalizer(og: ObjectGeneration, log: Logger): Promise<boolean> {
    const r = await this.deps.kube.addFinalizer(og, ROUTE_RECORDS_FINALIZER);
    if (r === 'added') log.info('finalizer added', { finalizer: ROUTE_RECORDS_FINALIZER });
    else if (r !== 'present') log.info('finalizer not added: the object is gone or being deleted; nothing started', { result: r });
    return r === 'added' || r === 'present';
  }

  /**
   * The object is being deleted (its workflows were just asked to cancel). Returns what holds the
   * finalizer: a workflow of this uid still runs (`running`: its cleanup may still put a zone back,
   * and writes the status itself), or route records of this uid remain (reported in the status and
   * a Warning Event), or they cannot be read. Otherwise removes the finalizer (returns undefined).
   */
  private async finalize(a: Extract<Action, { type: 'finalize' }>, obj: VmdcObject, log: Logger): Promise<{ running: string[] } | undefined> {
    const og = a.object;
    const running = await this.runningWorkflows(og, a.workflowIds);
    if (running.length) {
      log.info('being deleted: waiting for its rollout workflows to end', { running });
      return { running };
    }
    return (await releaseOrHold(this.deps.kube, og, obj, log)) === 'held' ? { running: [] } : undefined;
  }

  /**
   * Running workflows whose object no longer exists (deleted while no trigger watched). `known`:
   * the objects of a fresh list; each candidate is confirmed with a GET before it is cancelled.
   */
  async orphans(known: ReadonlyArray<VmdcObject>, namespaces: string[]): Promise<Array<{ namespace: string; name: string; uid: string; workflowId: string }>> {
    const present = new Set(known.map((o) => `${objectKey(o)}/${uidPrefix(o.metadata?.uid ?? '')}`));
    let query = runningWorkflowsQuery();
    if (namespaces.length) query += ` AND (${namespaces.map((n) => `${SA_NAMESPACE.name} = ${visibilityString(n)}`).join(' OR ')})`;
    const out: Array<{ namespace: string; name: string; uid: string; workflowId: string }> = [];
    for await (const wf of this.deps.temporal.workflow.list({ query })) {
      const p = parseWorkflowId(wf.workflowId);
      if (!p || present.has(`${p.namespace}/${p.name}/${p.uidPrefix}`)) continue;
      out.push({ namespace: p.namespace, name: p.name, uid: p.uidPrefix, workflowId: wf.workflowId });
    }
    return out;
  }

  private event(obj: VmdcObject, type: EventType, reason: string, message: string, log: Logger): Promise<void> {
    return tryCreateEvent(this.deps.kube, obj, type, reason, message, log);
  }
}
