// What the Temporal Web UI shows of a rollout before opening its history: a one-line summary and
// details (markdown) fixed at the start — the object, the version, the zones in order and the
// strategy — so the list of workflows reads as a list of rollouts. Pure.
import { formatDuration } from '../api/duration';
import type { RolloutInput } from '../api/rollout-contract';

export interface WorkflowDescription {
  staticSummary: string;
  staticDetails: string;
}

export function workflowDescription(input: RolloutInput): WorkflowDescription {
  const { object: o, spec } = input;
  const st = spec.strategy;
  const zones = spec.zones.map((z) => `\`${z.name}\` (VMCluster \`${z.vmcluster.name}\`)`).join(', ');
  const lines = [
    `**VMDistributedCluster** \`${o.namespace}/${o.name}\`, generation ${o.generation} (uid \`${o.uid}\`)`,
    `**clusterVersion** \`${spec.clusterVersion}\`${spec.paused ? ' — paused' : ''}`,
    `**zones**, one at a time (${st.order === 'Declared' ? 'in this order' : 'shuffled'}): ${zones}`,
    `**reads** through VMAuth \`${spec.vmauth.name}\`; **writes** through VMAgent \`${spec.vmagent.name}\``,
    `**strategy** readDrainDelay ${formatDuration(st.readDrainDelayMs)}, queueDrainedFor ${formatDuration(st.queueDrainedForMs)}, ` +
      `pollInterval ${formatDuration(st.pollIntervalMs)}, zoneTimeout ${formatDuration(st.zoneTimeoutMs)}`,
  ];
  if (input.previousWorkflowIds.length) lines.push(`**supersedes** ${input.previousWorkflowIds.map((id) => `\`${id}\``).join(', ')}`);
  return {
    staticSummary: `${o.namespace}/${o.name} → ${spec.clusterVersion} (generation ${o.generation}, ${spec.zones.length} zones)`,
    staticDetails: lines.join('\n\n'),
  };
}
