// Kubernetes Events on a VMDistributedCluster, raised by the trigger (started, invalid, drift,
// deletion held) and by the worker (zone transitions). An Event only tells: the callers log one
// that cannot be created, and nothing else fails.
import * as k8s from '@kubernetes/client-node';
import { API_VERSION, GROUP, KIND } from '../api/constants';
import { redactURLsIn } from '../api/url';
import { withRequestTimeout } from './request-timeout';

export type EventType = 'Normal' | 'Warning';

/** Who raises Events: `trigger`, `worker` (and which replica: the pod), or a person's `kubectl vmdc` (and who). */
export interface EventSource {
  component: 'trigger' | 'worker' | 'kubectl-vmdc';
  instance: string;
}

/** The VMDistributedCluster an Event is about (as much of it as an Event names). */
export interface InvolvedVmdc {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
}

/** An Event message is at most 1000 characters. */
const truncate = (m: string): string => (m.length > 1000 ? `${m.slice(0, 997)}...` : m);

/** Pure: the core/v1 Event. Messages can quote spec values: credentials in URLs are redacted. */
export function eventBody(obj: InvolvedVmdc, source: EventSource, type: EventType, reason: string, message: string, now: Date): k8s.CoreV1Event {
  const md = obj.metadata ?? {};
  return {
    metadata: { generateName: `${md.name ?? 'vmdc'}.`, namespace: md.namespace },
    involvedObject: {
      apiVersion: obj.apiVersion ?? API_VERSION,
      kind: obj.kind ?? KIND,
      name: md.name,
      namespace: md.namespace,
      uid: md.uid,
      resourceVersion: md.resourceVersion,
    },
    type,
    reason,
    message: truncate(redactURLsIn(message)),
    source: { component: `vmrollout-${source.component}` },
    reportingComponent: `${GROUP}/${source.component}`,
    reportingInstance: source.instance,
    action: reason,
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  };
}

export type CreateEvent = (obj: InvolvedVmdc, type: EventType, reason: string, message: string) => Promise<void>;

/** Creates Events as `source`, each request bounded by `requestTimeoutMs`. */
export function eventCreator(kc: k8s.KubeConfig, source: EventSource, requestTimeoutMs: number): CreateEvent {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const timeout = withRequestTimeout(requestTimeoutMs);
  return async (obj, type, reason, message) => {
    await core.createNamespacedEvent(
      { namespace: obj.metadata?.namespace ?? 'default', body: eventBody(obj, source, type, reason, message, new Date()) },
      timeout,
    );
  };
}
