// Per-object trigger logic. `decide()` is a pure function from what the watch saw (plus what the
// trigger last sent) to a list of actions; `Reconciler` gathers the facts decide() needs and
// executes the actions against Temporal and the Kubernetes API.
import type { KubernetesObject } from '@kubernetes/client-node';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { mergeConditions } from '../api/conditions';
import { ROUTE_RECORDS_FINALIZER } from '../api/constants';
import { OUT_OF_ROTATION_ANNOTATION, RELEASE_COMMAND, UnreadableRecordsError } from '../api/route-records';
import {
  SA_CLUSTER_VERSION,
  SA_GENERATION,
  SA_NAME,
  SA_NAMESPACE,
  SIGNAL_PAUSE,
  SIGNAL_RESUME,
  SIGNAL_SUPERSEDE,
  WORKFLOW_TYPE,
  parseWorkflowId,
  runningWorkflowsQuery,
  uidPrefix,
  visibilityString,
  workflowIdFor,
  type RolloutInput,
  type SupersedeSignal,
} from '../api/rollout-contract';
import type { Condition, NormalizedSpec, ObjectGeneration, Phase, VMDistributedClusterStatus, WorkflowRef } from '../api/types';
import { specHash } from '../api/spec-hash';
import { recordedZones, type RecordedRoute } from '../kube/route-records';
import type { EventType } from '../kube/events';
import { tryCreateEvent, type KubeOps } from './kube';
import { workflowDescription } from './workflow-description';
import type { Logger } from './log';
import type { TriggerMetrics } from './metrics';
import type { VmdcObject } from './vmdc-object';

// ---------------------------------------------------------------------------------------
// shapes

export interface ValidationIssue {
  path: unknown;
  message: string;
}
export type SpecValidation = { success: true; spec: NormalizedSpec } | { success: false; issues: ReadonlyArray<ValidationIssue> };

export interface SpecValidator {
  /** `namespace`: the object's (what the spec may ask for depends on it). */
  validate(spec: unknown, namespace: string): SpecValidation;
  format(issues: ReadonlyArray<ValidationIssue>): string;
}

export type WatchEventType = 'add' | 'update' | 'delete';

/** What the trigger remembers between events: the paused state last sent, per workflow id. */
export interface TriggerMemory {
  lastPaused: ReadonlyMap<string, boolean>;
}

export interface DecideContext extends TriggerMemory {
  validator: SpecValidator;
  /**
   * Spec hash (see specHash) recorded in the memo of the workflow named by status.workflow. The
   * caller supplies it whenever `adoptionCandidate(obj)` names a workflow; null when that workflow
   * is unknown to Temporal (or has no hash): then the generation gets its own workflow.
   */
  previousSpecHash?: string | null;
}

export type Action =
  /** Record the invalid generation: status Invalid + Valid=False condition + Warning Event. */
  | {
      type: 'reportInvalid';
      object: ObjectGeneration;
      message: string;
      issues: ReadonlyArray<ValidationIssue>;
      /** The previous workflow this generation supersedes: removed from status.workflow. */
      supersededWorkflowId?: string;
    }
  /** Start this generation's workflow idempotently, then record it in the status. */
  | { type: 'start'; workflowId: string; input: RolloutInput; specHash: string }
  /**
   * The generation changed nothing but `spec.paused` (same normalized spec otherwise): the workflow
   * named by status.workflow stays in charge (pause/resume signals reach it; when it has ended,
   * e.g. Succeeded, there is nothing to roll out); record the generation as observed and keep
   * status.workflow.
   */
  | { type: 'adopt'; object: ObjectGeneration; workflow: WorkflowRef }
  | { type: 'signal'; workflowId: string; signal: typeof SIGNAL_PAUSE | typeof SIGNAL_RESUME }
  | { type: 'supersede'; workflowId: string; generation: number }
  /**
   * The object is gone, or being deleted: cancel its running workflows (those known plus a
   * visibility query by uid).
   */
  | { type: 'cancel'; object: ObjectGeneration; workflowIds: string[] }
  /**
   * Add ROUTE_RECORDS_FINALIZER (absent on this object) before anything else: the object has, or is
   * about to get, a rollout workflow that may take zones out of read rotation. When the object can
   * no longer take it (gone, another uid, being deleted), the actions after it are not executed.
   */
  | { type: 'ensureFinalizer'; object: ObjectGeneration }
  /**
   * The object is being deleted and carries ROUTE_RECORDS_FINALIZER: once no rollout workflow of its
   * uid runs and no route record names its uid, remove the finalizer; otherwise keep it, report what
   * holds it in the status (and a Warning Event), and look again later.
   */
  | { type: 'finalize'; object: ObjectGeneration; workflowIds: string[] };

