// What every part of one rollout run reads and never changes: the object and its spec, the routes
// it manages, the activities (with their options), and what follows from them alone.
import type { RecordOwner, RouteRef } from '../api/route-records';
import type { NormalizedSpec, ObjectGeneration, Strategy, WorkflowRef, ZoneSpec } from '../api/types';
import { rolloutProxies, type RolloutProxies } from './activity-options';
import type { QueueTarget, ReadRoutesInput } from './activity-types';
import { managedRoutes } from '../api/route-targets';
import { namedStorage } from '../api/storage';

export interface RunContext {
  readonly object: ObjectGeneration;
  readonly spec: NormalizedSpec;
  readonly st: Strategy;
  /** The object's namespace: every object of the rollout is in it. */
  readonly ns: string;
  readonly workflow: WorkflowRef;
  readonly acts: RolloutProxies;
  /** Routes the spec manages: the VMAuth and every VMUser named in the spec. */
  readonly routes: readonly RouteRef[];
}

export function runContext(object: ObjectGeneration, spec: NormalizedSpec, workflow: WorkflowRef): RunContext {
  const routes = managedRoutes(spec);
  return Object.freeze({ object, spec, st: spec.strategy, ns: object.namespace, workflow, acts: rolloutProxies(spec.strategy), routes: Object.freeze(routes) });
}

/** The workflow clock (the sandbox's Date is deterministic). */
export const now = (): string => new Date().toISOString();

export function zoneSpec(ctx: RunContext, name: string): ZoneSpec {
  return ctx.spec.zones.find((z) => z.name === name)!;
}

/** Who a route record of zone `zone` belongs to. */
export function recordOwner(ctx: RunContext, zone: string): RecordOwner {
  const { object, workflow } = ctx;
  return { vmdc: { namespace: object.namespace, name: object.name, uid: object.uid }, zone, workflowId: workflow.id, generation: object.generation };
}

export function queueTarget(ctx: RunContext, zs: ZoneSpec): QueueTarget {
  const zoneAgents = ctx.spec.zones.flatMap((z) => (z.vmagent ? [z.vmagent.name] : []));
  const { vmcluster, ...kind } = namedStorage(zs);
  return {
    namespace: ctx.ns,
    vmagentName: ctx.spec.vmagent.name,
    ...(zoneAgents.length ? { zoneVmagents: zoneAgents } : {}),
    vmclusterName: vmcluster,
    ...kind,
    ...(zs.remoteWriteURL ? { remoteWriteURL: zs.remoteWriteURL } : {}),
    queueEmptyBytes: ctx.st.queueEmptyBytes,
    zone: zs.name,
    objectName: ctx.object.name,
  };
}

/** The read routes, as read before a zone leaves: the spec's, and the VMUsers spec.vmuserSelector selects now. */
export function routesToRead(ctx: RunContext): ReadRoutesInput {
  return { namespace: ctx.ns, routes: [...ctx.routes], ...(ctx.spec.vmuserSelector !== undefined ? { vmuserSelector: ctx.spec.vmuserSelector } : {}) };
}
