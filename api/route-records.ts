// The record of what was taken out of a read route, kept ON the route object (VMAuth or VMUser)
// in one annotation, written by the same API call that removes the entries and deleted by the
// call that puts them back. It outlives every workflow: any generation's workflow, the trigger
// (finalizer) and a person (kubectl) read it. Pure: parsing and formatting only.
import { dataObject } from './data-object';
import type { StorageRef } from './storage';
import type { JsonObject } from './types';

export const OUT_OF_ROTATION_ANNOTATION = 'vmrollout.io/out-of-rotation';

/** How a person releases a recorded zone by hand (`kubectl vmdc release-zone`, cli/; docs/operations.md#runbook-release-zone). */
export const RELEASE_COMMAND = 'kubectl vmdc release-zone';

/** A read route vmrollout may edit: the VMAuth's unauthorizedUserAccessSpec or a VMUser's spec. */
export interface RouteRef {
  kind: 'VMAuth' | 'VMUser';
  name: string;
}

export type RemovedRef =
  /** The whole targetRef named only this zone: it is removed and re-inserted at `index`. */
  | { type: 'targetRef'; index: number; targetRef: JsonObject }
  /** This zone was one entry of targetRefs[index].crd.objects, at `objectIndex`. */
  | {
      type: 'object';
      index: number;
      objectIndex: number;
      object: JsonObject;
      /**
       * The whole containing targetRef as read before the removal (optional, additive). Used by
       * undoRemoval to find the container again if the user moved targetRefs meanwhile.
       */
      targetRef?: JsonObject;
    }
  /**
   * targetRefs[index].crd.name/crd.namespace named this zone while crd.objects routes elsewhere too:
   * both were set to "" (the keys stay: the operator's CRD requires them); putting the zone back sets
   * them to exactly `name` and `namespace` again. `targetRef` is the whole targetRef as read before
   * the removal, to find it again if the user moved targetRefs meanwhile.
   */
  | { type: 'crdName'; index: number; name: string; namespace: string; targetRef: JsonObject };

/** What leaving read rotation removes from one route, so that it can be put back exactly. */
export interface RouteRemoval {
  route: RouteRef;
  /** The zone's storage object taken out of this route (its VMCluster's vmselect, or its VMSingle). */
  vmcluster: StorageRef;
  removed: RemovedRef[];
}

/** Which zone of which VMDistributedCluster a record is for, and who wrote it. */
export interface RecordOwner {
  vmdc: { namespace: string; name: string; uid: string };
  zone: string;
  workflowId: string;
  generation: number;
}

/** The route object a record is written on: a record copied to another object (or a re-created one) is not its. */
export interface RecordCarrier {
  kind: RouteRef['kind'];
  name: string;
  uid: string;
}

/** One record: exactly what was removed from the route object that carries it. */
export interface OutOfRotationRecord extends RecordOwner {
  route: RecordCarrier;
  vmcluster: StorageRef;
  removed: RemovedRef[];
  /** When the entries were removed (ISO time). */
  since: string;
}

/** The annotation's value: records keyed by `<VMDistributedCluster uid>/<zone>`. */
export type RouteRecords = Record<string, OutOfRotationRecord>;

/** One record and the route object that carries it. */
export interface RecordedRoute {
  route: RouteRef;
  record: OutOfRotationRecord;
}

/** A zone of this VMDistributedCluster that the records on the route objects show out of reads. */
export interface RecordedZone {
  zone: string;
  vmcluster: StorageRef;
  /** What was removed from each route carrying a record, so that it can be waited on and put back. */
  removals: RouteRemoval[];
  /** The earliest removal (ISO time) and the generation whose workflow made it. */
  since: string;
  generation: number;
}

export function recordKey(uid: string, zone: string): string {
  return `${uid}/${zone}`;
}

/**
 * The longest annotation value read (characters), and the most records in it. vmrollout writes one record per
 * zone out of reads of each VMDistributedCluster sharing the route (a few hundred bytes each);
 * anything larger is not parsed at all (a 250 KiB value once cost seconds of CPU per attempt).
 */
export const MAX_RECORDS_LENGTH = 64 * 1024;
export const MAX_RECORDS_PER_ROUTE = 64;

