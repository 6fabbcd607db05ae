// How the queue wait shows its progress while it waits (docs/design.md#the-six-steps-of-a-zone,
// step 5): every report.everyMs it writes the latest sample into the zone's status message, and
// sends it to its own workflow as a signal, so the progress query shows it too: the query runs
// workflow code, which sees only what the history holds (one signal event per report, not per poll).
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { SIGNAL_QUEUE_SAMPLE, type DrainHeartbeat, type LastQueueSample } from '../../api/rollout-contract';
import type { ObjectGeneration, VMDistributedClusterStatus } from '../../api/types';
import type { QueueReport } from '../../workflows/activity-types';
import { queueReportStatus } from '../../workflows/status';

export interface QueueReporter {
  everyMs: number;
  write(streak: DrainHeartbeat): Promise<void>;
}

/** The report of one queue wait: the status write, then the signal to the calling workflow run. */
export function queueReporter(
  report: QueueReport,
  queueDrainedForMs: number,
  deps: { writeStatus(input: { object: ObjectGeneration; status: VMDistributedClusterStatus }): Promise<unknown>; client: Client },
): QueueReporter {
  const wf = Context.current().info.workflowExecution;
  return {
    everyMs: report.everyMs,
    write: async (streak) => {
      await deps.writeStatus({ object: report.object, status: queueReportStatus(report, streak, queueDrainedForMs) });
      const sample: LastQueueSample = { ...streak.last, zone: report.zone, ...(streak.emptySince ? { emptySince: streak.emptySince } : {}) };
      if (!wf) return;
      try {
        await deps.client.workflow.getHandle(wf.workflowId, wf.runId).signal(SIGNAL_QUEUE_SAMPLE, sample);
      } catch (err) {
        // The status already shows the sample; a workflow that cannot take it (ended, unreachable
        // server) gets the next one, and the sample the wait returns.
        Context.current().log.warn('queue sample not sent to the workflow', { workflowId: wf.workflowId, error: String(err) });
      }
    },
  };
}
