/**
 * `kubectl vmdc release-zone`: a person's release of a zone that vmrollout took out of read
 * rotation: puts back exactly what the records on the route objects (annotation
 * `vmrollout.io/out-of-rotation` on the VMAuth / VMUsers) say was removed, and deletes those
 * records — the same restore code as the workflow's rejoin (activities/routes/edit-routes.ts), with NO safety
 * check of the reads: whether the zone's VMCluster is fit to serve reads is the person's decision.
 * A record is a claim (docs/security.md#route-records-are-claims): one not bound to that uid and
 * the object carrying it, or holding anything but its own VMCluster, is listed and never restored.
 * With a name (--vmdc), the object's status then reports what the records say.
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
import {
  adoptionIssue,
  describeUnverified,
  recordExpectation,
  type RecordExpectation,
  type RecordListing,
  type RouteObjectView,
} from '../../api/record-verification';
import { parseRecords, UnreadableRecordsError, type RecordedRoute } from '../../api/route-records';
import { listRouteRecords, listRouteViews, recordedZones, routeObjectLabel } from '../../kube/route-records';
import { eventCreator, type InvolvedVmdc } from '../../kube/events';
import { REQUEST_TIMEOUT_MS, withRequestTimeout } from '../../kube/request-timeout';
import { vmdcStatusClient, writeVmdcStatus } from '../../kube/status-writer';
import type { VmdcObject } from '../../kube/vmdc-object';
import type { Command } from '../args';
import { Refused, RELEASE_ZONE_EXIT } from '../exit-codes';
import type { Io } from '../io';
import { getVmdc, loadKube, NotFound, type Kube } from '../kube';
import { actionPrinter } from '../output';

type ReleaseZoneCommand = Extract<Command, { verb: 'release-zone' }>;

const timeout = withRequestTimeout(REQUEST_TIMEOUT_MS);

/** The object's uid and what its records are verified against (its spec, read now). */
async function vmdcExpectation(kube: Kube, name: string): Promise<RecordExpectation> {
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
  return recordExpectation(kube.namespace, obj.metadata.uid, obj);
}

