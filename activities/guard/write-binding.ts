// Which writes a workflow may have the worker make. Anyone who may start workflows on the task
// queue can call any activity with any input, so verifyInput (the workflow's first step) is not
// enough: every write activity is bound to the VMDistributedCluster of the workflow that calls it
// (docs/security.md#every-write-is-bound-to-its-object). Pure: write-guard.ts reads what it needs.
//
// - Every write: the caller's workflow id is the id the trigger gives the generation the write claims
//   to act for (namespace, name, generation, uid prefix), and what a route edit records names it.
// - An apply or a route removal acts for a generation still in charge (same uid, not being deleted,
//   at that generation, or a later one whose status.workflow still names the caller: a paused-only
//   change), and writes only what the object's spec asks for now: one of its applies exactly
//   (workflows/managed-objects.ts), or one of its zones out of the routes it manages, under the
//   trust policy.
// - A route restore needs no more: it puts back only what the records of that uid say, and it is
//   how a superseded, cancelled or deleted object's run puts its zones back into reads.
// - A status write needs no more here: the status writer itself writes only while the object is at
//   that generation or names the caller (activities/status/write-status.ts mayWriteStatus).
import { canonicalJson } from '../../api/canonical-json';
import { workflowIdFor } from '../../api/rollout-contract';
import { trustIssues, type TrustPolicy } from '../../api/trust-policy';
import type { NormalizedSpec, ObjectGeneration } from '../../api/types';
import { formatIssues, validateSpec } from '../../api/validate';
import type { ApplyObjectInput, RolloutActivities } from '../../workflows/activity-types';
import { managedRoutes } from '../../api/route-targets';
import { heldMode } from '../../api/traffic-mode';
import { specApplies } from '../../workflows/managed-objects';
import { describeStorage, sameStorage, storageRef } from '../../api/storage';

/** What editRoutes is asked to do. */
export type RouteEdit = Parameters<RolloutActivities['editRoutes']>[0];

/** A write an activity is asked to make. */
export type Write = { kind: 'apply'; input: ApplyObjectInput } | { kind: 'routes'; input: RouteEdit } | { kind: 'status'; object: ObjectGeneration };

/** The VMDistributedCluster as it is now, as much of it as the decision reads. */
export interface LiveVmdc {
  metadata?: { uid?: unknown; generation?: unknown; deletionTimestamp?: unknown };
  spec?: unknown;
  status?: unknown;
}

export type WriteVerdict = { allowed: true } | { allowed: false; message: string };

/** The VMDistributedCluster generation a write claims to act for. */
export function claimedObject(write: Write): ObjectGeneration {
  if (write.kind === 'status') return write.object;
  if (write.kind === 'routes') {
    const { vmdc, generation } = write.input.record;
    return { namespace: vmdc.namespace, name: vmdc.name, uid: vmdc.uid, generation };
  }
  const { name, uid, generation } = write.input.managedBy.vmdc;
  return { namespace: write.input.namespace, name, uid, generation };
}

/** Whether deciding on `write` needs the VMDistributedCluster as it is now. */
export function needsLiveObject(write: Write): boolean {
  return write.kind === 'apply' || (write.kind === 'routes' && write.input.direction === 'remove');
}

const what = (write: Write): string => {
  if (write.kind === 'status') return `the status of ${write.object.namespace}/${write.object.name}`;
  if (write.kind === 'routes') return `a route edit (${write.input.direction}) of zone ${write.input.record.zone}`;
  return `${write.input.kind} ${write.input.namespace}/${write.input.name}`;
};

/** Pure: may workflow `callerId` have the worker make `write`, given the object as it is now (when needsLiveObject)? */
export function decideWrite(write: Write, callerId: string, live: LiveVmdc | undefined, policy: TrustPolicy): WriteVerdict {
  const refused = (why: string): WriteVerdict => ({ allowed: false, message: `write refused, nothing written: ${what(write)}: ${why}` });
  const claimed = claimedObject(write);
  const name = `${claimed.namespace}/${claimed.name}`;
  const ownId = workflowIdFor(claimed);
  if (callerId !== ownId)
    return refused(`the calling workflow ${JSON.stringify(callerId)} is not the rollout of ${name} generation ${claimed.generation} (${ownId})`);
  if (write.kind === 'routes') {
    const { input } = write;
    if (input.record.workflowId !== callerId) return refused(`the record names workflow ${JSON.stringify(input.record.workflowId)}, not the caller`);
    if (input.namespace !== claimed.namespace) return refused(`the routes are in namespace ${input.namespace}, ${name}'s are in ${claimed.namespace}`);
  }
  if (!needsLiveObject(write)) return { allowed: true };

  if (!live?.metadata) return refused(`VMDistributedCluster ${name} does not exist`);
  const problem = notInCharge(live.metadata, live.status, claimed, callerId);
  if (problem) return refused(problem);
  const v = validateSpec(live.spec);
  if (!v.success) return refused(`${name}'s spec is not valid: ${formatIssues(v.issues)}`);
  const policyIssues = trustIssues(claimed.namespace, v.spec, policy);
  if (policyIssues.length) return refused(formatIssues(policyIssues));
  const off = write.kind === 'apply' ? applyNotAsked(write.input, claimed, v.spec) : write.kind === 'routes' ? removalNotAsked(write.input, v.spec) : undefined;
  return off ? refused(`${name}'s spec ${off}`) : { allowed: true };
}

