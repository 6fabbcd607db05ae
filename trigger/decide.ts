// The trigger's decision for one observed state of one object: a pure function from what the watch
// saw (plus what the trigger last sent) to a list of actions, which trigger/execute.ts carries out.
import { ROUTE_RECORDS_FINALIZER } from '../api/constants';
import { SIGNAL_PAUSE, SIGNAL_RESUME, workflowIdFor, type RolloutInput } from '../api/rollout-contract';
import { specHash } from '../api/spec-hash';
import type { ObjectGeneration, Phase, WorkflowRef } from '../api/types';
import type { ValidationIssue, ValidationResult } from '../api/validate';
import type { VmdcObject } from '../kube/vmdc-object';
import type { WatchEventType } from './watch';

export interface SpecValidator {
  /** `namespace`: the object's (what the spec may ask for depends on it). */
  validate(spec: unknown, namespace: string): ValidationResult;
  format(issues: ReadonlyArray<ValidationIssue>): string;
}

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
const ENDED_PHASES: ReadonlySet<Phase> = new Set<Phase>(['Succeeded', 'Cancelled', 'Superseded', 'Aborted', 'Planned']);

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
 * The generation was handed to a fleet and its child has not started (the status names it with no
 * run): handed over again at every look, which a running fleet ignores as a repeat, so that a fleet
 * terminated or lost with members queued cannot strand them.
 */
function queuedInFleet(st: NonNullable<VmdcObject['status']>, og: ObjectGeneration): boolean {
  return st.phase === 'Pending' && st.workflow?.runId === '' && st.workflow.id === workflowIdFor(og);
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
 *   Invalid) → only forward `spec.paused` when it differs from what was last sent; but a generation
 *   still queued in its fleet (never started) is handed over again (start);
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
    if (prev && !queuedInFleet(st, og)) return [...known, ...pauseSignal(obj, prev.id, ctx)];
  }

  const v = ctx.validator.validate(obj.spec, og.namespace);
  if (!v.success) {
    const superseded = prev && prev.id !== workflowIdFor(og) ? prev.id : undefined;
    const actions: Action[] = [
      ...known,
      { type: 'reportInvalid', object: og, message: ctx.validator.format(v.issues), issues: v.issues, supersededWorkflowId: superseded },
    ];
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