/** Phases after which the workflow named in the status has ended: no pause/resume signals. */
const ENDED_PHASES: ReadonlySet<Phase> = new Set<Phase>(['Succeeded', 'Cancelled', 'Superseded']);

export const MEMO_SPEC_HASH = 'vmrolloutSpecHash';

// ---------------------------------------------------------------------------------------
// pure helpers

export function objectKey(obj: KubernetesObject): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}

/** The object's identity at its current generation, or undefined when metadata is incomplete. */
export function objectGeneration(obj: VmdcObject): ObjectGeneration | undefined {
  const m = obj.metadata;
  if (!m?.name || !m.namespace || !m.uid || typeof m.generation !== 'number') return undefined;
  return { namespace: m.namespace, name: m.name, uid: m.uid, generation: m.generation };
}


/** Whether the object carries the trigger's finalizer. */
export function hasFinalizer(obj: VmdcObject): boolean {
  return obj.metadata?.finalizers?.includes(ROUTE_RECORDS_FINALIZER) ?? false;
}

function rawPaused(obj: VmdcObject): boolean {
  const spec = obj.spec;
  return !!spec && typeof spec === 'object' && (spec as { paused?: unknown }).paused === true;
}

/**
 * When the object is at a generation the trigger has not handled yet and its status names a
 * workflow of another generation, decide() needs that workflow's spec hash (to tell a paused-only
 * edit, which that workflow adopts, from a new rollout): returns that workflow id.
 */
export function adoptionCandidate(obj: VmdcObject): string | undefined {
  const og = objectGeneration(obj);
  const st = obj.status;
  if (!og || !st?.workflow?.id) return undefined;
  if (st.observedGeneration === og.generation) return undefined;
  if (st.phase === 'Invalid') return undefined;
  return st.workflow.id === workflowIdFor(og) ? undefined : st.workflow.id;
}

/**
 * Forward `spec.paused` to the workflow in charge, without storms: `pause` when the spec says paused,
 * it was not sent to this workflow yet (so once more after a trigger restart or relist) and the
 * status does not show this workflow paused already; `resume` only when this trigger sent `pause`
 * before, or the workflow reports `Paused`. Never a gratuitous `resume`: it would also retry a
 * Failed zone.
 *
 * Why the status counts: after a relist nothing is remembered, and re-sending `pause` to every
 * paused object cost one signal per paused object per relist (docs/benchmarks.md). The workflow
 * writes phase `Paused` (with status.workflow = itself) only once it has received `pause` and
 * stopped at a safe point, so that status proves the pause landed. A pause still on its way (phase
 * not yet `Paused`, or the status naming another workflow) is sent; so is one after this trigger
 * sent `resume` (the status may not show that resume yet).
 */
function pauseSignal(obj: VmdcObject, workflowId: string, mem: TriggerMemory, statusIsThisWorkflow = true): Action[] {
  if (statusIsThisWorkflow && obj.status?.phase && ENDED_PHASES.has(obj.status.phase)) return [];
  const paused = rawPaused(obj);
  const last = mem.lastPaused.get(workflowId);
  const reportsPaused = statusIsThisWorkflow && obj.status?.workflow?.id === workflowId && obj.status?.phase === 'Paused';
  if (paused) return last === true || (last === undefined && reportsPaused) ? [] : [{ type: 'signal', workflowId, signal: SIGNAL_PAUSE }];
  if (last === true || (last === undefined && reportsPaused)) return [{ type: 'signal', workflowId, signal: SIGNAL_RESUME }];
  return [];
}

