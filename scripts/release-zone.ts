/**
 * A person's release of a zone that vmrollout took out of read rotation: puts back exactly what the
 * records on the route objects (annotation `vmrollout.io/out-of-rotation` on the VMAuth / VMUsers)
 * say was removed, and deletes those records — the same restore code as the workflow's rejoin
 * (activities/routes.ts), with NO safety check: whether the zone's VMCluster is fit to serve reads
 * is the person's decision. With --vmdc, the object's status then reports what the records say.
 *
 *   npx tsx scripts/release-zone.ts --namespace NS (--vmdc NAME | --uid UID) --zone ZONE [--kubeconfig PATH]
 *   npx tsx scripts/release-zone.ts --namespace NS (--vmdc NAME | --uid UID) --list [--kubeconfig PATH]
 *   npx tsx scripts/release-zone.ts --namespace NS --list          (every record of the namespace, any uid)
 *
 * --uid works when the VMDistributedCluster is already gone (its uid is in `--list` output).
 * Exit codes: 0 done, 1 nothing recorded for that zone / the VMDistributedCluster not found / an
 * API or record error, 2 bad arguments.
 */
import { parseArgs } from 'node:util';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { GROUP, PLURAL, VERSION } from '../api/constants';
import { UnreadableRecordsError } from '../api/route-records';
import { KubeObjects } from '../activities/kube-objects';
import { describeRemoved, restoreRecordedZone } from '../activities/routes';
import { describeError } from '../activities/errors';
import { isNotFound } from '../kube/errors';
import { listAllRouteRecords, listRouteRecords, recordedZones, routeObjectLabel, type RecordedRoute } from '../kube/route-records';
import { vmdcStatusClient, writeVmdcStatus } from '../kube/status-writer';
import { withRecordedZones } from '../activities/status';
import type { VmdcObject } from '../trigger/vmdc-object';
import { REQUEST_TIMEOUT_MS, withRequestTimeout } from '../kube/request-timeout';

const USAGE = `usage: npx tsx scripts/release-zone.ts --namespace NS (--vmdc NAME | --uid UID) --zone ZONE [--kubeconfig PATH]
       npx tsx scripts/release-zone.ts --namespace NS [--vmdc NAME | --uid UID] --list [--kubeconfig PATH]`;

class UsageError extends Error {}
class Refused extends Error {}

interface Args {
  namespace: string;
  vmdc?: string;
  uid?: string;
  zone?: string;
  list: boolean;
  kubeconfig?: string;
}

function parse(argv: string[]): Args {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        namespace: { type: 'string', short: 'n' },
        vmdc: { type: 'string' },
        uid: { type: 'string' },
        zone: { type: 'string' },
        list: { type: 'boolean', default: false },
        kubeconfig: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const blank = (k: string, v: string | undefined) => {
    if (v !== undefined && v.trim() === '') throw new UsageError(`--${k} must not be empty`);
  };
  for (const k of ['namespace', 'vmdc', 'uid', 'zone', 'kubeconfig'] as const) blank(k, values[k]);
  if (!values.namespace) throw new UsageError('--namespace is required');
  if (values.vmdc && values.uid) throw new UsageError('give --vmdc or --uid, not both');
  if (values.list) {
    if (values.zone) throw new UsageError('--list takes no --zone');
  } else {
    if (!values.vmdc && !values.uid) throw new UsageError('--vmdc NAME or --uid UID is required');
    if (!values.zone) throw new UsageError('--zone is required (or --list)');
  }
  return { namespace: values.namespace, vmdc: values.vmdc, uid: values.uid, zone: values.zone, list: values.list ?? false, kubeconfig: values.kubeconfig };
}

const timeout = withRequestTimeout(REQUEST_TIMEOUT_MS);

async function vmdcUid(api: CustomObjectsApi, namespace: string, name: string): Promise<string> {
  try {
    const obj = (await api.getNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace, name }, timeout)) as { metadata?: { uid?: string } };
    if (!obj.metadata?.uid) throw new Refused(`VMDistributedCluster ${namespace}/${name} has no uid`);
    return obj.metadata.uid;
  } catch (err) {
    if (isNotFound(err)) {
      throw new Refused(`VMDistributedCluster ${namespace}/${name} not found; if it was deleted, find its uid with --list (no --vmdc) and pass --uid UID`);
    }
    throw err;
  }
}

