/**
 * `kubectl vmdc release-zone`: a person's release of a zone that vmrollout took out of read
 * rotation: puts back exactly what the records on the route objects (annotation
 * `vmrollout.io/out-of-rotation` on the VMAuth / VMUsers) say was removed, and deletes those
 * records — the same restore code as the workflow's rejoin (activities/routes/edit-routes.ts), with NO safety
 * check: whether the zone's VMCluster is fit to serve reads is the person's decision. With a name
 * (--vmdc), the object's status then reports what the records say.
 *
 *   kubectl vmdc release-zone -n NS (NAME | --vmdc NAME | --uid UID) --zone ZONE
 *   kubectl vmdc release-zone -n NS (NAME | --vmdc NAME | --uid UID) --list
 *   kubectl vmdc release-zone -n NS --list          (every record of the namespace, any uid)
 *
 * --uid works when the VMDistributedCluster is already gone (its uid is in `--list` output).
 * Exit codes (RELEASE_ZONE_EXIT): 0 done, 1 nothing recorded for that zone / the
 * VMDistributedCluster not found / an API or record error, 2 bad arguments.
 */
import * as os from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeObjects } from '../../kube/custom-objects';
import { describeRemoved, restoreRecordedZone } from '../../kube/route-objects';
import { withRecordedZones } from '../../api/recorded-status';
import { listAllRouteRecords, listRouteRecords, recordedZones, routeObjectLabel, type RecordedRoute } from '../../kube/route-records';
import { eventCreator, type InvolvedVmdc } from '../../kube/events';
import { REQUEST_TIMEOUT_MS, withRequestTimeout } from '../../kube/request-timeout';
import { vmdcStatusClient, writeVmdcStatus } from '../../kube/status-writer';
import type { VmdcObject } from '../../kube/vmdc-object';
import type { Command } from '../args';
import { Refused, RELEASE_ZONE_EXIT } from '../exit-codes';
import type { Io } from '../io';
import { getVmdc, loadKube, NotFound, type Kube } from '../kube';

type ReleaseZoneCommand = Extract<Command, { verb: 'release-zone' }>;

const timeout = withRequestTimeout(REQUEST_TIMEOUT_MS);

async function vmdcUid(kube: Kube, name: string): Promise<string> {
  let obj: VmdcObject;
  try {
    obj = await getVmdc(kube, name);
  } catch (err) {
    if (err instanceof NotFound) {
      throw new Refused(`VMDistributedCluster ${kube.namespace}/${name} not found; if it was deleted, find its uid with --list (no --vmdc) and pass --uid UID`);
    }
    throw err;
  }
  if (!obj.metadata?.uid) throw new Refused(`VMDistributedCluster ${kube.namespace}/${name} has no uid`);
  return obj.metadata.uid;
}