/**
 * The trigger's decision for one observed state of one object.
 *
 * - deleted (gone) → cancel its workflows;
 * - being deleted (deletionTimestamp) → cancel its workflows, and finalize when it carries the
 *   finalizer (remove it once no workflow runs and no route record of its uid is left);
 * - otherwise, whenever the object has had (status.workflow) or gets (start, adopt) a rollout
 *   workflow and lacks the finalizer → ensureFinalizer first (objects from before the finalizer
 *   get it too);
 * - generation already handled (observedGeneration == generation with a workflow, or reported
 *   Invalid) → only forward `spec.paused` when it differs from what was last sent;
 * - new generation, invalid spec → report Invalid, and supersede the previous workflow (the report
 *   also removes status.workflow, so that workflow can no longer write the status);
 * - new generation whose normalized spec equals the previous workflow's but for `paused` (equal
 *   spec hash, from that workflow's memo) → adopt: that workflow stays in charge and gets
 *   `pause`/`resume`; if it has ended (Succeeded: the spec it rolled out is still the spec), there
 *   is nothing to roll out and only observedGeneration is recorded;
 * - new generation otherwise → start its workflow (idempotent; previousWorkflowIds = the status'
 *   workflow of another generation) and courtesy-signal `supersede` to that previous workflow.
 */
export function decide(type: WatchEventType, obj: VmdcObject, ctx: DecideContext): Action[] {
  const og = objectGeneration(obj);
  if (!og) return [];
  const st = obj.status ?? {};
  const prev = st.workflow?.id ? st.workflow : undefined;

  const knownIds = prev ? [prev.id] : [];
  if (type === 'delete') {
    return [{ type: 'cancel', object: og, workflowIds: knownIds }];
  }
  if (obj.metadata?.deletionTimestamp) {
    const actions: Action[] = [{ type: 'cancel', object: og, workflowIds: knownIds }];
    if (hasFinalizer(obj)) actions.push({ type: 'finalize', object: og, workflowIds: knownIds });
    return actions;
  }
  // Every object that has had a rollout workflow carries the finalizer; one about to get one
  // gets it first (so that a delete can never overtake a workflow's first route edit).
  const finalizer: Action[] = hasFinalizer(obj) ? [] : [{ type: 'ensureFinalizer', object: og }];
  const known = prev ? finalizer : [];

  if (st.observedGeneration === og.generation) {
    if (st.phase === 'Invalid') return known;
    if (prev) return [...known, ...pauseSignal(obj, prev.id, ctx)];
  }

  const v = ctx.validator.validate(obj.spec, og.namespace);
  if (!v.success) {
    const superseded = prev && prev.id !== workflowIdFor(og) ? prev.id : undefined;
    const actions: Action[] = [...known, { type: 'reportInvalid', object: og, message: ctx.validator.format(v.issues), issues: v.issues, supersededWorkflowId: superseded }];
    if (superseded) actions.push({ type: 'supersede', workflowId: superseded, generation: og.generation });
    return actions;
  }

  const workflowId = workflowIdFor(og);
  const hash = specHash(v.spec);
  if (prev && prev.id !== workflowId && st.phase !== 'Invalid' && ctx.previousSpecHash === hash) {
    return [...finalizer, { type: 'adopt', object: og, workflow: prev }, ...pauseSignal(obj, prev.id, ctx)];
  }
  const previousWorkflowIds = prev && prev.id !== workflowId ? [prev.id] : [];
  const actions: Action[] = [...finalizer, { type: 'start', workflowId, input: { object: og, spec: v.spec, previousWorkflowIds }, specHash: hash }];
  for (const id of previousWorkflowIds) actions.push({ type: 'supersede', workflowId: id, generation: og.generation });
  // The input carries spec.paused already; a paused generation also gets the signal, once.
  if (v.spec.paused) actions.push(...pauseSignal(obj, workflowId, ctx, false));
  return actions;
}

// ---------------------------------------------------------------------------------------
// deletion


/** What keeps a deleted object's finalizer, once no workflow of it runs. */
export type DeletionBlock = { type: 'records'; routes: ReadonlyArray<RecordedRoute> } | { type: 'unreadable'; reason: string };

/**
 * Pure: the status the trigger writes while a deleted object is held by its finalizer — the zones
 * the route records show out of reads (`zonesOutOfRotation`, DESIGN invariant 5) and, in
 * `message`, on which routes and how to release them; or why the records cannot be read.
 */