/** Why generation `claimed` of the object is not the one whose rollout acts now, or undefined when it is. */
function notInCharge(m: NonNullable<LiveVmdc['metadata']>, status: unknown, claimed: ObjectGeneration, callerId: string): string | undefined {
  const name = `${claimed.namespace}/${claimed.name}`;
  if (m.uid !== claimed.uid) return `VMDistributedCluster ${name} has uid ${String(m.uid)}, the write names ${claimed.uid}`;
  if (m.deletionTimestamp) return `VMDistributedCluster ${name} is being deleted`;
  if (m.generation === claimed.generation) return undefined;
  const named = (status as { workflow?: { id?: unknown } } | undefined)?.workflow?.id;
  if (typeof m.generation === 'number' && m.generation > claimed.generation && named === callerId) return undefined;
  return `VMDistributedCluster ${name} is at generation ${String(m.generation)} and its status names workflow ${JSON.stringify(named ?? null)}, not generation ${claimed.generation}'s`;
}

/** Why the spec does not ask for `input`, or undefined when it does (a dry run of it too). */
function applyNotAsked(input: ApplyObjectInput, claimed: ObjectGeneration, spec: NormalizedSpec): string | undefined {
  const { dryRun: _dryRun, without, ...asked } = input;
  const same = specApplies(claimed, spec).filter((a) => a.kind === input.kind && a.name === input.name);
  if (same.length === 0) return `names no ${input.kind} ${input.name}`;
  if (!same.some((a) => canonicalJson(a) === canonicalJson(asked))) {
    return `asks for another apply of ${input.kind} ${input.name} (${same.map((a) => a.managedBy.specPath).join(', ')})`;
  }
  return without?.length ? withoutNotAsked(input, without, spec) : undefined;
}

/** Only a route object's apply leaves storage objects out, and only those of zones a trafficMode holds out of reads. */
function withoutNotAsked(input: ApplyObjectInput, without: NonNullable<ApplyObjectInput['without']>, spec: NormalizedSpec): string | undefined {
  if (input.kind !== 'VMAuth' && input.kind !== 'VMUser') return `has no routes in ${input.kind} ${input.name} to leave zones out of`;
  for (const c of without) {
    const held = spec.zones.some((z) => heldMode(z) && sameStorage(storageRef(z, input.namespace), c));
    if (!held) return `holds no zone of ${describeStorage(c)} out of reads (trafficMode)`;
  }
  return undefined;
}

/** Why the spec does not ask for the removal of `input`, or undefined when it does. */
function removalNotAsked(input: RouteEdit, spec: NormalizedSpec): string | undefined {
  const zone = spec.zones.find((z) => z.name === input.record.zone);
  if (!zone) return `has no zone ${input.record.zone}`;
  if (input.vmauthName !== spec.vmauth.name) return `names VMAuth ${spec.vmauth.name}, not ${input.vmauthName}`;
  const routes = managedRoutes(spec);
  for (const r of input.removals) {
    // A VMUser the spec does not name may be one spec.vmuserSelector selects: its labels are checked on the fresh read the edit makes.
    const selectable = r.route.kind === 'VMUser' && spec.vmuserSelector !== undefined;
    if (!selectable && !routes.some((x) => x.kind === r.route.kind && x.name === r.route.name))
      return `does not manage the route ${r.route.kind} ${r.route.name}`;
    const own = storageRef(zone, input.namespace);
    if (!sameStorage(r.vmcluster, own)) {
      return `routes zone ${zone.name} to ${describeStorage(own)}, not ${describeStorage(r.vmcluster)}`;
    }
  }
  return undefined;
}
