// Before a zone leaves reads, the zones that will carry them must be healthy: their VMCluster
// operational at its generation, and their vmagent backlog empty (a lagging carrier serves stale reads).
import type { QueueSample } from '../../api/rollout-contract';
import type { CarriersInput, QueueTarget } from '../../workflows/activity-types';
import type { PollContext } from '../activity-context';
import { sleepHeartbeating } from '../activity-context';
import { vmKind, type KubeObjects } from '../../kube/custom-objects';
import { objectState } from '../objects/object-state';
import { operationalVerdict } from '../objects/wait-operational';
import { kindOf } from '../../api/storage';

/** Pure: why a carrier cannot carry reads yet (undefined: it can). */
export function carrierProblem(zone: string, verdict: ReturnType<typeof operationalVerdict>, sample: QueueSample | undefined): string | undefined {
  if (!verdict.done) return `zone ${zone}: VMCluster not operational (${verdict.message})`;
  if (sample && !sample.drained) return `zone ${zone}: vmagent backlog not empty (${sample.message})`;
  return undefined;
}

export async function waitCarriersReady(
  kube: KubeObjects,
  sample: (t: QueueTarget) => Promise<QueueSample>,
  ctx: PollContext,
  input: CarriersInput,
): Promise<{ message: string }> {
  for (;;) {
    const problems: string[] = [];
    for (const c of input.carriers) {
      const state = objectState(await kube.get(vmKind(kindOf({ kind: c.storageKind })), input.namespace, c.vmcluster));
      const verdict = operationalVerdict(state, state.generation ?? 0);
      const p = carrierProblem(c.zone, verdict, verdict.done ? await sample(c.queue) : undefined);
      if (p) problems.push(p);
    }
    if (problems.length === 0) {
      const zones = input.carriers.map((c) => c.zone);
      return {
        message: zones.length
          ? `zones carrying the reads are operational with empty vmagent backlogs: ${zones.join(', ')}`
          : 'no other zone carries these reads',
      };
    }
    const details = { waitingFor: problems.join('; ') };
    ctx.heartbeat(details);
    await sleepHeartbeating(ctx, Math.max(100, input.pollIntervalMs), details);
  }
}
