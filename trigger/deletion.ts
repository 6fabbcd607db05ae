// An object being deleted, once no workflow of it runs: what holds the finalizer (its verified
// route records), the status that says so, and releasing the finalizer. A record that is not
// verified (api/record-verification.ts) is reported and holds nothing: a forged or garbled
// annotation cannot keep an object from being deleted.
import { ROUTE_RECORDS_FINALIZER } from '../api/constants';
import { describeUnverified, recordExpectation, type UnverifiedRecord } from '../api/record-verification';
import { OUT_OF_ROTATION_ANNOTATION, RELEASE_COMMAND, type RecordedRoute } from '../api/route-records';
import type { ObjectGeneration, VMDistributedClusterStatus } from '../api/types';
import { recordedZones } from '../kube/route-records';
import type { VmdcObject } from '../kube/vmdc-object';
import { tryCreateEvent, type KubeOps } from './kube';
import type { Logger } from './log';

/** What keeps a deleted object's finalizer, once no workflow of it runs, and the records that were not verified. */
export interface DeletionBlock {
  routes: ReadonlyArray<RecordedRoute>;
  unverified: ReadonlyArray<UnverifiedRecord>;
}

/**
 * Pure: the status the trigger writes while a deleted object is held by its finalizer — the zones
 * the route records show out of reads (`zonesOutOfRotation`, [I5]) and, in
 * `message`, on which routes and how to release them, and which records are not acted on.
 */
export function deletionBlockedStatus(
  og: Pick<ObjectGeneration, 'namespace' | 'uid'>,
  block: DeletionBlock,
): Pick<VMDistributedClusterStatus, 'message' | 'zonesOutOfRotation'> {
  const held = `being deleted, held by finalizer ${ROUTE_RECORDS_FINALIZER}`;
  const notActedOn = block.unverified.length > 0 ? `; not acted on (unverified): ${block.unverified.map(describeUnverified).join('; ')}` : '';
  const zones = recordedZones(block.routes);
  const list = zones.map((z) => `${z.zone} (${z.removals.map((r) => `${r.route.kind} ${r.route.name}`).join(', ')})`).join(', ');
  const zone = zones.length === 1 ? zones[0]!.zone : '<zone>';
  return {
    message:
      `${held}: ${zones.length === 1 ? 'zone' : 'zones'} out of read rotation: ${list}; ` +
      `release ${zones.length === 1 ? 'it' : 'each'} with \`${RELEASE_COMMAND} --namespace ${og.namespace} --uid ${og.uid} --zone ${zone}\`, ` +
      `or restore those routes and remove their ${OUT_OF_ROTATION_ANNOTATION} records by hand${notActedOn}`,
    zonesOutOfRotation: zones.map((z) => z.zone),
  };
}

/**
 * Once no workflow of the deleted object runs (none is left to write one), its route records are
 * final: with none, the finalizer is removed; otherwise the status says what holds it (and a
 * Warning Event, once per state) and the finalizer stays.
 */
export async function releaseOrHold(kube: KubeOps, og: ObjectGeneration, obj: VmdcObject, log: Logger): Promise<'released' | 'held'> {
  const listing = await kube.listRouteRecords(og.namespace, recordExpectation(og.namespace, og.uid, obj));
  const block: DeletionBlock = { routes: listing.verified, unverified: listing.unverified };
  if (block.routes.length === 0) {
    if (block.unverified.length > 0) {
      const message = `route records not acted on, holding nothing (docs/security.md#route-records-are-claims): ${block.unverified.map(describeUnverified).join('; ')}`;
      log.warn(message);
      await tryCreateEvent(kube, obj, 'Warning', 'RouteRecordsUnverified', message, log);
    }
    const r = await kube.removeFinalizer(og, ROUTE_RECORDS_FINALIZER);
    log.info('being deleted: no workflow runs and no zone is out of read rotation; finalizer removed', { result: r });
    return 'released';
  }
  const patch = deletionBlockedStatus(og, block);
  const written = await kube.patchStatus(
    og,
    (fresh) => {
      const st = fresh.status ?? {};
      const zonesSame = patch.zonesOutOfRotation === undefined || JSON.stringify(st.zonesOutOfRotation ?? []) === JSON.stringify(patch.zonesOutOfRotation);
      return st.message === patch.message && zonesSame ? undefined : patch;
    },
    { deleting: true },
  );
  log.warn('being deleted: finalizer kept', { message: patch.message });
  // One Event per state: the status is the memory (restarts and other replicas included).
  if (written) await tryCreateEvent(kube, obj, 'Warning', 'ZoneOutOfRotation', patch.message!, log);
  return 'held';
}
