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

/** Readable, and unique across delete-and-recreate thanks to the uid prefix. */
export function workflowIdFor(obj: ObjectGeneration): string {
  return `vmdc/${obj.namespace}/${obj.name}/g${obj.generation}-${obj.uid.slice(0, 8)}`;
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
