/**
 * spec.notifications against a real kube-apiserver: the status write (writeStatus, as the rollout's
 * activity calls it) tells a Slack-compatible webhook and Grafana's annotation API what it raised as
 * Events, and the rollout's start, reading each receiver's URL (and Grafana's token) from the Secret
 * the spec names. The receivers are HTTP servers of this test that record what they get. A receiver
 * that cannot be told is a Warning Event NotificationFailed that never shows its URL.
 */
import * as http from 'node:http';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { statusClient, writeStatus } from '../../activities/status/write-status';
import { Notifier } from '../../activities/notify/send';
import { API_VERSION, GROUP, KIND, PLURAL, VERSION } from '../../api/constants';
import type { VMDistributedClusterStatus } from '../../api/types';
import { eventCreator } from '../../kube/events';
import { noopMetrics } from '../../activities/metrics';
import { installCRDs, startKube, type KubeCluster } from '../infra/harness/kube';

const VMDC_CRD = path.resolve(__dirname, '..', '..', 'charts', 'vmrollout', 'crds', 'vmdistributedclusters.vmrollout.io.yaml');

jest.setTimeout(120_000);

let kube: KubeCluster;
let core: k8s.CoreV1Api;
let custom: k8s.CustomObjectsApi;

interface Received {
  path: string;
  authorization?: string;
  body: { text?: string; time?: number; tags?: string[] };
}
let received: Received[] = [];
let answer = 200;
let server: http.Server;
let base = '';

beforeAll(async () => {
  kube = await startKube();
  await installCRDs(kube.kubeConfig, [VMDC_CRD]);
  core = kube.kubeConfig.makeApiClient(k8s.CoreV1Api);
  custom = kube.kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ path: req.url ?? '', authorization: req.headers.authorization, body: JSON.parse(body) as Received['body'] });
      res.writeHead(answer, answer === 302 ? { location: 'http://127.0.0.1:1/elsewhere' } : {});
      res.end(answer === 200 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  server?.close();
  await kube?.stop();
});

beforeEach(() => {
  received = [];
  answer = 200;
});

let n = 0;
async function setUp(notifications: unknown[], secrets: Record<string, Record<string, string>>) {
  const ns = `notify-${++n}`;
  await core.createNamespace({ body: { metadata: { name: ns } } });
  for (const [name, data] of Object.entries(secrets)) await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name }, stringData: data } });
  const spec = {
    clusterVersion: 'v1.151.0-cluster',
    zones: [
      { name: 'az-a', vmcluster: { name: 'vm-az-a' } },
      { name: 'az-b', vmcluster: { name: 'vm-az-b' } },
    ],
    vmauth: { name: 'g' },
    vmagent: { name: 'g' },
    notifications,
  };
  const created = (await custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: ns,
    plural: PLURAL,
    body: { apiVersion: API_VERSION, kind: KIND, metadata: { name: 'dc' }, spec },
  })) as {
    metadata: { uid: string; generation: number };
  };
  const object = { namespace: ns, name: 'dc', uid: created.metadata.uid, generation: created.metadata.generation };
  const createEvent = eventCreator(kube.kubeConfig, { component: 'worker', instance: 'test' }, 5_000);
  const results: Array<[string, string]> = [];
  const notifier = new Notifier({ kubeConfig: kube.kubeConfig, metrics: { ...noopMetrics, notification: (t, r) => results.push([t, r]) }, createEvent });
  const write = (status: VMDistributedClusterStatus) => writeStatus(statusClient(kube.kubeConfig), { object, status }, { notifier, createEvent });
  const warnings = async () => {
    const list = await core.listNamespacedEvent({ namespace: ns });
    return list.items.filter((e) => e.reason === 'NotificationFailed').map((e) => e.message ?? '');
  };
  return { ns, write, results, warnings };
}

const zones = (a: string, b = 'Pending') =>
  [
    { name: 'az-a', phase: a },
    { name: 'az-b', phase: b },
  ] as VMDistributedClusterStatus['zones'];

