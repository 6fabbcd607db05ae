// What a status write tells spec.notifications (activities/notify/messages.ts): which entries are
// read (others' input: only the schema's shape), when the rollout's start is told, what each entry
// wants, and the requests a Slack-compatible webhook and Grafana's annotation API get.
import { grafanaRequest, notificationsOf, slackRequest, started, wanted, type Told } from '../../activities/notify/messages';

const object = { namespace: 'monitoring', name: 'vm-global', uid: 'u', generation: 4 };
const told = (reason: string, type: Told['type'] = 'Normal', message = `zone az-b ${reason}`): Told => ({ reason, type, message });

test('only entries of the schema are read, at most 4; a spec without notifications has none', () => {
  const ok = { type: 'Slack', secretName: 'slack' };
  expect(notificationsOf({ notifications: [ok, { type: 'Teams', secretName: 'x' }, { type: 'Slack', secretName: 'UPPER' }, 'x', ok, ok] })).toEqual({
    notifications: [ok],
    refused: 3,
  });
  for (const spec of [undefined, null, 'x', [], {}, { notifications: { type: 'Slack' } }])
    expect(notificationsOf(spec)).toEqual({ notifications: [], refused: 0 });
});

test('the start is told once: the first write that moves the phase from an ended one (or none) to a running one', () => {
  expect(started({ phase: 'Succeeded' }, { phase: 'Pending', observedGeneration: 5 }, 'v1.151.0-cluster')).toEqual({
    reason: 'RolloutStarted',
    type: 'Normal',
    message: 'rollout of generation 5 to clusterVersion v1.151.0-cluster started',
  });
  expect(started(undefined, { phase: 'Progressing', observedGeneration: 1 }, undefined)?.message).toBe('rollout of generation 1 started');
  expect(started({ phase: 'Pending' }, { phase: 'Progressing' }, 'v')).toBeUndefined();
  expect(started({ phase: 'Paused' }, { phase: 'Progressing' }, 'v')).toBeUndefined();
  expect(started({ phase: 'Progressing' }, { phase: 'Succeeded' }, 'v')).toBeUndefined();
});

test('without `on`: started, zone out and in, awaiting approval, failed and the ends; with it, exactly those', () => {
  const all = [
    'RolloutStarted',
    'ZoneLeftReads',
    'ZoneUpgraded',
    'ZoneRejoined',
    'ZoneFailed',
    'RolloutAwaitingApproval',
    'RolloutSucceeded',
    'RolloutPaused',
  ].map((r) => told(r));
  expect(wanted({ type: 'Slack', secretName: 's' }, all).map((t) => t.reason)).toEqual([
    'RolloutStarted',
    'ZoneLeftReads',
    'ZoneRejoined',
    'ZoneFailed',
    'RolloutAwaitingApproval',
    'RolloutSucceeded',
  ]);
  expect(wanted({ type: 'Slack', secretName: 's', on: ['ZoneUpgraded', 'RolloutPaused'] }, all).map((t) => t.reason)).toEqual([
    'ZoneUpgraded',
    'RolloutPaused',
  ]);
});

test('the requests: Slack {text} (a warning marked), Grafana POST /api/annotations with the token, tagged by object, reason and zone', () => {
  expect(JSON.parse(slackRequest(object, told('ZoneFailed', 'Warning', 'zone az-b failed')).body)).toEqual({
    text: ':warning: *monitoring/vm-global* ZoneFailed: zone az-b failed',
  });
  const g = grafanaRequest(object, told('ZoneLeftReads'), 'glsa_x', 1_700_000_000_000);
  expect(g.path).toBe('/api/annotations');
  expect(g.headers.authorization).toBe('Bearer glsa_x');
  expect(JSON.parse(g.body)).toEqual({
    time: 1_700_000_000_000,
    tags: ['vmrollout', 'monitoring/vm-global', 'ZoneLeftReads', 'zone=az-b'],
    text: 'monitoring/vm-global ZoneLeftReads: zone az-b ZoneLeftReads',
  });
  expect(JSON.parse(grafanaRequest(object, told('RolloutSucceeded', 'Normal', 'all zones at v2'), 't', 1).body).tags).toEqual([
    'vmrollout',
    'monitoring/vm-global',
    'RolloutSucceeded',
  ]);
});
