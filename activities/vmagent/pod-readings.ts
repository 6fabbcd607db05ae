// One reading of every vmagent pod's page for a zone's queues, for a check that must see them all:
// a page that cannot be read or judged (or no pod at all) is a retryable failure, so the step's
// retries read again within zoneTimeout, and nothing is decided on part of the pods.
import { ApplicationFailure } from '@temporalio/common';
import { redactSecrets } from '../../api/redact';
import type { QueueTarget } from '../../workflows/activity-types';
import type { QueueReader } from './queue';
import type { RemoteWriteQueue } from './url';

/** The retryable failure type of a reading that cannot be used yet. */
export const VMAGENT_UNREADABLE = 'VmagentUnreadable';

export type PageReading<T> = { ok: true; value: T } | { ok: false; message: string };

/** Each pod's value read from its page by `read`, or a retryable failure saying `what` could not be read, and why. */
export async function readEveryPod<T>(
  queues: Pick<QueueReader, 'pages'>,
  target: QueueTarget,
  what: string,
  read: (text: string, queues: RemoteWriteQueue[]) => PageReading<T>,
  signal?: AbortSignal,
): Promise<Array<{ pod: string; value: T }>> {
  const unreadable = (message: string) => ApplicationFailure.retryable(redactSecrets(`cannot read ${what}: ${message}`).slice(0, 1000), VMAGENT_UNREADABLE);
  const found = await queues.pages(target, signal);
  if (!found.ok) throw unreadable(found.problem);
  if (found.pages.length === 0) throw unreadable('no vmagent pods found (EndpointSlices list no endpoints)');
  const out: Array<{ pod: string; value: T }> = [];
  const problems: string[] = [];
  for (const page of found.pages) {
    const r = page.ok ? read(page.text, page.queues) : page;
    if (r.ok) out.push({ pod: page.pod, value: r.value });
    else problems.push(`vmagent pod ${page.pod}: ${r.message}`);
  }
  if (problems.length > 0) throw unreadable(`${problems.slice(0, 3).join('; ')}${problems.length > 3 ? '; …' : ''}`);
  return out;
}
