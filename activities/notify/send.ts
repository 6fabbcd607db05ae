// Sends what a status write tells to the receivers of spec.notifications (./messages.ts says what
// and how). Best effort and bounded: each request 5 s, never redirected, its answer not read past
// 64 KiB; a receiver that cannot be told is logged, counted and a Warning Event NotificationFailed
// (which never names the URL: a webhook URL is itself a credential). Nothing here fails a rollout.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { checkHttpURL } from '../../api/url';
import type { ObjectGeneration } from '../../api/types';
import { describeError, statusCode } from '../../kube/errors';
import type { CreateEvent } from '../../kube/events';
import { REQUEST_TIMEOUT_MS, withRequestTimeout } from '../../kube/request-timeout';
import { secretText } from '../../kube/secret-text';
import { activityLog } from '../activity-context';
import type { ActivityMetrics } from '../metrics';
import { readBodyCapped } from '../pods/service-pods';
import { grafanaRequest, notificationsOf, slackRequest, wanted, type Notification, type Told } from './messages';

export const NOTIFY_TIMEOUT_MS = 5_000;
const MAX_ANSWER_BYTES = 64 * 1024;

export interface NotifierDeps {
  kubeConfig: KubeConfig;
  metrics: ActivityMetrics;
  createEvent?: CreateEvent;
  now?: () => number;
}

export class Notifier {
  private readonly core: CoreV1Api;

  constructor(private readonly deps: NotifierDeps) {
    this.core = deps.kubeConfig.makeApiClient(CoreV1Api);
  }

  /** Tells each notification of `spec` what it wants of `told`; resolves once all were tried. */
  async notify(object: ObjectGeneration, spec: unknown, told: readonly Told[]): Promise<void> {
    if (told.length === 0) return;
    for (const n of notificationsOf(spec).notifications) {
      const what = wanted(n, told);
      if (what.length === 0) continue;
      const problem = await this.send(object, n, what).catch((err: unknown) => describeError(err));
      this.deps.metrics.notification(n.type, problem ? 'failed' : 'ok');
      if (problem) await this.failed(object, n, problem);
    }
  }

  /** Sends `what` to `n`; the first problem, or undefined. */
  private async send(object: ObjectGeneration, n: Notification, what: Told[]): Promise<string | undefined> {
    const target = await this.target(object.namespace, n);
    if (typeof target === 'string') return target;
    for (const t of what) {
      const req = n.type === 'Slack' ? slackRequest(object, t) : grafanaRequest(object, t, target.token!, (this.deps.now ?? Date.now)());
      const signal = AbortSignal.timeout(NOTIFY_TIMEOUT_MS);
      const res = await fetch(`${target.url.replace(/\/+$/, '')}${req.path}`, {
        method: 'POST',
        headers: req.headers,
        body: req.body,
        signal,
        redirect: 'manual',
      });
      const answer = await readBodyCapped(res, MAX_ANSWER_BYTES, signal).catch(() => '');
      if (!res.ok)
        return `${t.reason}: HTTP ${res.status}${res.status >= 300 && res.status < 400 ? ' (a redirect: not followed)' : `: ${answer.slice(0, 200)}`}`;
    }
    return undefined;
  }

  /** The receiver's URL (and Grafana's token) from its Secret, or why not. */
  private async target(namespace: string, n: Notification): Promise<{ url: string; token?: string } | string> {
    let data: Record<string, string> | undefined;
    try {
      data = (await this.core.readNamespacedSecret({ name: n.secretName, namespace }, withRequestTimeout(REQUEST_TIMEOUT_MS))).data;
    } catch (err) {
      const granted = statusCode(err) === 403 ? " (the worker may read only the Secrets the chart's notificationSecrets lists)" : '';
      return `cannot read Secret ${namespace}/${n.secretName}: ${describeError(err)}${granted}`;
    }
    const url = secretText(data, 'url');
    if (!url) return `Secret ${namespace}/${n.secretName} has no key url`;
    const bad = checkHttpURL(url);
    if (bad) return `Secret ${namespace}/${n.secretName}: url ${bad}`;
    if (n.type === 'Slack') return { url };
    const token = secretText(data, 'token');
    return token ? { url, token } : `Secret ${namespace}/${n.secretName} has no key token (a Grafana service account token)`;
  }

  private async failed(object: ObjectGeneration, n: Notification, problem: string): Promise<void> {
    const message = `notification ${n.type} (Secret ${n.secretName}) not sent: ${problem}`;
    activityLog('warn', message, { namespace: object.namespace, name: object.name });
    const involved = { metadata: { name: object.name, namespace: object.namespace, uid: object.uid } };
    await this.deps.createEvent?.(involved, 'Warning', 'NotificationFailed', message).catch(() => {});
  }
}
