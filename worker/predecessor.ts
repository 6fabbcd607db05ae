// A worker killed mid-activity (SIGKILL, OOM) leaves its attempts "started" on the Temporal server,
// which only notices at their heartbeat timeout (30 s and more): that long, a zone stays out of reads
// while nobody waits for it. A restarted worker of the same instance (the same pod) knows better: at
// its start it hands back what its predecessor held — a started attempt failed as retryable at once,
// a cancel-requested one reported cancelled (the process that would have acknowledged is gone) — and
// resets those workflows' sticky queues, which still name the dead worker's.
import { randomBytes } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

const PendingState = temporal.api.enums.v1.PendingActivityState;

/** The worker's Temporal identity: `<instance>/<boot id>`, so that a later boot of the same instance recognises its predecessors. */
export function workerIdentity(instance: string, boot = randomBytes(4).toString('hex')): string {
  return `${instance}/${boot}`;
}

/** An earlier boot of this worker's instance (not this one, not another instance's). */
export function isPredecessor(identity: string | null | undefined, self: string): boolean {
  const instance = self.slice(0, self.lastIndexOf('/') + 1);
  return !!identity && identity !== self && identity.startsWith(instance) && !identity.slice(instance.length).includes('/');
}

export interface PendingAttempt {
  activityId: string;
  activityType: string;
  state: number;
  lastWorkerIdentity: string;
}

export interface RunningWorkflow {
  workflowId: string;
  runId: string;
  pending: PendingAttempt[];
}

export interface Release {
  workflowId: string;
  runId: string;
  activityId: string;
  activityType: string;
  /** fail: a started attempt, retried at once; cancelled: its cancellation was asked for and is now complete. */
  action: 'fail' | 'cancelled';
}

/** What a worker starting as `self` hands back for its predecessors. */
export function predecessorReleases(workflows: readonly RunningWorkflow[], self: string): Release[] {
  const out: Release[] = [];
  for (const wf of workflows) {
    for (const p of wf.pending) {
      if (!isPredecessor(p.lastWorkerIdentity, self)) continue;
      const action =
        p.state === PendingState.PENDING_ACTIVITY_STATE_STARTED
          ? 'fail'
          : p.state === PendingState.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED
            ? 'cancelled'
            : undefined;
      if (action) out.push({ workflowId: wf.workflowId, runId: wf.runId, activityId: p.activityId, activityType: p.activityType, action });
    }
  }
  return out;
}

/** The failure a predecessor's attempt ends with: retryable, retried without the policy's backoff. */
export const PREDECESSOR_GONE = 'WorkerRestarted';

export interface ReleaseResult {
  workflowsRunning: number;
  released: Release[];
  errors: string[];
}

/**
 * Finds the running workflows of `taskQueue` and releases what an earlier boot of this instance held.
 * Best effort: an attempt it cannot release still ends at its heartbeat timeout, as without it.
 */
export async function releasePredecessors(client: Client, taskQueue: string, self: string): Promise<ReleaseResult> {
  const workflows: RunningWorkflow[] = [];
  const errors: string[] = [];
  const query = `TaskQueue = '${taskQueue.replace(/'/g, "\\'")}' AND ExecutionStatus = 'Running'`;
  for await (const wf of client.workflow.list({ query })) {
    try {
      const { raw } = await client.workflow.getHandle(wf.workflowId, wf.runId).describe();
      workflows.push({
        workflowId: wf.workflowId,
        runId: wf.runId,
        pending: (raw.pendingActivities ?? []).map((p) => ({
          activityId: p.activityId ?? '',
          activityType: p.activityType?.name ?? '',
          state: p.state ?? 0,
          lastWorkerIdentity: p.lastWorkerIdentity ?? '',
        })),
      });
    } catch (err) {
      errors.push(`describe ${wf.workflowId}: ${String(err)}`);
    }
  }
  const released: Release[] = [];
  const reset = new Set<string>();
  for (const r of predecessorReleases(workflows, self)) {
    try {
      // First the sticky queue: the workflow task this release causes must not wait for the dead worker's.
      if (!reset.has(r.runId)) {
        await client.workflowService.resetStickyTaskQueue({ namespace: client.options.namespace, execution: { workflowId: r.workflowId, runId: r.runId } });
        reset.add(r.runId);
      }
      const id = { workflowId: r.workflowId, runId: r.runId, activityId: r.activityId };
      if (r.action === 'fail') {
        await client.activity.fail(
          id,
          ApplicationFailure.create({
            type: PREDECESSOR_GONE,
            message: `the worker that ran this attempt (${self.slice(0, self.lastIndexOf('/'))}) restarted`,
            nextRetryDelay: '100ms',
          }),
        );
      } else {
        await client.activity.reportCancellation(id);
      }
      released.push(r);
    } catch (err) {
      // Already completed, timed out or retried meanwhile: nothing left to release.
      errors.push(`${r.action} ${r.workflowId} ${r.activityType}#${r.activityId}: ${String(err)}`);
    }
  }
  return { workflowsRunning: workflows.length, released, errors };
}
