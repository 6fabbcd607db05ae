// What the status says of the zones out of reads: what the records on the route objects say
// (api/route-records.ts), whoever writes the status (the rollout's status writes, and
// `kubectl vmdc release-zone` after a person's release). Pure.
import type { ConditionUpdate } from './conditions';
import type { Condition, VMDistributedClusterStatus } from './types';

/** A zone's status message when a person released it (the records gone, the workflow did not put it back). */
export const RELEASED_BY_HAND = 'back in read rotation: released by hand';

/**
 * Which zones the status reports out of reads — what the records on the route objects say
 * ([I5]), plus a zone whose leaving the workflow has just announced (phase
 * LeavingReads: its edit comes next). A zone the workflow still remembers as out but that nobody records any more (released by
 * a person) is not reported; a recorded zone the workflow does not know of is. Each reported zone
 * keeps, or gets, a message saying why.
 */
export function withRecordedZones(status: VMDistributedClusterStatus, recorded: readonly string[]): VMDistributedClusterStatus {
  const announced = (status.zones ?? []).filter((z) => z.phase === 'LeavingReads' && status.zonesOutOfRotation?.includes(z.name)).map((z) => z.name);
  const out = new Set([...recorded, ...announced]);
  const order = (status.zones ?? []).map((z) => z.name);
  const zonesOutOfRotation = [...out].sort((a, b) => (order.indexOf(a) + 1 || Infinity) - (order.indexOf(b) + 1 || Infinity) || a.localeCompare(b));
  const zones = status.zones?.map((z) => {
    if (out.has(z.name)) return z.message ? z : { ...z, message: 'out of read rotation: recorded on its routes' };
    if (status.zonesOutOfRotation?.includes(z.name)) return { ...z, message: RELEASED_BY_HAND };
    return z;
  });
  return { ...status, zonesOutOfRotation, ...(zones ? { zones } : {}) };
}

/** The condition that reports route records vmrollout does not act on (api/record-verification.ts). */
export const RECORDS_VERIFIED = 'RecordsVerified' as const;

/**
 * Pure: the RecordsVerified condition to write, given the records of this object that were not
 * verified (each described in one line) and the conditions now on the object: False naming them
 * while there are any; True once they are gone (only when the condition is there: an object that
 * never had one gets none).
 */
export function recordsCondition(unverified: readonly string[], current: readonly Condition[] | undefined): ConditionUpdate | undefined {
  if (unverified.length > 0) {
    return {
      type: RECORDS_VERIFIED,
      status: 'False',
      reason: 'UnverifiedRecords',
      message: `route records not acted on (docs/security.md#route-records-are-claims): ${unverified.join('; ')}`,
    };
  }
  if (!current?.some((c) => c.type === RECORDS_VERIFIED && c.status !== 'True')) return undefined;
  return { type: RECORDS_VERIFIED, status: 'True', reason: 'Verified', message: 'every route record of this object is verified' };
}