/** Every record of the namespace, any uid, each checked against its own uid and route (no spec). */
function allRecords(views: readonly RouteObjectView[]): RecordListing {
  const out: RecordListing = { verified: [], unverified: [] };
  for (const view of views) {
    try {
      for (const record of Object.values(parseRecords(view.annotation))) {
        const issue = adoptionIssue(record, view, { namespace: view.namespace, uid: record.vmdc.uid });
        if (issue) out.unverified.push({ route: view.route, zone: record.zone, reason: `record of zone ${record.zone} ${issue}` });
        else out.verified.push({ route: view.route, record });
      }
    } catch (err) {
      if (!(err instanceof UnreadableRecordsError)) throw err;
      out.unverified.push({ route: view.route, reason: err.message });
    }
  }
  return out;
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
  const expect: RecordExpectation | undefined = cmd.vmdc ? await vmdcExpectation(kube, cmd.vmdc) : cmd.uid ? { namespace, uid: cmd.uid } : undefined;
  const uid = expect?.uid;
  const who = cmd.vmdc ? `VMDistributedCluster ${namespace}/${cmd.vmdc} (uid ${uid})` : `uid ${uid}`;
  const out = actionPrinter(cmd.output, io.print);
  const doc = { verb: cmd.verb, namespace, name: cmd.vmdc, uid };

  if (cmd.list) {
    const listing = expect
      ? await listRouteRecords(objects.api, namespace, expect, timeout)
      : allRecords(await listRouteViews(objects.api, namespace, timeout));
    const records = listing.verified;
    for (const u of listing.unverified) out.line(`not acted on: ${describeUnverified(u)}`);
    out.document({
      ...doc,
      result: 'listed',
      records: records.map((r) => ({
        vmdc: r.record.vmdc,
        zone: r.record.zone,
        route: routeObjectLabel(r.route, namespace),
        vmcluster: r.record.vmcluster,
        since: r.record.since,
        generation: r.record.generation,
        workflowId: r.record.workflowId,
      })),
      notActedOn: listing.unverified.map(describeUnverified),
    });
    if (records.length === 0) {
      out.line(
        uid
          ? `no route in namespace ${namespace} records a zone of ${who} out of reads`
          : `no route in namespace ${namespace} carries an out-of-rotation record`,
      );
      return RELEASE_ZONE_EXIT.ok;
    }
    if (cmd.output === 'text') printList(io, records, namespace, !uid);
    return RELEASE_ZONE_EXIT.ok;
  }

  const zone = cmd.zone!;
  const restored = await restoreRecordedZone(objects, expect!, zone);
  if (restored.length === 0) throw new Refused(`nothing recorded out of reads for zone ${zone} of ${who} in namespace ${namespace}`);
  const vmclusters = [...new Set(restored.flatMap((r) => (r.record ? [`${r.record.vmcluster.namespace}/${r.record.vmcluster.name}`] : [])))];
  if (vmclusters.length > 0) {
    out.line(
      `warning: VMCluster ${vmclusters.join(', ')} of zone ${zone} was not checked (operational? write backlog drained?): its reads came back on your decision`,
    );
  }
  const routes: { route: string; result: 'restored' | 'already-there' | 'no-record' | 'refused'; reason?: string; putBack?: string[] }[] = [];
  for (const r of restored) {
    const label = routeObjectLabel(r.route, namespace);
    if (r.refused) {
      out.line(`${label}: not restored, nothing written: ${r.refused}`);
      routes.push({ route: label, result: 'refused', reason: r.refused });
      continue;
    }
    if (!r.record) {
      out.line(`${label}: no longer carries the record (restored meanwhile, or deleted): nothing written`);
      routes.push({ route: label, result: 'no-record' });
      continue;
    }
    const what = r.record.removed.map(describeRemoved);
    out.line(
      `${label}: ${r.changed ? `put back ${what.length} entr${what.length === 1 ? 'y' : 'ies'}` : 'everything recorded was already there'}; record deleted`,
    );
    for (const w of what) out.line(`  ${w}`);
    routes.push({ route: label, result: r.changed ? 'restored' : 'already-there', putBack: r.changed ? what : [] });
  }
  const refused = restored.filter((r) => r.refused).length;
  out.line(`zone ${zone} of ${who} is back in read rotation on ${restored.filter((r) => r.record).length} route(s)`);
  // Warnings (an Event not created) go to stderr with a document: stdout holds the document only.
  if (cmd.vmdc) await tellReleased(kube.kc, { metadata: { namespace, name: cmd.vmdc, uid } }, zone, cmd.output === 'text' ? io : { ...io, print: io.warn });
  const statusUpdated = cmd.vmdc !== undefined && expect !== undefined && (await reportInStatus(kube.kc, namespace, cmd.vmdc, expect, objects));
  if (statusUpdated) out.line(`status.zonesOutOfRotation of ${who} updated from the records`);
  out.document({ ...doc, zone, result: refused > 0 ? 'partly-refused' : 'released', vmclustersNotChecked: vmclusters, routes, statusUpdated });
  if (refused > 0) throw new Refused(`${refused} record(s) of zone ${zone} not restored (above): fix or remove them by hand`);
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
async function reportInStatus(kc: KubeConfig, namespace: string, name: string, expect: RecordExpectation, objects: KubeObjects): Promise<boolean> {
  const { uid } = expect;
  const recorded = recordedZones((await listRouteRecords(objects.api, namespace, expect, timeout)).verified).map((z) => z.zone);
  return writeVmdcStatus(vmdcStatusClient<VmdcObject>(kc), { namespace, name }, (fresh) => {
    if (fresh.metadata?.uid !== uid || !fresh.status) return undefined;
    const { zonesOutOfRotation, zones } = withRecordedZones(fresh.status, recorded);
    return { zonesOutOfRotation, ...(zones ? { zones } : {}) };
  });
}
