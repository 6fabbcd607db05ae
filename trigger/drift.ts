// Drift: a field vmrollout applied to a VM operator object (its record, annotation
// vmrollout.io/applied: kube/applied-fields.ts) whose live value has changed, or is gone, since.
// The trigger only reports it (condition `Drifted`, Events); the next rollout takes it back, zone by
// zone. Pure: what one object shows, what the objects of one VMDistributedCluster add up to, and
// which condition and Events that is worth.
import type { KubernetesObject } from '@kubernetes/client-node';
import { VM_KINDS, type VMKind } from '../api/constants';
import type { ConditionUpdate } from '../api/conditions';
import { OUT_OF_ROTATION_ANNOTATION, parseRecords, UnreadableRecordsError } from '../api/route-records';
import type { Condition, JsonObject } from '../api/types';
import { driftedFields, readAppliedRecord } from '../kube/applied-fields';

/** The order a report lists kinds in (a Record: the compiler keeps it complete). */
const KIND_ORDER: Record<VMKind, number> = { VMCluster: 0, VMSingle: 1, VMUser: 2, VMAgent: 3, VMAuth: 4 };

/** The kinds vmrollout applies to: every kind it manages. */
export const DRIFT_KINDS = Object.keys(VM_KINDS) as VMKind[];

/** How the condition, the Events and the logs name an object: `VMCluster vm-az-b`. */
export type ObjectLabel = string;

/** What one VM object shows, as far as drift goes. */
export interface ObjectDrift {
  kind: VMKind;
  namespace: string;
  name: string;
  resourceVersion?: string;
  /** Absent: the object carries no readable record, vmrollout applied nothing there it knows of. */
  applied?: {
    /** The VMDistributedCluster (of the object's namespace) the record names. */
    vmdc: { name: string; uid: string };
    /** Field paths whose live value is not what was applied, sorted. */
    fields: string[];
    /**
     * Whether the object carries an out-of-rotation record — of that VMDistributedCluster or of
     * another one sharing the route (or one that cannot be read, which might be either): its
     * targetRefs lack a zone on purpose then, so it is not checked until the zone is back.
     */
    outOfReads: boolean;
  };
}

export const objectLabel = (o: Pick<ObjectDrift, 'kind' | 'name'>): ObjectLabel => `${o.kind} ${o.name}`;

function carriesRouteRecord(obj: KubernetesObject): boolean {
  try {
    return Object.keys(parseRecords(obj.metadata?.annotations?.[OUT_OF_ROTATION_ANNOTATION])).length > 0;
  } catch (err) {
    if (err instanceof UnreadableRecordsError) return true;
    throw err;
  }
}

/** What `obj` (a live object of `kind`) shows; undefined when its metadata is incomplete. */
export function objectDrift(kind: VMKind, obj: KubernetesObject): ObjectDrift | undefined {
  const m = obj.metadata;
  if (!m?.name || !m.namespace) return undefined;
  const out: ObjectDrift = { kind, namespace: m.namespace, name: m.name, ...(m.resourceVersion ? { resourceVersion: m.resourceVersion } : {}) };
  const record = readAppliedRecord(obj);
  if (!record) return out;
  const fields = driftedFields(record, obj as unknown as JsonObject).sort();
  out.applied = { vmdc: { name: record.vmdc.name, uid: record.vmdc.uid }, fields, outOfReads: carriesRouteRecord(obj) };
  return out;
}

/** The VMDistributedCluster a report is for: the live object of that name. */
export interface VmdcRef {
  namespace: string;
  name: string;
  uid: string;
}

/**
 * Every VM object's ObjectDrift, also indexed by the VMDistributedCluster (namespace/name) its record
 * names. A report reads only that VMDistributedCluster's objects: scanning every object for each of
 * N VMDistributedClusters made a relist cost N × (their objects) — quadratic (docs/benchmarks.md).
 */
export class ObjectDriftIndex {
  private readonly byObject = new Map<string, ObjectDrift>();
  private readonly byVmdc = new Map<string, Map<string, ObjectDrift>>();