describe('spec.notifications', () => {
  it('a Slack webhook and Grafana annotations are told the start, a zone out and back, and the end; each once', async () => {
    const s = await setUp(
      [
        { type: 'Slack', secretName: 'slack' },
        { type: 'GrafanaAnnotation', secretName: 'grafana', on: ['ZoneLeftReads', 'RolloutSucceeded'] },
      ],
      { slack: { url: `${base}/hooks/T000/B000/XXXX` }, grafana: { url: `${base}/grafana/`, token: 'glsa_secret' } },
    );
    await s.write({ observedGeneration: 1, phase: 'Pending', message: 'starting', zones: zones('Pending') });
    await s.write({ observedGeneration: 1, phase: 'Progressing', zones: zones('LeavingReads'), zonesOutOfRotation: ['az-a'] });
    await s.write({ observedGeneration: 1, phase: 'Progressing', zones: zones('WaitingForSwitch'), zonesOutOfRotation: ['az-a'] });
    // A write that lands again (a retried activity) tells nothing again.
    await s.write({ observedGeneration: 1, phase: 'Progressing', zones: zones('WaitingForSwitch'), zonesOutOfRotation: ['az-a'] });
    await s.write({ observedGeneration: 1, phase: 'Progressing', zones: zones('Done'), zonesOutOfRotation: [] });
    await s.write({
      observedGeneration: 1,
      phase: 'Succeeded',
      message: 'all zones at v1.151.0-cluster',
      zones: zones('Done', 'Done'),
      zonesOutOfRotation: [],
    });

    const slack = received.filter((r) => r.path === '/hooks/T000/B000/XXXX').map((r) => r.body.text);
    expect(slack).toEqual([
      `*${s.ns}/dc* RolloutStarted: rollout of generation 1 to clusterVersion v1.151.0-cluster started`,
      expect.stringMatching(new RegExp(`^\\*${s.ns}/dc\\* ZoneLeftReads: zone az-a left read rotation`)),
      `*${s.ns}/dc* ZoneRejoined: zone az-a back in read rotation`,
      `*${s.ns}/dc* RolloutSucceeded: all zones at v1.151.0-cluster`,
    ]);
    const grafana = received.filter((r) => r.path === '/grafana/api/annotations');
    expect(grafana.map((r) => [r.authorization, r.body.tags])).toEqual([
      ['Bearer glsa_secret', ['vmrollout', `${s.ns}/dc`, 'ZoneLeftReads', 'zone=az-a']],
      ['Bearer glsa_secret', ['vmrollout', `${s.ns}/dc`, 'RolloutSucceeded']],
    ]);
    expect(typeof grafana[0]!.body.time).toBe('number');
    expect(s.results.every(([, r]) => r === 'ok')).toBe(true);
    expect(await s.warnings()).toEqual([]);
  });

  it('a receiver that refuses, redirects, a Secret missing or without a token: a Warning Event each, never the URL; the status write stands', async () => {
    const s = await setUp(
      [
        { type: 'Slack', secretName: 'slack', on: ['RolloutFailed'] },
        { type: 'Slack', secretName: 'absent', on: ['RolloutFailed'] },
        { type: 'GrafanaAnnotation', secretName: 'no-token', on: ['RolloutFailed'] },
        { type: 'Slack', secretName: 'not-http', on: ['RolloutFailed'] },
      ],
      { slack: { url: `${base}/hooks/T000/B000/SECRETPATH` }, 'no-token': { url: base }, 'not-http': { url: 'file:///etc/passwd' } },
    );
    answer = 302;
    expect(await s.write({ observedGeneration: 1, phase: 'Failed', message: 'zone az-a failed', zones: zones('Failed') })).toEqual({ written: true });
    const warnings = await s.warnings();
    expect(warnings.sort()).toEqual([
      expect.stringMatching(/^notification GrafanaAnnotation \(Secret no-token\) not sent: Secret notify-\d+\/no-token has no key token/),
      expect.stringMatching(/^notification Slack \(Secret absent\) not sent: cannot read Secret notify-\d+\/absent: .*404/),
      expect.stringMatching(/^notification Slack \(Secret not-http\) not sent: Secret notify-\d+\/not-http: url /),
      expect.stringMatching(/^notification Slack \(Secret slack\) not sent: RolloutFailed: HTTP 302 \(a redirect: not followed\)$/),
    ]);
    for (const w of warnings) expect(w).not.toContain('SECRETPATH');
    expect(s.results.map(([, r]) => r)).toEqual(['failed', 'failed', 'failed', 'failed']);
    expect(received.map((r) => r.path)).toEqual(['/hooks/T000/B000/SECRETPATH']);
    // Negative control: the receiver answering 200 is told, and no new warning.
    answer = 200;
    await s.write({ observedGeneration: 1, phase: 'Progressing', message: 'retrying', zones: zones('LeavingReads') });
    await s.write({ observedGeneration: 1, phase: 'Failed', message: 'zone az-a failed again', zones: zones('Failed') });
    expect(received.at(-1)).toMatchObject({
      path: '/hooks/T000/B000/SECRETPATH',
      body: { text: `:warning: *${s.ns}/dc* RolloutFailed: zone az-a failed again` },
    });
  });
});
