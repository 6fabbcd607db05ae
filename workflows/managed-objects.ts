// What a VMDistributedCluster's spec has vmrollout write: the apply of every object it names, and
// the read routes it manages. Pure: the workflow applies and edits exactly these, and the write
// guard (activities/guard/) accepts nothing else.
import type { VMKind } from '../api/constants';
import type { JsonObject, ManagedObject, NormalizedSpec, ObjectGeneration, ZoneSpec } from '../api/types';
import type { ApplyObjectInput } from './activity-types';
import { composePatches, createsObject, desiredClusterPatch } from './merge';
import { storageField, zoneStorage } from '../api/storage';

/** The applyObject input for a managed object of `object`: `patch` is its desired spec; `specPath` where it is in the spec. */
function managedApply(object: ObjectGeneration, spec: NormalizedSpec, kind: VMKind, obj: ManagedObject, patch: JsonObject, specPath: string): ApplyObjectInput {
  const { name, uid, generation } = object;
  const managedBy = {
    vmdc: { name, uid, generation },
    specPath,
    // An adopted object is retained unless the spec says false (docs/cr-reference.md, retainOnDelete).
    retain: spec.retainOnDelete ?? !!obj.adopt,
    adopt: !!obj.adopt,
    forceConflicts: !!spec.forceConflicts,
  };
  return { kind, namespace: object.namespace, name: obj.name, patch, create: createsObject(obj), managedBy };
}

/** A zone's storage apply (VMCluster or VMSingle): the desired spec (desiredClusterPatch). */
export function clusterApplyFor(object: ObjectGeneration, spec: NormalizedSpec, zs: ZoneSpec): ApplyObjectInput {
  const { kind, object: obj } = zoneStorage(zs);
  return managedApply(object, spec, kind, obj, desiredClusterPatch(spec, zs), `zones[${spec.zones.indexOf(zs)}].${storageField(kind)}`);
}

/**
 * The apply of a VMAgent, VMUser or VMAuth of the spec, or undefined when the spec names none. Every
 * object named is applied, a bare reference too (an empty overlay removes the keys vmrollout set before).
 */
export function objectApplyFor(
  object: ObjectGeneration,
  spec: NormalizedSpec,
  kind: VMKind,
  obj: ManagedObject | undefined,
  specPath: string,
): ApplyObjectInput | undefined {
  return obj && managedApply(object, spec, kind, obj, composePatches(obj.spec, obj.overrideSpec), specPath);
}

/** The applies of the VMAgents: spec.vmagent, then each zone's own (zones[].vmagent). */
export function agentApplies(object: ObjectGeneration, spec: NormalizedSpec): ApplyObjectInput[] {
  return [
    objectApplyFor(object, spec, 'VMAgent', spec.vmagent, 'vmagent'),
    ...spec.zones.map((zs, i) => objectApplyFor(object, spec, 'VMAgent', zs.vmagent, `zones[${i}].vmagent`)),
  ].filter((a): a is ApplyObjectInput => a !== undefined);
}

/** Every apply the spec asks for: each zone's storage and VMUser, the VMAuth, the VMAgents. */
export function specApplies(object: ObjectGeneration, spec: NormalizedSpec): ApplyObjectInput[] {
  return [
    ...spec.zones.map((zs) => clusterApplyFor(object, spec, zs)),
    ...spec.zones.map((zs, i) => objectApplyFor(object, spec, 'VMUser', zs.vmuser, `zones[${i}].vmuser`)),
    objectApplyFor(object, spec, 'VMAuth', spec.vmauth, 'vmauth'),
    ...agentApplies(object, spec),
  ].filter((a): a is ApplyObjectInput => a !== undefined);
}