  /** The key a VMDistributedCluster is indexed under (its `namespace/name`, as objectKey). */
  static vmdcKey(namespace: string, name: string): string {
    return `${namespace}/${name}`;
  }

  private static vmdcOf(o: ObjectDrift): string | undefined {
    return o.applied ? ObjectDriftIndex.vmdcKey(o.namespace, o.applied.vmdc.name) : undefined;
  }

  get(objectKey: string): ObjectDrift | undefined {
    return this.byObject.get(objectKey);
  }

  /** Stores `o` under `objectKey` (a VM object's own key), replacing what was there. */
  set(objectKey: string, o: ObjectDrift): void {
    this.delete(objectKey);
    this.byObject.set(objectKey, o);
    const v = ObjectDriftIndex.vmdcOf(o);
    if (v === undefined) return;
    let objects = this.byVmdc.get(v);
    if (!objects) this.byVmdc.set(v, (objects = new Map()));
    objects.set(objectKey, o);
  }

  delete(objectKey: string): void {
    const before = this.byObject.get(objectKey);
    if (!before) return;
    this.byObject.delete(objectKey);
    const v = ObjectDriftIndex.vmdcOf(before);
    if (v === undefined) return;
    const objects = this.byVmdc.get(v);
    objects?.delete(objectKey);
    if (objects?.size === 0) this.byVmdc.delete(v);
  }

  /** The objects whose record names a VMDistributedCluster `name` in `namespace` (any uid: driftReport picks). */
  of(namespace: string, name: string): Iterable<ObjectDrift> {
    return this.byVmdc.get(ObjectDriftIndex.vmdcKey(namespace, name))?.values() ?? [];
  }
}

/** What the objects of one VMDistributedCluster add up to. */
export interface DriftReport {
  /** The objects checked, in report order, each with its drifted fields (none: as applied). */
  checked: Array<{ object: ObjectLabel; fields: string[] }>;
  /** Its objects not checked now: a zone (its own, or another VMDistributedCluster's) is out of reads through them. */
  skipped: ObjectLabel[];
}

/**
 * The objects whose record names `vmdc` — by name in its namespace AND by uid: a record of an earlier
 * object of that name is stale, it says nothing about what this one applied.
 */