function printList(io: Io, records: RecordedRoute[], namespace: string, withOwner: boolean): void {
  const rows = records.map((r) => [
    ...(withOwner ? [`${r.record.vmdc.namespace}/${r.record.vmdc.name}`, r.record.vmdc.uid] : []),
    r.record.zone,
    routeObjectLabel(r.route, namespace),
    `VMCluster ${r.record.vmcluster.namespace}/${r.record.vmcluster.name}`,
    r.record.since,
    String(r.record.generation),
    r.record.workflowId,
  ]);
  const header = [...(withOwner ? ['VMDC', 'UID'] : []), 'ZONE', 'ROUTE', 'VMCLUSTER', 'SINCE', 'GENERATION', 'WORKFLOW'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  io.print(line(header));
  for (const row of rows) io.print(line(row));
}

export async function releaseZone(cmd: ReleaseZoneCommand, io: Io): Promise<number> {
  const kube = loadKube({ ...cmd.kube, namespace: cmd.namespace }, cmd.verb);
  const objects = new KubeObjects(kube.kc);
  const { namespace } = cmd;
  const uid = cmd.uid ?? (cmd.vmdc ? await vmdcUid(kube, cmd.vmdc) : undefined);
  const who = cmd.vmdc ? `VMDistributedCluster ${namespace}/${cmd.vmdc} (uid ${uid})` : `uid ${uid}`;

  if (cmd.list) {
    const records = uid ? await listRouteRecords(objects.api, namespace, uid, timeout) : await listAllRouteRecords(objects.api, namespace, timeout);
    if (records.length === 0) {
      io.print(
        uid
          ? `no route in namespace ${namespace} records a zone of ${who} out of reads`
          : `no route in namespace ${namespace} carries an out-of-rotation record`,
      );
      return RELEASE_ZONE_EXIT.ok;
    }
    printList(io, records, namespace, !uid);
    return RELEASE_ZONE_EXIT.ok;
  }

  const zone = cmd.zone!;
  const recorded = (await listRouteRecords(objects.api, namespace, uid!, timeout)).filter((r) => r.record.zone === zone);
  if (recorded.length === 0) throw new Refused(`nothing recorded out of reads for zone ${zone} of ${who} in namespace ${namespace}`);
  const vmclusters = [...new Set(recorded.map((r) => `${r.record.vmcluster.namespace}/${r.record.vmcluster.name}`))];
  io.print(
    `warning: VMCluster ${vmclusters.join(', ')} of zone ${zone} was not checked (operational? write backlog drained?): its reads come back now, on your decision`,
  );
  const restored = await restoreRecordedZone(objects, { namespace, uid: uid!, zone });
  for (const r of restored) {
    const label = routeObjectLabel(r.route, namespace);
    if (!r.record) {
      io.print(`${label}: no longer carries the record (restored meanwhile, or deleted): nothing written`);
      continue;
    }
    const what = r.record.removed.map(describeRemoved);
    io.print(
      `${label}: ${r.changed ? `put back ${what.length} entr${what.length === 1 ? 'y' : 'ies'}` : 'everything recorded was already there'}; record deleted`,
    );
    for (const w of what) io.print(`  ${w}`);
  }
  io.print(`zone ${zone} of ${who} is back in read rotation on ${restored.filter((r) => r.record).length} route(s)`);
  if (cmd.vmdc) await tellReleased(kube.kc, { metadata: { namespace, name: cmd.vmdc, uid } }, zone, io);
  if (cmd.vmdc && (await reportInStatus(kube.kc, namespace, cmd.vmdc, uid!, objects))) io.print(`status.zonesOutOfRotation of ${who} updated from the records`);
  return RELEASE_ZONE_EXIT.ok;
}

/** The Event a release is (docs/operations.md#events): only told, so one that cannot be created is a warning. */
async function tellReleased(kc: KubeConfig, obj: InvolvedVmdc, zone: string, io: Io): Promise<void> {
  const createEvent = eventCreator(kc, { component: 'kubectl-vmdc', instance: os.userInfo().username }, REQUEST_TIMEOUT_MS);
  await createEvent(
    obj,
    'Normal',
    'ZoneReleased',
    `zone ${zone} back in read rotation: released by a person (kubectl vmdc release-zone), its records removed`,
  ).catch((err: unknown) => io.print(`warning: could not create the ZoneReleased Event: ${err instanceof Error ? err.message : String(err)}`));
}

/**
 * The status says what the records say (a workflow that is still running would write the same at
 * its next status write; one that has ended never writes again).
 */
async function reportInStatus(kc: KubeConfig, namespace: string, name: string, uid: string, objects: KubeObjects): Promise<boolean> {
  const recorded = recordedZones(await listRouteRecords(objects.api, namespace, uid, timeout)).map((z) => z.zone);
  return writeVmdcStatus(vmdcStatusClient<VmdcObject>(kc), { namespace, name }, (fresh) => {
    if (fresh.metadata?.uid !== uid || !fresh.status) return undefined;
    const { zonesOutOfRotation, zones } = withRecordedZones(fresh.status, recorded);
    return { zonesOutOfRotation, ...(zones ? { zones } : {}) };
  });
}
