// An object being deleted, once no workflow of it runs: what holds the finalizer (its route
// records, or records that cannot be read), the status that says so, and releasing the finalizer.
import { ROUTE_RECORDS_FINALIZER } from '../api/constants';
import { OUT_OF_ROTATION_ANNOTATION, RELEASE_COMMAND, UnreadableRecordsError } from '../api/route-records';
import type { ObjectGeneration, VMDistributedClusterStatus } from '../api/types';
import { recordedZones, type RecordedRoute } from '../kube/route-records';
import type { VmdcObject } from '../kube/vmdc-object';
import { tryCreateEvent, type KubeOps } from './kube';
import type { Logger } from './log';

/** What keeps a deleted object's finalizer, once no workflow of it runs. */
export type DeletionBlock = { type: 'records'; routes: ReadonlyArray<RecordedRoute> } | { type: 'unreadable'; reason: string };

/**
 * Pure: the status the trigger writes while a deleted object is held by its finalizer — the zones
 * the route records show out of reads (`zonesOutOfRotation`, [I5]) and, in
 * `message`, on which routes and how to release them; or why the records cannot be read.
 */
export function deletionBlockedStatus(
  og: Pick<ObjectGeneration, 'namespace' | 'uid'>,
  block: DeletionBlock,
): Pick<VMDistributedClusterStatus, 'message' | 'zonesOutOfRotation'> {
  const held = `being deleted, held by finalizer ${ROUTE_RECORDS_FINALIZER}`;
  if (block.type === 'unreadable') {
    return {
      message: `${held}: its ${OUT_OF_ROTATION_ANNOTATION} records cannot be read (${block.reason}); restore the routes they describe and fix or remove that annotation by hand`,
    };
  }
  const zones = recordedZones(block.routes);
  const list = zones.map((z) => `${z.zone} (${z.removals.map((r) => `${r.route.kind} ${r.route.name}`).join(', ')})`).join(', ');
  const zone = zones.length === 1 ? zones[0]!.zone : '<zone>';
  return {
    message:
      `${held}: ${zones.length === 1 ? 'zone' : 'zones'} out of read rotation: ${list}; ` +
      `release ${zones.length === 1 ? 'it' : 'each'} with \`${RELEASE_COMMAND} --namespace ${og.namespace} --uid ${og.uid} --zone ${zone}\`, ` +
      `or restore those routes and remove their ${OUT_OF_ROTATION_ANNOTATION} records by hand`,
    zonesOutOfRotation: zones.map((z) => z.zone),
  };
}

/**
 * Once no workflow of the deleted object runs (none is left to write one), its route records are
 * final: with none, the finalizer is removed; otherwise the status says what holds it (and a
 * Warning Event, once per state) and the finalizer stays.
 */
export async function releaseOrHold(kube: KubeOps, og: ObjectGeneration, obj: VmdcObject, log: Logger): Promise<'released' | 'held'> {
  let block: DeletionBlock;
  try {
    const routes = await kube.listRouteRecords(og.namespace, og.uid);
    if (routes.length === 0) {
      const r = await kube.removeFinalizer(og, ROUTE_RECORDS_FINALIZER);
      log.info('being deleted: no workflow runs and no zone is out of read rotation; finalizer removed', { result: r });
      return 'released';
    }
    block = { type: 'records', routes };
  } catch (err) {
    if (!(err instanceof UnreadableRecordsError)) throw err;
    block = { type: 'unreadable', reason: err.message };
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
