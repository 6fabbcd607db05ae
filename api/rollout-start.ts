// How a rollout workflow is started, by the trigger or as a fleet's child: its search attributes,
// memo, priority, and what the Temporal Web UI shows of it before opening its history (a one-line
// summary and markdown details fixed at the start, so the list of workflows reads as a list of
// rollouts). Pure: the trigger and the fleet workflow both use it.
import { formatDuration } from './duration';
import { fleetWorkflowId } from './fleet-contract';
import { rolloutPriority, SA_CLUSTER_VERSION, SA_GENERATION, SA_NAME, SA_NAMESPACE, type RolloutInput } from './rollout-contract';
import { zoneStorage } from './storage';

/** The memo key of the spec hash (api/spec-hash.ts) a rollout was started with: what a paused-only generation is compared with. */
export const MEMO_SPEC_HASH = 'vmrolloutSpecHash';

export interface WorkflowDescription {
  staticSummary: string;
  staticDetails: string;
}

export function workflowDescription(input: RolloutInput): WorkflowDescription {
  const { object: o, spec } = input;
  const st = spec.strategy;
  const zones = spec.zones
    .map((z) => {
      const { kind, object } = zoneStorage(z);
      return `\`${z.name}\` (${kind} \`${object.name}\`)`;
    })
    .join(', ');
  const lines = [
    `**VMDistributedCluster** \`${o.namespace}/${o.name}\`, generation ${o.generation} (uid \`${o.uid}\`)`,
    `**clusterVersion** \`${spec.clusterVersion}\`${spec.paused ? ' — paused' : ''}`,
    `**zones**, one at a time (${st.order === 'Declared' ? 'in this order' : 'shuffled'}): ${zones}`,
    `**reads** through VMAuth \`${spec.vmauth.name}\`; **writes** through VMAgent \`${spec.vmagent.name}\``,
    `**strategy** readDrainDelay ${formatDuration(st.readDrainDelayMs)}, queueDrainedFor ${formatDuration(st.queueDrainedForMs)}, ` +
      `pollInterval ${formatDuration(st.pollIntervalMs)}, zoneTimeout ${formatDuration(st.zoneTimeoutMs)}`,
  ];
  if (spec.fleet)
    lines.push(
      `**fleet** \`${spec.fleet.name}\`, region \`${spec.fleet.region}\`: a child of \`${fleetWorkflowId(o.namespace, spec.fleet.name)}\`, one member per region at a time`,
    );
  if (input.previousWorkflowIds.length) lines.push(`**supersedes** ${input.previousWorkflowIds.map((id) => `\`${id}\``).join(', ')}`);
  return {
    staticSummary: `${o.namespace}/${o.name} → ${spec.clusterVersion} (generation ${o.generation}, ${spec.zones.length} zones)`,
    staticDetails: lines.join('\n\n'),
  };
}

/** The options every rollout workflow starts with, whoever starts it. */
export function rolloutStartOptions(input: RolloutInput, specHash: string) {
  const og = input.object;
  return {
    typedSearchAttributes: [
      { key: SA_NAMESPACE, value: og.namespace },
      { key: SA_NAME, value: og.name },
      { key: SA_GENERATION, value: og.generation },
      { key: SA_CLUSTER_VERSION, value: input.spec.clusterVersion },
    ],
    memo: { [MEMO_SPEC_HASH]: specHash },
    priority: rolloutPriority(og.namespace),
    ...workflowDescription(input),
  };
}
