// Each zone's VMCluster (or VMSingle) apply (cli/zone-applies.ts) sent as a server-side apply with dryRun=All
// under vmrollout's field manager and the person's own credentials (`patch` on vmclusters, vmsingles: the API
// server checks a dry run as the write). Nothing is stored. `diff` shows the specs before and after;
// `plan` reads from them whether the rollout would skip the zone.
import { KubeObjects, vmKind, type KubeObject } from '../kube/custom-objects';
import type { Kube } from './kube';
import type { ZoneApply } from './zone-applies';

export interface ZoneDryRun {
  apply: ZoneApply;
  /** The VMCluster as it is; undefined when it does not exist. */
  current?: KubeObject;
  /** What the apply would make of it; undefined when it is missing and the spec names it without a full spec (nothing to apply). */
  after?: KubeObject;
}

export async function dryRunZones(kube: Kube, applies: readonly ZoneApply[]): Promise<ZoneDryRun[]> {
  const objects = new KubeObjects(kube.kc);
  const out: ZoneDryRun[] = [];
  for (const a of applies) {
    const k = vmKind(a.kind);
    const current = await objects.get(k, a.namespace, a.name);
    if (!current && !a.create) {
      out.push({ apply: a });
      continue;
    }
    const after = await objects.apply(
      k,
      a.namespace,
      a.name,
      { metadata: { name: a.name, namespace: a.namespace }, spec: a.spec },
      { dryRun: true, force: true },
    );
    out.push({ apply: a, ...(current ? { current } : {}), after });
  }
  return out;
}
