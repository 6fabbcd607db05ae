// A fleet's parent workflow (spec.fleet, docs/operations.md#fleets-specfleet): the trigger hands it each
// member's generation (signal `member`, with signalWithStart); it starts them as child rollout
// workflows, one per region at a time, regions in parallel (workflows/fleet-queue.ts decides which),
// and ends once nothing is queued or running. Pause/resume hold back the next starts (running
// children go on, each with its own pause); cancel cancels the running children (each puts its
// zone back) and reports every queued member Cancelled, never started.
import {
  CancellationScope,
  ParentClosePolicy,
  condition,
  defineQuery,
  defineSignal,
  isCancellation,
  proxyLocalActivities,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { QUERY_FLEET_PROGRESS, SIGNAL_FLEET_MEMBER, type FleetInput, type FleetProgress, type FleetResult } from '../api/fleet-contract';
import { WORKFLOW_TYPE, type RolloutResult } from '../api/rollout-contract';
import { rolloutStartOptions } from '../api/rollout-start';
import type { RolloutActivities } from './activity-types';
import { FleetQueue, type Queued } from './fleet-queue';
import { pauseSignal, resumeSignal } from './rollout';

export const fleetMemberSignal = defineSignal<[unknown]>(SIGNAL_FLEET_MEMBER);
export const fleetProgressQuery = defineQuery<FleetProgress>(QUERY_FLEET_PROGRESS);

const { reportQueuedMember } = proxyLocalActivities<Pick<RolloutActivities, 'reportQueuedMember'>>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '1m' },
});

const now = () => new Date().toISOString();
const reason = (err: unknown) => (err as Error)?.message ?? String(err);

export async function fleetWorkflow(input: FleetInput): Promise<FleetResult> {
  const queue = new FleetQueue(input);
  let paused = false;
  setHandler(fleetMemberSignal, (req) => void queue.admit(req, now()));
  setHandler(pauseSignal, () => void (paused = true));
  setHandler(resumeSignal, () => void (paused = false));
  setHandler(fleetProgressQuery, () => ({ namespace: input.namespace, fleet: input.name, paused, ...queue.view() }));

  const children: Promise<void>[] = [];
  const run = async (q: Queued): Promise<void> => {
    const { request } = q;
    let outcome: string;
    try {
      const child = await startChild(WORKFLOW_TYPE, {
        workflowId: request.workflowId,
        args: [request.input],
        ...rolloutStartOptions(request.input, request.specHash),
        // A closed generation is never rolled out again; a fleet cancelled or terminated asks its children to cancel.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      });
      try {
        outcome = ((await child.result()) as RolloutResult).phase;
      } catch (err) {
        outcome = isCancellation(err) ? 'Cancelled' : `failed: ${reason(err)}`;
      }
    } catch (err) {
      // Not started: the id ran already (someone else started this generation), or the start was refused.
      outcome = isCancellation(err) ? 'Cancelled' : `not started: ${reason(err)}`;
    }
    queue.ended(q, outcome, now());
  };

  try {
    for (;;) {
      await condition(() => queue.idle() || (!paused && queue.startable().length > 0));
      if (queue.idle()) break;
      for (const q of queue.startable()) {
        queue.started(q, now());
        children.push(run(q));
      }
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // Cancelled: the children got the cancel with this scope; the queued members will never start,
    // and their status says so — those handed over while the children clean up too.
    const reportQueued = async () => {
      for (const q of queue.drain()) {
        await reportQueuedMember({
          object: q.request.input.object,
          workflowId: q.workflowId,
          message: `not started: fleet ${input.name} was cancelled (${workflowInfo().workflowId}) before its turn in region ${q.region}: this generation took no zone out of reads. Edit the object to roll it out again.`,
        });
      }
    };
    await CancellationScope.nonCancellable(async () => {
      await reportQueued();
      await Promise.all(children);
      await reportQueued();
    });
    throw err;
  }
  // Idle: every child has ended. Nothing awaited from here on, so no request can slip in unstarted.
  const { ended, refused } = queue.view();
  return { ended, refused };
}
