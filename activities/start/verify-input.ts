// A workflow's input is a claim, not a fact: anyone who may start workflows on the task queue could
// name any object and any spec, and the worker acts with its own rights. So before a rollout does
// anything (supersede another workflow, write a status, touch an object) the worker reads the
// object the input names and checks the claim against it: same uid, the workflow id the trigger
// gives that generation, and the same rollout (spec hash) as the object asks for now or, for an
// older generation, a rollout the object no longer asks for (stale: do nothing). The spec must also
// be one the trust policy allows in that namespace.
import { parseWorkflowId, workflowIdFor, type RolloutInput } from '../../api/rollout-contract';
import { formatIssues, validateSpec } from '../../api/validate';
import { specHash } from '../../api/spec-hash';
import { trustIssues, type TrustPolicy } from '../../api/trust-policy';
import type { InputVerdict } from '../../workflows/activity-types';

export interface LiveObject {
  metadata?: { uid?: unknown; generation?: unknown };
  spec?: unknown;
}

export type VerifyInput = Pick<RolloutInput, 'object' | 'spec' | 'previousWorkflowIds'>;

/** Pure: the verdict on `input` (started as workflow `workflowId`) given the object as it is now. */
export function decideInput(input: VerifyInput, workflowId: string, live: LiveObject | undefined, policy: TrustPolicy): InputVerdict {
  const { object } = input;
  const refused = (why: string): InputVerdict => ({ verdict: 'refused', message: `workflow input refused, nothing done: ${why}` });
  const name = `${object.namespace}/${object.name}`;
  if (workflowId !== workflowIdFor(object))
    return refused(`workflow id ${JSON.stringify(workflowId)} is not the id of ${name} generation ${object.generation} (${workflowIdFor(object)})`);
  const foreign = input.previousWorkflowIds.find((id) => {
    const p = parseWorkflowId(id);
    return !p || p.namespace !== object.namespace || p.name !== object.name;
  });
  if (foreign !== undefined) return refused(`previous workflow ${JSON.stringify(foreign)} is not a rollout of ${name}`);
  const policyIssues = trustIssues(object.namespace, input.spec, policy);
  if (policyIssues.length) return refused(formatIssues(policyIssues));
  if (!live) return refused(`VMDistributedCluster ${name} does not exist`);
  if (live.metadata?.uid !== object.uid) return refused(`VMDistributedCluster ${name} has uid ${String(live.metadata?.uid)}, the input names ${object.uid}`);
  const generation = live.metadata?.generation;
  if (typeof generation !== 'number' || generation < object.generation) {
    return refused(`VMDistributedCluster ${name} is at generation ${String(generation)}, the input names ${object.generation}`);
  }
  // The policy was checked on the input: only a spec equal to it is accepted.
  const current = validateSpec(live.spec);
  if (current.success && specHash(current.spec) === specHash(input.spec)) return { verdict: 'ok' };
  if (generation > object.generation)
    return { verdict: 'stale', generation, message: `${name} is at generation ${generation} and asks for another rollout; nothing done` };
  return refused(
    current.success ? `the spec differs from ${name}'s at generation ${generation}` : `${name}'s spec is not valid: ${formatIssues(current.issues)}`,
  );
}
