// Per-object trigger logic. `decide()` is a pure function from what the watch saw (plus what the
// trigger last sent) to a list of actions; `Reconciler` gathers the facts decide() needs and
// executes the actions against Temporal and the Kubernetes API.
import { createHash } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { mergeConditions } from '../api/conditions';
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
import type { Condition, JsonValue, NormalizedSpec, ObjectGeneration, Phase, VMDistributedClusterStatus, WorkflowRef } from '../api/types';
import type { KubeOps } from './kube';
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
  validate(spec: unknown): SpecValidation;
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
  /** The object is gone: cancel its running workflows (those known plus a visibility query by uid). */
  | { type: 'cancel'; object: ObjectGeneration; workflowIds: string[] };

/** Phases after which the workflow named in the status has ended: no pause/resume signals. */
const ENDED_PHASES: ReadonlySet<Phase> = new Set<Phase>(['Succeeded', 'Cancelled', 'Superseded']);

export const MEMO_SPEC_HASH = 'vmrolloutSpecHash';

// ---------------------------------------------------------------------------------------
// pure helpers

export function objectKey(obj: VmdcObject): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}

/** The object's identity at its current generation, or undefined when metadata is incomplete. */
export function objectGeneration(obj: VmdcObject): ObjectGeneration | undefined {
  const m = obj.metadata;
  if (!m?.name || !m.namespace || !m.uid || typeof m.generation !== 'number') return undefined;
  return { namespace: m.namespace, name: m.name, uid: m.uid, generation: m.generation };
}

function canonical(v: unknown): JsonValue {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') {
    const out: Record<string, JsonValue> = {};
    for (const k of Object.keys(v).sort()) {
      const x = (v as Record<string, unknown>)[k];
      if (x !== undefined) out[k] = canonical(x);
    }
    return out;
  }
  return (v ?? null) as JsonValue;
}

/** Hash of the normalized spec without `paused`: equal hashes mean "same rollout". */
export function specHash(spec: NormalizedSpec): string {
  const { paused: _paused, ...rest } = spec;
  return createHash('sha256').update(JSON.stringify(canonical(rest))).digest('hex').slice(0, 32);
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
 * Forward `spec.paused` to the workflow in charge, without storms: `pause` when the spec says paused
 * and it was not sent to this workflow yet (so once more after a trigger restart or relist);
 * `resume` only when this trigger sent `pause` before, or the workflow reports `Paused`. Never a
 * gratuitous `resume`: it would also retry a Failed zone.
 */
function pauseSignal(obj: VmdcObject, workflowId: string, mem: TriggerMemory, statusIsThisWorkflow = true): Action[] {
  if (statusIsThisWorkflow && obj.status?.phase && ENDED_PHASES.has(obj.status.phase)) return [];
  const paused = rawPaused(obj);
  const last = mem.lastPaused.get(workflowId);
  if (paused) return last === true ? [] : [{ type: 'signal', workflowId, signal: SIGNAL_PAUSE }];
  const reportsPaused = statusIsThisWorkflow && obj.status?.phase === 'Paused';
  if (last === true || (last === undefined && reportsPaused)) return [{ type: 'signal', workflowId, signal: SIGNAL_RESUME }];
  return [];
}

/**
 * The trigger's decision for one observed state of one object.
 *
 * - deleted → cancel its workflows;
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

  if (type === 'delete') {
    return [{ type: 'cancel', object: og, workflowIds: prev ? [prev.id] : [] }];
  }
  if (obj.metadata?.deletionTimestamp) return []; // the delete event will follow

  if (st.observedGeneration === og.generation) {
    if (st.phase === 'Invalid') return [];
    if (prev) return pauseSignal(obj, prev.id, ctx);
  }

  const v = ctx.validator.validate(obj.spec);
  if (!v.success) {
    const superseded = prev && prev.id !== workflowIdFor(og) ? prev.id : undefined;
    const actions: Action[] = [{ type: 'reportInvalid', object: og, message: ctx.validator.format(v.issues), issues: v.issues, supersededWorkflowId: superseded }];
    if (superseded) actions.push({ type: 'supersede', workflowId: superseded, generation: og.generation });
    return actions;
  }

  const workflowId = workflowIdFor(og);
  const hash = specHash(v.spec);
  if (prev && prev.id !== workflowId && st.phase !== 'Invalid' && ctx.previousSpecHash === hash) {
    return [{ type: 'adopt', object: og, workflow: prev }, ...pauseSignal(obj, prev.id, ctx)];
  }
  const previousWorkflowIds = prev && prev.id !== workflowId ? [prev.id] : [];
  const actions: Action[] = [{ type: 'start', workflowId, input: { object: og, spec: v.spec, previousWorkflowIds }, specHash: hash }];
  for (const id of previousWorkflowIds) actions.push({ type: 'supersede', workflowId: id, generation: og.generation });
  // The input carries spec.paused already; a paused generation also gets the signal, once.
  if (v.spec.paused) actions.push(...pauseSignal(obj, workflowId, ctx, false));
  return actions;
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

export class Reconciler {
  private readonly lastPaused = new Map<string, boolean>();
  private readonly specHashes = new Map<string, string | null>();
  private readonly now: () => Date;

  constructor(private readonly deps: ReconcilerDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** Forget what was sent, so the paused state is forwarded once more (after a relist). */
  forgetSignals(): void {
    this.lastPaused.clear();
  }

  async reconcile(type: WatchEventType, obj: VmdcObject): Promise<void> {
    const candidate = type === 'delete' ? undefined : adoptionCandidate(obj);
    const previousSpecHash = candidate ? await this.lookupSpecHash(candidate) : undefined;
    const actions = decide(type, obj, { lastPaused: this.lastPaused, validator: this.deps.validator, previousSpecHash });
    for (const a of actions) await this.execute(a, obj);
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

  private async execute(a: Action, obj: VmdcObject): Promise<void> {
    const log = this.deps.log.child({ object: objectKey(obj), generation: obj.metadata?.generation });
    switch (a.type) {
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
        // A running workflow of this generation is reused; a closed one is never started again.
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
      runId = handle.firstExecutionRunId;
      metrics.workflowsStarted.inc({ result: 'started' });
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

  /** Cancels every running workflow of this object (this uid): the known ids plus a visibility query. */
  async cancel(og: Omit<ObjectGeneration, 'generation'>, knownIds: string[], log: Logger = this.deps.log): Promise<string[]> {
    const { temporal } = this.deps;
    const ids = new Set(knownIds);
    const prefix = uidPrefix(og.uid);
    for await (const wf of temporal.workflow.list({ query: runningWorkflowsQuery(og) })) {
      if (parseWorkflowId(wf.workflowId)?.uidPrefix === prefix) ids.add(wf.workflowId);
    }
    const cancelled: string[] = [];
    for (const id of ids) {
      if (parseWorkflowId(id)?.uidPrefix !== prefix) continue;
      try {
        await temporal.workflow.getHandle(id).cancel();
        cancelled.push(id);
        this.deps.metrics.workflowsCancelled.inc();
        log.info('object deleted: cancelled its rollout workflow', { workflowId: id });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      this.lastPaused.delete(id);
      this.specHashes.delete(id);
    }
    return cancelled;
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

  private async event(obj: VmdcObject, type: 'Normal' | 'Warning', reason: string, message: string, log: Logger): Promise<void> {
    try {
      await this.deps.kube.createEvent(obj, type, reason, message);
    } catch (err) {
      log.warn('could not create Event', { reason, err });
    }
  }
}