/** The annotation holds something vmrollout did not write: it is never guessed at or overwritten. */
export class UnreadableRecordsError extends Error {
  override readonly name = 'UnreadableRecordsError';
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

const isName = (v: unknown): v is string => typeof v === 'string' && v !== '';

const isIndex = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** A removed entry as undoRemoval needs it: what to put back, and where. */
function isRemovedRef(r: unknown): boolean {
  if (!isObject(r) || !isIndex(r.index)) return false;
  if (r.type === 'targetRef') return isObject(r.targetRef);
  if (r.type === 'object') return isIndex(r.objectIndex) && isObject(r.object) && (r.targetRef === undefined || isObject(r.targetRef));
  if (r.type === 'crdName')
    return typeof r.name === 'string' && r.name !== '' && typeof r.namespace === 'string' && r.namespace !== '' && isObject(r.targetRef);
  return false;
}

function checkRecord(key: string, v: unknown): OutOfRotationRecord {
  const bad = (why: string) => new UnreadableRecordsError(`record ${JSON.stringify(key)}: ${why}`);
  if (!isObject(v)) throw bad('not an object');
  const vmdc = v.vmdc;
  // An empty uid or zone would make a record anyone's: each part is required.
  if (!isObject(vmdc) || !isName(vmdc.uid) || !isName(vmdc.name) || !isName(vmdc.namespace)) throw bad('vmdc must name namespace, name and uid');
  if (!isName(v.zone) || key !== recordKey(vmdc.uid, v.zone)) throw bad('the key must be <uid>/<zone> of the record');
  const route = v.route;
  if (!isObject(route) || (route.kind !== 'VMAuth' && route.kind !== 'VMUser') || !isName(route.name) || !isName(route.uid))
    throw bad('route must name the kind, name and uid of the object carrying the record');
  const vmc = v.vmcluster;
  if (!isObject(vmc) || !isName(vmc.name) || !isName(vmc.namespace)) throw bad('vmcluster must name namespace and name');
  if (vmc.kind !== undefined && vmc.kind !== 'VMSingle') throw bad('vmcluster.kind must be VMSingle when set');
  if (!Array.isArray(v.removed) || v.removed.length === 0 || !v.removed.every(isRemovedRef)) {
    throw bad('removed must be a non-empty list of removed targetRefs, crd.objects entries or crd.name references');
  }
  if (typeof v.workflowId !== 'string' || typeof v.generation !== 'number' || typeof v.since !== 'string')
    throw bad('workflowId, generation and since are required');
  return v as unknown as OutOfRotationRecord;
}

/** The uid a record key is for (`<uid>/<zone>`), or undefined when the key has no such form. */
function keyUid(key: string): string | undefined {
  const i = key.indexOf('/');
  return i > 0 ? key.slice(0, i) : undefined;
}

/**
 * The records in an annotation value (absent → none). Throws UnreadableRecordsError on anything
 * else. With `uid`, only that uid's records: an entry keyed by another uid (`<other uid>/...`) is
 * none of its business and is not checked; one whose key might be this uid's is.
 */
export function parseRecords(value: string | undefined, uid?: string): RouteRecords {
  if (value === undefined || value === '') return dataObject();
  if (value.length > MAX_RECORDS_LENGTH) throw new UnreadableRecordsError(`${OUT_OF_ROTATION_ANNOTATION} is longer than ${MAX_RECORDS_LENGTH} characters`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new UnreadableRecordsError(`${OUT_OF_ROTATION_ANNOTATION} is not JSON`);
  }
  if (!isObject(parsed)) throw new UnreadableRecordsError(`${OUT_OF_ROTATION_ANNOTATION} must be a JSON object keyed by <uid>/<zone>`);
  const entries = Object.entries(parsed);
  if (entries.length > MAX_RECORDS_PER_ROUTE)
    throw new UnreadableRecordsError(`${OUT_OF_ROTATION_ANNOTATION} holds more than ${MAX_RECORDS_PER_ROUTE} records`);
  const out: RouteRecords = dataObject();
  for (const [k, v] of entries) {
    const owner = keyUid(k);
    if (uid !== undefined && owner !== undefined && owner !== uid) continue;
    out[k] = checkRecord(k, v);
  }
  return out;
}

/** The annotation value for `records`, or null (delete the annotation) when there are none. */
export function formatRecords(records: RouteRecords): string | null {
  const keys = Object.keys(records).sort();
  if (keys.length === 0) return null;
  return JSON.stringify(Object.fromEntries(keys.map((k) => [k, records[k]])));
}
