// The one way vmrollout changes a VM operator object's spec: server-side apply as field manager
// `vmrollout`, carrying the record of what it applied (kube/applied-fields.ts) and, for a full spec,
// the ownerReference to the VMDistributedCluster (unless retainOnDelete).
//
// A conflict (another manager owns a field vmrollout would change) is resolved by force only when it
// is vmrollout's own (conflict-verdict.ts): a field this VMDistributedCluster's route edits own, one
// it handed over (below), a field it applied before that someone changed behind its back (drift, per
// the record on the object), or a VMCluster's clusterVersion (TAKEN_FIELDS). A route list another
// VMDistributedCluster holds a zone out of reads through is never forced. Any other conflict fails
// for good, naming field and manager, unless forceConflicts is set.
//
// A key removed from an overlay or a full spec is removed from the object: vmrollout was its owner.
// But when the object changes hands — from a full spec to a reference + overlay, or to another
// VMDistributedCluster — the fields the old form set and the new one does not are handed over to
// manager `vmrollout-released` first, so they stay (what a person expects of "stop managing this").
import type { OutOfRotationRecord } from '../../api/route-records';
import { specWithoutClusters } from '../../api/route-targets';
import type { JsonObject } from '../../api/types';
import { appliedRecord, APPLIED_ANNOTATION, isDrift, readAppliedRecord, releasedFields, type AppliedRecord } from '../../kube/applied-fields';
import { applyConflicts, untypableApply, type FieldConflict } from '../../kube/apply-conflicts';
import { ownershipProblem, vmdcOwnerReference } from '../../kube/ownership';
import type { ApplyObjectInput, ManagedBy } from '../../workflows/activity-types';
import { FailureType } from '../../workflows/failures';
import { appliedConfig, composePatches } from '../../workflows/merge';
import { activityLog } from '../activity-context';
import { nonRetryable } from '../errors';
import { vmKind, type KubeObject, type KubeObjects } from '../../kube/custom-objects';
import { RELEASED_FIELD_MANAGER } from '../../kube/field-managers';
import { recordsOn } from '../../kube/route-objects';
import { withReadableRecords } from '../routes/edit-routes';
import { conflictVerdict, type ConflictContext } from './conflict-verdict';
import { STORAGE } from '../../api/storage';

/**
 * Fields the VMDistributedCluster exists to set, taken from whoever set them before (the Helm chart
 * or manifest that created the VMCluster or VMSingle): a zone's version is the VMDistributedCluster's to decide.
 */
const TAKEN_FIELDS: Partial<Record<ApplyObjectInput['kind'], string[]>> = {
  VMCluster: [STORAGE.VMCluster.versionField],
  VMSingle: [STORAGE.VMSingle.versionField],
};

/** The metadata vmrollout applies: the uid precondition of an existing object, its record, its ownerReference. */
function appliedMetadata(input: ApplyObjectInput, current: KubeObject | undefined, spec: JsonObject): JsonObject {
  const m = input.managedBy;
  const form = input.create ? 'spec' : 'overlay';
  const meta: JsonObject = { name: input.name, namespace: input.namespace };
  if (current?.metadata.uid) meta.uid = current.metadata.uid;
  meta.annotations = { [APPLIED_ANNOTATION]: appliedRecord(m.vmdc, form, spec) };
  if (form === 'spec' && !m.retain) meta.ownerReferences = [{ ...vmdcOwnerReference(m.vmdc) }];
  return meta;
}

function conflictMessage(input: ApplyObjectInput, m: ManagedBy, foreign: FieldConflict[]): string {
  const list = foreign.map((c) => `${c.field} (owned by "${c.manager}")`).join(', ');
  return (
    `${input.kind} ${input.namespace}/${input.name} (${m.specPath}): server-side apply conflict: ${list}. ` +
    'Another field manager owns these fields and vmrollout would change them. Either stop setting them in the spec, ' +
    'or let vmrollout take them over with spec.forceConflicts: true (or make that manager give them up)'
  );
}

/** What conflictVerdict needs to know of the object and the VMDistributedCluster applying to it. */
function verdictContext(input: ApplyObjectInput, current: KubeObject, record: AppliedRecord | undefined): ConflictContext {
  const kind = input.kind;
  return {
    uid: input.managedBy.vmdc.uid,
    taken: TAKEN_FIELDS[kind] ?? [],
    drifted: (field) => isDrift(field, record, current),
    records: () => (kind === 'VMAuth' || kind === 'VMUser' ? Object.values(recordsOn({ kind, name: input.name }, input.namespace, current)) : []),
  };
}

