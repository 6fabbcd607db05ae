// checkQueueHeadroom: one reading of every vmagent pod's page for the zone's queues, judged by
// headroom.ts. A reading that cannot be judged (a page unreadable, a pod just started, no pods) is a
// retryable failure: the step's retries read again, within zoneTimeout, and the zone stays in reads.
import { ApplicationFailure } from '@temporalio/common';
import { redactSecrets } from '../../api/redact';
import type { QueueHeadroom } from '../../api/rollout-contract';
import type { QueueTarget } from '../../workflows/activity-types';
import { judgeHeadroom, readHeadroom, type PodRoom } from './headroom';
import type { QueueReader } from './queue';

/** The retryable failure type of a reading that cannot be judged yet. */
export const HEADROOM_UNREADABLE = 'HeadroomUnreadable';

const unreadable = (message: string) =>
  ApplicationFailure.retryable(redactSecrets(`cannot predict the vmagent queue headroom: ${message}`).slice(0, 1000), HEADROOM_UNREADABLE);

export async function checkQueueHeadroom(
  queues: Pick<QueueReader, 'pages'>,
  input: QueueTarget & { horizonMs: number },
  signal?: AbortSignal,
  now: () => Date = () => new Date(),
): Promise<QueueHeadroom> {
  const { horizonMs, ...target } = input;
  const found = await queues.pages(target, signal);
  if (!found.ok) throw unreadable(found.problem);
  if (found.pages.length === 0) throw unreadable('no vmagent pods found (EndpointSlices list no endpoints)');
  const pods: PodRoom[] = [];
  const problems: string[] = [];
  for (const page of found.pages) {
    const r = page.ok ? readHeadroom(page.text, found.queues) : page;
    if (r.ok) pods.push({ pod: page.pod, queues: r.queues });
    else problems.push(`vmagent pod ${page.pod}: ${r.message}`);
  }
  if (problems.length > 0) throw unreadable(`${problems.slice(0, 3).join('; ')}${problems.length > 3 ? '; …' : ''}`);
  const verdict = judgeHeadroom(pods, horizonMs, now());
  return { ...verdict, message: redactSecrets(verdict.message) };
}