function printList(records: RecordedRoute[], namespace: string, withOwner: boolean): void {
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
  console.log(line(header));
  for (const row of rows) console.log(line(row));
}

async function main(args: Args): Promise<void> {
  const kc = new KubeConfig();
  if (args.kubeconfig) kc.loadFromFile(args.kubeconfig);
  else kc.loadFromDefault();
  const kube = new KubeObjects(kc);
  const { namespace } = args;
  const uid = args.uid ?? (args.vmdc ? await vmdcUid(kube.api, namespace, args.vmdc) : undefined);
  const who = args.vmdc ? `VMDistributedCluster ${namespace}/${args.vmdc} (uid ${uid})` : `uid ${uid}`;

  if (args.list) {
    const records = uid ? await listRouteRecords(kube.api, namespace, uid, timeout) : await listAllRouteRecords(kube.api, namespace, timeout);
    if (records.length === 0) {
      console.log(uid ? `no route in namespace ${namespace} records a zone of ${who} out of reads` : `no route in namespace ${namespace} carries an out-of-rotation record`);
      return;
    }
    printList(records, namespace, !uid);
    return;
  }

  const zone = args.zone!;
  const recorded = (await listRouteRecords(kube.api, namespace, uid!, timeout)).filter((r) => r.record.zone === zone);
  if (recorded.length === 0) throw new Refused(`nothing recorded out of reads for zone ${zone} of ${who} in namespace ${namespace}`);
  const vmclusters = [...new Set(recorded.map((r) => `${r.record.vmcluster.namespace}/${r.record.vmcluster.name}`))];
  console.log(`warning: VMCluster ${vmclusters.join(', ')} of zone ${zone} was not checked (operational? write backlog drained?): its reads come back now, on your decision`);
  const restored = await restoreRecordedZone(kube, { namespace, uid: uid!, zone });
  for (const r of restored) {
    const label = routeObjectLabel(r.route, namespace);
    if (!r.record) {
      console.log(`${label}: no longer carries the record (restored meanwhile, or deleted): nothing written`);
      continue;
    }
    const what = r.record.removed.map(describeRemoved);
    console.log(`${label}: ${r.changed ? `put back ${what.length} entr${what.length === 1 ? 'y' : 'ies'}` : 'everything recorded was already there'}; record deleted`);
    for (const w of what) console.log(`  ${w}`);
  }
  console.log(`zone ${zone} of ${who} is back in read rotation on ${restored.filter((r) => r.record).length} route(s)`);
  if (args.vmdc && (await reportInStatus(kc, namespace, args.vmdc, uid!, kube))) console.log(`status.zonesOutOfRotation of ${who} updated from the records`);
}

/**
 * The status says what the records say (a workflow that is still running would write the same at
 * its next status write; one that has ended never writes again).
 */
async function reportInStatus(kc: KubeConfig, namespace: string, name: string, uid: string, kube: KubeObjects): Promise<boolean> {
  const recorded = recordedZones(await listRouteRecords(kube.api, namespace, uid, timeout)).map((z) => z.zone);
  return writeVmdcStatus(vmdcStatusClient<VmdcObject>(kc), { namespace, name }, (fresh) => {
    if (fresh.metadata?.uid !== uid || !fresh.status) return undefined;
    const { zonesOutOfRotation, zones } = withRecordedZones(fresh.status, recorded);
    return { zonesOutOfRotation, ...(zones ? { zones } : {}) };
  });
}

let args: Args;
try {
  args = parse(process.argv.slice(2));
} catch (err) {
  const msg = (err as Error).message;
  console.error(`error: ${msg}\n${USAGE}`);
  process.exit(2);
}

main(args).then(
  () => process.exit(0),
  (err: unknown) => {
    if (err instanceof Refused) console.error(`error: ${err.message}`);
    else if (err instanceof UnreadableRecordsError) console.error(`error: ${err.message}; fix or remove the annotation by hand`);
    else if (err instanceof ApplicationFailure) console.error(`error: ${err.message}`);
    else console.error(`error: ${describeError(err)}`);
    process.exit(1);
  },
);