export function deletionBlockedStatus(og: Pick<ObjectGeneration, 'namespace' | 'uid'>, block: DeletionBlock): Pick<VMDistributedClusterStatus, 'message' | 'zonesOutOfRotation'> {
  const held = `being deleted, held by finalizer ${ROUTE_RECORDS_FINALIZER}`;
  if (block.type === 'unreadable') {
    return { message: `${held}: its ${OUT_OF_ROTATION_ANNOTATION} records cannot be read (${block.reason}); restore the routes they describe and fix or remove that annotation by hand` };
  }
  const zones = recordedZones(block.routes);
  const list = zones.map((z) => `${z.zone} (${z.removals.map((r) => `${r.route.kind} ${r.route.name}`).join(', ')})`).join(', ');
  const zone = zones.length === 1 ? zones[0]!.zone : '<zone>';
  return {
    message:
      `${held}: ${zones.length === 1 ? 'zone' : 'zones'} out of read rotation: ${list}; ` +
      `release ${zones.length === 1 ? 'it' : 'each'} with \`${RELEASE_COMMAND} --namespace ${og.namespace} --uid ${og.uid} --zone ${zone}\`, ` +
      `or restore those routes and remove their ${OUT_OF_ROTATION_ANNOTATION} records by hand`,
    zonesOutOfRotation: zones.map((z) => z.zone),
  };
}

// ---------------------------------------------------------------------------------------
// conditions

function validCondition(status: VMDistributedClusterStatus | undefined): Condition | undefined {
  return status?.conditions?.find((c) => c.type === 'Valid');
}

// ---------------------------------------------------------------------------------------
// execution

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
    let runId: string;
    try {
      const handle = await temporal.workflow.start(WORKFLOW_TYPE, {
        workflowId: a.workflowId,
        taskQueue,
        args: [a.input],
        typedSearchAttributes: [
          { key: SA_NAMESPACE, value: og.namespace },
          { key: SA_NAME, value: og.name },
          { key: SA_GENERATION, value: og.generation },
          { key: SA_CLUSTER_VERSION, value: a.input.spec.clusterVersion },
        ],
        memo: { [MEMO_SPEC_HASH]: a.specHash },
        ...workflowDescription(a.input),
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
    log.info('generation changes only spec.paused: the workflow in the status stays in charge (nothing to roll out if it has ended)', { workflowId: a.workflow.id, written });
  }

  private async reportInvalid(a: Extract<Action, { type: 'reportInvalid' }>, obj: VmdcObject, log: Logger): Promise<void> {
    const og = a.object;
    const message = `Invalid spec at generation ${og.generation}: ${a.message}`;
    const written = await this.deps.kube.patchStatus(og, (fresh) => {
      const st = fresh.status ?? {};
      const cond = validCondition(st);
      const dropWorkflow = !!a.supersededWorkflowId && st.workflow?.id === a.supersededWorkflowId;
      if (st.observedGeneration === og.generation && st.phase === 'Invalid' && st.message === message && cond?.status === 'False' && !dropWorkflow) return undefined;
      const patch: VMDistributedClusterStatus = {
        observedGeneration: og.generation,
        phase: 'Invalid',
        message,
        conditions: mergeConditions(st.conditions, [{ type: 'Valid', status: 'False', reason: 'InvalidSpec', message, observedGeneration: og.generation }], { now: this.now().toISOString() }),
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
    // Only now, with no workflow left to write one, are the records final.
    let block: DeletionBlock;
    try {
      const routes = await this.deps.kube.listRouteRecords(og.namespace, og.uid);
      if (routes.length === 0) {
        const r = await this.deps.kube.removeFinalizer(og, ROUTE_RECORDS_FINALIZER);
        log.info('being deleted: no workflow runs and no zone is out of read rotation; finalizer removed', { result: r });
        return undefined;
      }
      block = { type: 'records', routes };
    } catch (err) {
      if (!(err instanceof UnreadableRecordsError)) throw err;
      block = { type: 'unreadable', reason: err.message };
    }
    const patch = deletionBlockedStatus(og, block);
    const written = await this.deps.kube.patchStatus(
      og,
      (fresh) => {
        const st = fresh.status ?? {};
        const zonesSame = patch.zonesOutOfRotation === undefined || JSON.stringify(st.zonesOutOfRotation ?? []) === JSON.stringify(patch.zonesOutOfRotation);
        return st.message === patch.message && zonesSame ? undefined : patch;
      },
      { deleting: true },
    );
    log.warn('being deleted: finalizer kept', { message: patch.message });
    // One Event per state: the status is the memory (restarts and other replicas included).
    if (written) await this.event(obj, 'Warning', 'ZoneOutOfRotation', patch.message!, log);
    return { running: [] };
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
