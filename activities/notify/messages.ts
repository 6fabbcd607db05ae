// What a status write tells the notifications of spec.notifications, pure: which of its Events (and
// the rollout's start) each one wants, and the request each kind of receiver takes. The spec is
// read as the object is now (others' input: parsed, never trusted); the I/O is ./send.ts.
import { DEFAULT_NOTIFIED, notificationSchema, type NOTIFIED_REASONS } from '../../api/spec-schema';
import type { ObjectGeneration, VMDistributedClusterStatus } from '../../api/types';
import type { z } from 'zod';
import type { StatusEvent } from '../status/events';

export type Notification = z.infer<typeof notificationSchema>;
type Reason = (typeof NOTIFIED_REASONS)[number];

/** One thing to tell: an Event of the status write, or the rollout's start. */
export type Told = StatusEvent;

/** The object's spec.notifications, as far as each entry has the schema's shape (others are left out, counted). */
export function notificationsOf(spec: unknown): { notifications: Notification[]; refused: number } {
  const raw = spec !== null && typeof spec === 'object' && !Array.isArray(spec) ? (spec as { notifications?: unknown }).notifications : undefined;
  if (!Array.isArray(raw)) return { notifications: [], refused: 0 };
  const notifications: Notification[] = [];
  for (const n of raw.slice(0, 4)) {
    const parsed = notificationSchema.safeParse(n);
    if (parsed.success) notifications.push(parsed.data);
  }
  return { notifications, refused: Math.min(raw.length, 4) - notifications.length };
}

const RUNNING = new Set(['Pending', 'Progressing', 'Paused']);

/**
 * The rollout's start: the first status write of a workflow, which moves the phase from an ended
 * one (or none) to a running one (the trigger that starts the workflow writes no phase).
 */
export function started(before: VMDistributedClusterStatus | undefined, after: VMDistributedClusterStatus, clusterVersion: unknown): Told | undefined {
  if (!after.phase || !RUNNING.has(after.phase) || (before?.phase && RUNNING.has(before.phase))) return undefined;
  const version = typeof clusterVersion === 'string' ? ` to clusterVersion ${clusterVersion.slice(0, 128)}` : '';
  return { reason: 'RolloutStarted', type: 'Normal', message: `rollout of generation ${after.observedGeneration ?? '?'}${version} started` };
}

/** What `n` wants of what this write tells. */
export function wanted(n: Notification, told: readonly Told[]): Told[] {
  const on: readonly string[] = n.on ?? (DEFAULT_NOTIFIED as readonly Reason[]);
  return told.filter((t) => on.includes(t.reason));
}

export interface HttpRequestSpec {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** A Slack-compatible incoming webhook: one message, `text` in Slack's mrkdwn. */
export function slackRequest(object: ObjectGeneration, t: Told): HttpRequestSpec {
  const icon = t.type === 'Warning' ? ':warning: ' : '';
  return {
    path: '',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: `${icon}*${object.namespace}/${object.name}* ${t.reason}: ${t.message}` }),
  };
}

/** A Grafana annotation (HTTP API, POST /api/annotations): organization-wide, tagged to be filtered on a dashboard. */
export function grafanaRequest(object: ObjectGeneration, t: Told, token: string, at: number): HttpRequestSpec {
  const zone = /^zone ([a-z0-9-]+)/.exec(t.message)?.[1];
  const tags = ['vmrollout', `${object.namespace}/${object.name}`, t.reason, ...(zone ? [`zone=${zone}`] : [])];
  return {
    path: '/api/annotations',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ time: at, tags, text: `${object.namespace}/${object.name} ${t.reason}: ${t.message}` }),
  };
}
