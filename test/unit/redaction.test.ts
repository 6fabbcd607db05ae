// A remoteWriteURL may carry credentials: every place that displays text built from one shows them
// redacted (status messages, failure messages, logs, Events), and matching ignores spelling.
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { describeError } from '../../kube/errors';
import { findZoneQueues } from '../../activities/vmagent/url';
import { createLogger } from '../../trigger/log';
import { failureMessage } from '../../workflows/failures';

const SECRET_URL = 'https://writer:hunter2@lb.example:443/insert/0/prometheus/api/v1/write';

test('the status message of a zone whose remote write is not found shows the URL without credentials', async () => {
  const r = await findZoneQueues([{ url: 'http://other:8480/write' }], { namespace: 'ns', vmclusterName: 'vm-a', remoteWriteURL: SECRET_URL });
  expect(r.ok).toBe(false);
  expect(JSON.stringify(r)).not.toContain('hunter2');
  expect(JSON.stringify(r)).toContain('***@lb.example');
});

test('the zone remote write is found whatever the spelling of host case and default port', async () => {
  const r = await findZoneQueues([{ url: 'https://writer:hunter2@LB.example/insert/0/prometheus/api/v1/write' }], {
    namespace: 'ns',
    vmclusterName: 'vm-a',
    remoteWriteURL: SECRET_URL,
  });
  expect(r.ok).toBe(true);
});

test('errors and step failures never show credentials', () => {
  const apiError = Object.assign(new Error('x'), { code: 422, body: JSON.stringify({ message: `spec.remoteWrite[0].url: Invalid value: "${SECRET_URL}"` }) });
  expect(describeError(apiError)).not.toContain('hunter2');
  const failure = new ActivityFailure(
    'activity failed',
    'waitQueueDrained',
    '1',
    RetryState.NON_RETRYABLE_FAILURE,
    undefined,
    ApplicationFailure.nonRetryable(`no entry with url ${SECRET_URL}`, 'X'),
  );
  expect(failureMessage(failure)).toMatch(/\*\*\*@lb\.example/);
  expect(failureMessage(failure)).not.toContain('hunter2');
});

test("the trigger's log lines never show credentials", () => {
  const lines: string[] = [];
  createLogger('info', (l) => lines.push(l)).warn(`invalid: ${SECRET_URL}`, { url: SECRET_URL });
  expect(lines.join('\n')).not.toContain('hunter2');
  expect(lines.join('\n')).toContain('***@lb.example');
});
