// The contract between the trigger (a Temporal client) and the rollout workflow: names, ids,
// search attributes and the workflow input. Plain values only, so both sides can import it.
import { defineSearchAttributeKey } from '@temporalio/common';
import type { NormalizedSpec, ObjectGeneration } from './types';

export const WORKFLOW_TYPE = 'rolloutWorkflow';
export const DEFAULT_TASK_QUEUE = 'vmrollout';

export const SIGNAL_PAUSE = 'pause';
export const SIGNAL_RESUME = 'resume';
/** Sent to a running workflow when a newer generation of its object exists. */
export const SIGNAL_SUPERSEDE = 'supersede';
export const QUERY_PROGRESS = 'progress';

export interface SupersedeSignal {
  generation: number;
}

export const SA_NAMESPACE = defineSearchAttributeKey('VmdcNamespace', 'KEYWORD');
export const SA_NAME = defineSearchAttributeKey('VmdcName', 'KEYWORD');
export const SA_GENERATION = defineSearchAttributeKey('VmdcGeneration', 'INT');
export const SA_CLUSTER_VERSION = defineSearchAttributeKey('VmdcClusterVersion', 'KEYWORD');
export const SEARCH_ATTRIBUTE_KEYS = [SA_NAMESPACE, SA_NAME, SA_GENERATION, SA_CLUSTER_VERSION];

/** The part of an object's uid its workflow ids carry (the only place that says how long it is). */
export function uidPrefix(uid: string): string {
  return uid.slice(0, 8);
}

/** Readable, and unique across delete-and-recreate thanks to the uid prefix. */
export function workflowIdFor(obj: ObjectGeneration): string {
  return `vmdc/${obj.namespace}/${obj.name}/g${obj.generation}-${uidPrefix(obj.uid)}`;
}

/** The parts of an id made by workflowIdFor, or undefined for any other id. */
export function parseWorkflowId(id: string): { namespace: string; name: string; generation: number; uidPrefix: string } | undefined {
  const m = /^vmdc\/([^/]+)\/([^/]+)\/g(\d+)-([^/]+)$/.exec(id);
  if (!m) return undefined;
  return { namespace: m[1]!, name: m[2]!, generation: Number(m[3]), uidPrefix: m[4]! };
}

/** A string literal for a Temporal visibility query. */
export function visibilityString(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** Running rollout workflows, of one object when `object` is given. */
export function runningWorkflowsQuery(object?: { namespace: string; name: string }): string {
  const q = `WorkflowType = ${visibilityString(WORKFLOW_TYPE)} AND ExecutionStatus = 'Running'`;
  return object ? `${q} AND ${SA_NAMESPACE.name} = ${visibilityString(object.namespace)} AND ${SA_NAME.name} = ${visibilityString(object.name)}` : q;
}

export interface RolloutInput {
  object: ObjectGeneration;
  spec: NormalizedSpec;
  /**
   * Workflow ids the trigger knows may still act on this object (e.g. `status.workflow.id`).
   * The workflow also finds running ones through visibility; it supersedes and awaits them all
   * before it acts.
   */
  previousWorkflowIds: string[];
}