export function driftReport(vmdc: VmdcRef, objects: Iterable<ObjectDrift>): DriftReport {
  const mine = [...objects].filter((o) => o.namespace === vmdc.namespace && o.applied?.vmdc.name === vmdc.name && o.applied.vmdc.uid === vmdc.uid);
  mine.sort((a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const report: DriftReport = { checked: [], skipped: [] };
  for (const o of mine) {
    if (o.applied!.outOfReads) report.skipped.push(objectLabel(o));
    else report.checked.push({ object: objectLabel(o), fields: o.applied!.fields });
  }
  return report;
}

/** How many drifted fields of one object a message lists before it counts the rest. */
const FIELDS_LISTED = 8;
/** The condition lists objects up to this length, then counts the rest (an Event message is at most 1000). */
export const OBJECTS_MESSAGE_MAX = 800;

const listFields = (fields: readonly string[]): string =>
  fields.length > FIELDS_LISTED ? `${fields.slice(0, FIELDS_LISTED).join(', ')} and ${fields.length - FIELDS_LISTED} more` : fields.join(', ');

/** `VMCluster vm-az-b: .spec.clusterVersion; VMUser reads-az-a: .spec.targetRefs`, bounded. */
function listObjects(drifted: ReadonlyArray<{ object: ObjectLabel; fields: string[] }>): string {
  let out = '';
  for (let i = 0; i < drifted.length; i++) {
    const entry = `${drifted[i]!.object}: ${listFields(drifted[i]!.fields)}`;
    const next = out ? `${out}; ${entry}` : entry;
    if (next.length > OBJECTS_MESSAGE_MAX && out) return `${out}; and ${drifted.length - i} more objects`;
    out = next;
  }
  return out;
}

const them = (fields: readonly string[]): string => (fields.length === 1 ? 'it' : 'them');

/**
 * The Drifted condition for `report`, or undefined when there is none to write: a
 * VMDistributedCluster gets the condition once one of its objects carries a record of it (or it
 * has the condition already), so one that vmrollout has not applied anything for yet — invalid,
 * or before its first rollout got that far — shows no condition about fields nobody applied.
 * No observedGeneration: drift is about the VM objects, not about a generation of the spec.
 */
export function driftCondition(report: DriftReport, current: Condition | undefined): ConditionUpdate | undefined {
  const drifted = report.checked.filter((c) => c.fields.length > 0);
  if (drifted.length > 0) {
    return {
      type: 'Drifted',
      status: 'True',
      reason: 'FieldsChanged',
      message: `${listObjects(drifted)}. These fields changed since vmrollout applied them; the next rollout takes them back, zone by zone.`,
    };
  }
  if (!current && report.checked.length + report.skipped.length === 0) return undefined;
  return { type: 'Drifted', status: 'False', reason: 'NoDrift', message: 'Every field vmrollout applied is as it applied it.' };
}

/** Whether writing `update` changes `current` (the transition time follows the status). */
export function conditionChanges(current: Condition | undefined, update: ConditionUpdate): boolean {
  return !current || current.status !== update.status || current.reason !== update.reason || current.message !== update.message;
}

/** The drifted fields last reported by an Event, per object. */
export type ReportedFields = ReadonlyMap<ObjectLabel, readonly string[]>;

export interface DriftEvent {
  type: 'Warning' | 'Normal';
  reason: 'Drifted' | 'DriftResolved';
  message: string;
}

export interface DriftPlan {
  /** The condition, when the VMDistributedCluster has one (see driftCondition). */
  condition?: ConditionUpdate;
  /** Whether writing it changes the current one. */
  write: boolean;
  /** One per object whose drifted fields became non-empty or changed (Drifted), or went back to none (DriftResolved). */
  events: DriftEvent[];
  /** What the Events have reported after these: the `reported` of the next plan. */
  reported: Map<ObjectLabel, string[]>;
}

const sameFields = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((f, i) => f === b[i]);

/**
 * The condition to write and the Events to emit for `report`, given the current condition and what
 * Events reported before (`reported`; undefined: nothing known, e.g. the trigger just started).
 * Without `reported`, the condition is the memory: when it already says what the report says, its
 * Events went out before (from an earlier trigger process); otherwise every drifted object gets one.
 * An object not checked (out of reads) keeps what was reported for it: its return with the same
 * fields is no news. An object that is gone, or no longer this VMDistributedCluster's, is forgotten.
 */
export function planDrift(report: DriftReport, current: Condition | undefined, reported: ReportedFields | undefined): DriftPlan {
  const condition = driftCondition(report, current);
  const write = !!condition && conditionChanges(current, condition);
  const known: ReportedFields = reported ?? new Map(write ? [] : report.checked.map((c) => [c.object, c.fields]));
  const events: DriftEvent[] = [];
  const next = new Map<ObjectLabel, string[]>();
  for (const { object, fields } of report.checked) {
    const before = known.get(object) ?? [];
    if (fields.length > 0 && !sameFields(fields, before)) {
      events.push({
        type: 'Warning',
        reason: 'Drifted',
        message: `${object}: ${listFields(fields)} changed since vmrollout applied ${them(fields)}; the next rollout takes ${them(fields)} back, zone by zone.`,
      });
    } else if (fields.length === 0 && before.length > 0) {
      events.push({ type: 'Normal', reason: 'DriftResolved', message: `${object}: every field vmrollout applied is as it applied it again.` });
    }
    next.set(object, fields);
  }
  for (const object of report.skipped) {
    const before = known.get(object);
    if (before) next.set(object, [...before]);
  }
  return { ...(condition ? { condition } : {}), write, events, reported: next };
}

/** The drifted fields of a report, counted (the trigger's gauge). */
export const driftedFieldCount = (report: DriftReport): number => report.checked.reduce((n, c) => n + c.fields.length, 0);