function heldMessage(input: ApplyObjectInput, m: ManagedBy, held: Array<FieldConflict & { by: OutOfRotationRecord[] }>): string {
  const fields = [...new Set(held.map((c) => c.field))].join(', ');
  const zones = [...new Set(held.flatMap((c) => c.by.map((r) => `zone ${r.zone} of VMDistributedCluster ${r.vmdc.namespace}/${r.vmdc.name}`)))].join(', ');
  return (
    `${input.kind} ${input.namespace}/${input.name} (${m.specPath}): ${fields}: another rollout holds ${zones} out of reads through this route, ` +
    'and applying over its edit could put that zone back into reads in the middle of its upgrade. vmrollout never does, ' +
    'not even with spec.forceConflicts: retry (kubectl vmdc retry) once that zone is back in reads'
  );
}

/**
 * What the object's old form set and its new one does not (see the top of this file), handed over:
 * for real, or for a dry run as part of the applied spec (the same object results).
 */
async function handOver(
  kube: KubeObjects,
  input: ApplyObjectInput,
  current: KubeObject,
  record: AppliedRecord | undefined,
  spec: JsonObject,
  m: ManagedBy,
): Promise<JsonObject> {
  if (!record || (record.vmdc.uid === m.vmdc.uid && (record.form === 'overlay' || input.create))) return spec;
  const released = releasedFields(record, current, spec);
  if (!released) return spec;
  if (input.dryRun) return composePatches(released.spec as JsonObject, spec);
  activityLog('info', 'handing over fields the new form no longer sets', {
    object: `${input.kind} ${input.namespace}/${input.name}`,
    from: record.vmdc.name,
    form: record.form,
  });
  const metadata = { name: input.name, namespace: input.namespace, uid: current.metadata.uid! };
  await kube.apply(vmKind(input.kind), input.namespace, input.name, { metadata, ...released }, { force: true, fieldManager: RELEASED_FIELD_MANAGER });
  return spec;
}

/** The patch as applied: a route object's without the VMClusters `without` names (held out of reads). */
function routePatch(input: ApplyObjectInput): JsonObject {
  const { without } = input;
  if (!without?.length || (input.kind !== 'VMAuth' && input.kind !== 'VMUser')) return input.patch;
  const patch = specWithoutClusters({ kind: input.kind, name: input.name }, input.patch, without);
  if (patch) return patch;
  const held = without.map((c) => c.name).join(', ');
  throw nonRetryable(
    FailureType.EmptyRoute,
    `${input.kind} ${input.namespace}/${input.name} (${input.managedBy.specPath}) routes reads only to VMClusters held out of reads (${held}): give it a zone in reads`,
  );
}

export async function applyObject(kube: KubeObjects, input: ApplyObjectInput): Promise<{ generation: number; created: boolean; changed: boolean }> {
  const k = vmKind(input.kind);
  const what = `${input.kind} ${input.namespace}/${input.name}`;
  const current = await kube.get(k, input.namespace, input.name);
  if (!current && !input.create) throw nonRetryable(FailureType.ObjectNotFound, `${what} not found (and the spec does not define it in full)`);
  const m = input.managedBy;
  if (current && input.create) {
    const problem = ownershipProblem(current, m.vmdc.uid, m.adopt);
    if (problem) throw nonRetryable(FailureType.NotOwned, `${what} (${m.specPath}): ${problem}`);
  }
  const spec = appliedConfig(routePatch(input));
  const record = current && readAppliedRecord(current);
  const applied = current ? await handOver(kube, input, current, record, spec, m) : spec;
  // No `spec: {}`: an object vmrollout sets nothing in gets only the record.
  const config = { metadata: appliedMetadata(input, current, spec), ...(Object.keys(applied).length > 0 ? { spec: applied } : {}) };
  const apply = async (force: boolean) => {
    try {
      return await kube.apply(k, input.namespace, input.name, config, { dryRun: input.dryRun, force });
    } catch (err) {
      const untypable = untypableApply(err);
      if (untypable) throw nonRetryable(FailureType.PatchRejected, `${what}: the API server refused the applied spec: ${untypable}`);
      throw err;
    }
  };
  let after: KubeObject;
  try {
    after = await apply(false);
  } catch (err) {
    const conflicts = applyConflicts(err);
    if (!conflicts || !current) throw err;
    const ctx = verdictContext(input, current, record);
    const verdicts = await withReadableRecords(async () => conflicts.map((c) => ({ ...c, ...conflictVerdict(c, ctx) })));
    const held = verdicts.filter((v) => v.verdict === 'held');
    if (held.length > 0) throw nonRetryable(FailureType.FieldConflict, heldMessage(input, m, held));
    const foreign = verdicts.filter((v) => v.verdict === 'foreign');
    if (foreign.length > 0 && !m.forceConflicts) throw nonRetryable(FailureType.FieldConflict, conflictMessage(input, m, foreign));
    activityLog('info', 'server-side apply: taking fields back', {
      object: what,
      conflicts,
      forcedByForceConflicts: foreign.length > 0,
      dryRun: !!input.dryRun,
    });
    after = await apply(true);
  }
  const generation = after.metadata.generation ?? 1;
  return { generation, created: !current, changed: !current || generation !== current.metadata.generation };
}
