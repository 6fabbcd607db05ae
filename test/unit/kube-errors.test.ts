// Which API answers fail a step at once (kube/errors.ts refusedForGood), and the exception the chaos
// campaign found: a kube-apiserver that has just restarted answers 403 while its authorizer's caches
// fill, so a 403 is retried before it counts as for good.
import { MockActivityEnvironment } from '@temporalio/testing';
import { FORBIDDEN_FOR_GOOD_FROM_ATTEMPT, refusedForGood } from '../../kube/errors';
import { activityAttempt } from '../../activities/activity-context';
import { isRejection } from '../../activities/status/write-status';

test('4xx answers a retry cannot change are refused for good; 401, 408, 409, 429, 5xx and transport errors are not', () => {
  for (const code of [400, 403, 404, 405, 413, 422]) expect([code, refusedForGood({ code })]).toEqual([code, true]);
  for (const code of [401, 408, 409, 429, 500, 503]) expect([code, refusedForGood({ code })]).toEqual([code, false]);
  expect(refusedForGood(new Error('ECONNRESET'))).toBe(false);
});

test('a 403 is retried by the first attempts of an activity and refused for good from attempt 5 on; other codes do not wait', () => {
  expect(FORBIDDEN_FOR_GOOD_FROM_ATTEMPT).toBe(5);
  for (let attempt = 1; attempt < 5; attempt++) {
    expect([attempt, refusedForGood({ code: 403 }, attempt)]).toEqual([attempt, false]);
    expect([attempt, isRejection({ code: 403 }, attempt)]).toEqual([attempt, false]);
    expect([attempt, refusedForGood({ code: 422 }, attempt)]).toEqual([attempt, true]);
  }
  expect(refusedForGood({ code: 403 }, 5)).toBe(true);
  expect(isRejection({ code: 403 }, 5)).toBe(true);
});

test("an activity's attempt is what decides; outside an activity retries are over", async () => {
  expect(activityAttempt()).toBe(Infinity);
  expect(refusedForGood({ code: 403 }, activityAttempt())).toBe(true);
  const first = new MockActivityEnvironment({ attempt: 1 });
  expect(await first.run(async () => refusedForGood({ code: 403 }, activityAttempt()))).toBe(false);
  const fifth = new MockActivityEnvironment({ attempt: 5 });
  expect(await fifth.run(async () => refusedForGood({ code: 403 }, activityAttempt()))).toBe(true);
});
