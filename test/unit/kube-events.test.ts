// The Event body both components raise (kube/events.ts): who raised it, about which object, and a
// message that never carries credentials and fits the API server's limit.
import { eventBody } from '../../kube/events';

const obj = { metadata: { name: 'vm-global', namespace: 'monitoring', uid: 'u-1', resourceVersion: '42' } };
const now = new Date('2026-12-01T00:00:00Z');

test('the worker and the trigger are told apart; the object is the VMDistributedCluster', () => {
  const e = eventBody(obj, { component: 'worker', instance: 'vmrollout-worker-0' }, 'Normal', 'ZoneLeftReads', 'zone az-a left', now);
  expect(e).toMatchObject({
    metadata: { generateName: 'vm-global.', namespace: 'monitoring' },
    involvedObject: { apiVersion: 'vmrollout.io/v1alpha1', kind: 'VMDistributedCluster', name: 'vm-global', namespace: 'monitoring', uid: 'u-1' },
    type: 'Normal',
    reason: 'ZoneLeftReads',
    source: { component: 'vmrollout-worker' },
    reportingComponent: 'vmrollout.io/worker',
    reportingInstance: 'vmrollout-worker-0',
  });
  expect(eventBody(obj, { component: 'trigger', instance: 't' }, 'Warning', 'InvalidSpec', 'x', now).reportingComponent).toBe('vmrollout.io/trigger');
});

test('credentials in URLs are redacted and a long message is cut to 1000 characters', () => {
  const e = eventBody(
    obj,
    { component: 'worker', instance: 'w' },
    'Warning',
    'ZoneFailed',
    `remote write https://user:s3cret@vminsert:8480/ failed ${'x'.repeat(2000)}`,
    now,
  );
  expect(e.message).not.toContain('s3cret');
  expect(e.message!.length).toBe(1000);
});
