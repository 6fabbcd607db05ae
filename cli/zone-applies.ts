// What `kubectl vmdc diff` dry-runs: each zone's VMCluster apply as the workflow builds it
// (workflows/managed-objects.ts clusterApplyFor, the same function), as a server-side apply
// configuration. Pure.
import { validateSpec, formatIssues } from '../api/validate';
import type { JsonObject, NormalizedSpec } from '../api/types';
import type { VmdcObject } from '../kube/vmdc-object';
import { clusterApplyFor } from '../workflows/managed-objects';
import { appliedConfig } from '../workflows/merge';
import { zoneStorage, type StorageKind } from '../api/storage';

export interface ZoneApply {
  zone: string;
  /** The zone's storage kind: a VMCluster or a VMSingle. */
  kind: StorageKind;
  namespace: string;
  name: string;
  /** Created when absent (the zone's full-spec form). */
  create: boolean;
  /** The spec vmrollout applies (nulls of the overlay dropped: apply removes what it stops setting). */
  spec: JsonObject;
}

/** `spec`: the spec validated, as the workflow receives it. */
export type ZoneApplies = { ok: true; spec: NormalizedSpec; applies: ZoneApply[] } | { ok: false; reason: string };

export function zoneApplies(obj: VmdcObject): ZoneApplies {
  const v = validateSpec(obj.spec);
  if (!v.success) return { ok: false, reason: formatIssues(v.issues) };
  const m = obj.metadata ?? {};
  const object = { namespace: m.namespace ?? '', name: m.name ?? '', uid: m.uid ?? '', generation: m.generation ?? 0 };
  return {
    ok: true,
    spec: v.spec,
    applies: v.spec.zones.map((zs) => {
      const a = clusterApplyFor(object, v.spec, zs);
      return { zone: zs.name, kind: zoneStorage(zs).kind, namespace: a.namespace, name: a.name, create: a.create, spec: appliedConfig(a.patch) };
    }),
  };
}
