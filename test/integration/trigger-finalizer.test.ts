// The trigger's finalizer (vmrollout.io/route-records) on a real kube-apiserver + Temporal dev
// server with the real rollout workflow and activities (environment: trigger-env.ts): a deleted
// VMDistributedCluster stays until no rollout workflow of it runs and no route record names it.
// A zone is put out of read rotation honestly: the real workflow takes it out and patches its
// VMCluster, which never becomes operational (no operator runs), so the cancellation cleanup keeps
// it out. It is released with the real `kubectl vmdc release-zone` (cli/main.ts). Every wait polls real state.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { WorkflowNotFoundError } from '@temporalio/client';
import { ROUTE_RECORDS_FINALIZER, VM_GROUP, VM_KINDS, VM_VERSION } from '../../api/constants';
import { OUT_OF_ROTATION_ANNOTATION, parseRecords } from '../../api/route-records';
import type { TriggerHandle } from '../../trigger/main';
import { REPO_ROOT } from '../infra/harness/tools';
import { waitFor } from '../infra/harness/processes';
import { mergePatch, T, triggerEnv } from './trigger-env';

jest.setTimeout(180_000);

const NS = 'trigger-fin';
const OTHER = 'example.com/keep-me';
/** Short, so that a release (which changes only the route objects) is noticed promptly. */
const RECHECK_MS = 1000;

const E = triggerEnv({ name: 'trigger-fin', namespaces: [NS], namespace: NS });
const {
  trigger,
  logTail,
  create,
  get,
  find,
  patchSpec,
  patchMetadata,
  remove,
  gone,
  getVm,
  vmObjects,
  setOperational,
  idOf,
  recorded,
  progressUntil,
  statusName,
  workflowsOf,
  events,
  spec,
} = E;

let main: TriggerHandle;

beforeAll(async () => {
  await E.setup();
  // No relist during a test (10 min): what notices a release is the finalizer recheck timer.
  main = await trigger([NS], {}, { finalizerRecheckIntervalMs: RECHECK_MS, relistIntervalMs: 600_000 });
  await main.synced;
}, 240_000);

afterAll(() => E.teardown(), 120_000);

const zoneEvents = async (name: string) => (await events(name)).filter((e) => e.reason === 'ZoneOutOfRotation');

/** The trigger's "finalizer kept" decisions about `name` so far (its log): each recheck adds one. */
function keptDecisions(name: string): number {
  let n = 0;
  for (const f of fs.readdirSync(E.logDir).filter((x) => x.startsWith('trigger-'))) {
    for (const line of fs.readFileSync(path.join(E.logDir, f), 'utf8').split('\n')) {
      if (line.includes('"being deleted: finalizer kept"') && line.includes(`"object":"${NS}/${name}"`)) n++;
    }
  }
  return n;
}

async function annotations(kind: 'VMAuth' | 'VMUser', name: string): Promise<Record<string, string>> {
  return (await getVm(kind, NS, name)).metadata.annotations ?? {};
}

async function setAnnotation(kind: 'VMAuth' | 'VMUser', name: string, value: string | null): Promise<void> {
  await E.custom.patchNamespacedCustomObject(
    {
      group: VM_GROUP,
      version: VM_VERSION,
      plural: VM_KINDS[kind],
      namespace: NS,
      name,
      body: { metadata: { annotations: { [OUT_OF_ROTATION_ANNOTATION]: value } } },
    },
    mergePatch(),
  );
}

/** The names of the VMClusters a route's vmselect targetRefs name. */
function routedVmclusters(routeSpec: Record<string, unknown>): string[] {
  const refs = ((routeSpec.unauthorizedUserAccessSpec as { targetRefs?: unknown[] } | undefined)?.targetRefs ?? routeSpec.targetRefs ?? []) as Array<{
    crd?: { objects?: Array<{ name: string }>; name?: string };
  }>;
  return refs.flatMap((r) => [...(r.crd?.objects ?? []).map((o) => o.name), ...(r.crd?.name ? [r.crd.name] : [])]).sort();
}

describe('the trigger finalizer (real kube-apiserver + Temporal dev server)', () => {
  it('a started rollout gets the finalizer, other finalizers survive, a dropped one is added back; delete with no zone out → cancelled, our finalizer removed (the other kept)', async () => {
    await vmObjects('f-plain');
    const o = await create('f-plain', spec('f-plain'), NS, { finalizers: [OTHER] });
    const cur = await recorded(o, 1);
    expect(cur.metadata.finalizers).toEqual([OTHER, ROUTE_RECORDS_FINALIZER]);
    const wid = idOf(o, 1);
    await progressUntil(wid, (p) => p.currentStep === 'Preparing', 'preparing');

    // An object from before the finalizer (or someone dropped it) while its workflow runs: added back.
    await patchMetadata('f-plain', { finalizers: [OTHER] });
    const readded = await waitFor(
      async () => {
        const c = await get('f-plain');
        return c.metadata.finalizers?.includes(ROUTE_RECORDS_FINALIZER) ? c : undefined;
      },
      { timeoutMs: T, description: 'the finalizer added back', diagnostics: logTail },
    );
    expect(readded.metadata.finalizers).toEqual([OTHER, ROUTE_RECORDS_FINALIZER]);

    const generation = readded.metadata.generation;
    await remove('f-plain');
    await waitFor(async () => (await statusName(wid)) === 'CANCELLED', { timeoutMs: T, description: 'workflow cancelled', diagnostics: logTail });
    // Our finalizer goes; the other one (someone else's) stays and keeps the object.
    const held = await waitFor(
      async () => {
        const c = await find('f-plain');
        return c && !c.metadata.finalizers?.includes(ROUTE_RECORDS_FINALIZER) ? c : undefined;
      },
      { timeoutMs: T, description: 'our finalizer removed', diagnostics: logTail },
    );
    expect(held.metadata.finalizers).toEqual([OTHER]);
    expect(held.metadata.deletionTimestamp).toEqual(expect.any(String));
    // The API server bumped metadata.generation when it set deletionTimestamp (why the trigger's
    // deletion status guard does not insist on a generation: trigger/kube.ts statusGuard).
    expect(held.metadata.generation).toBe(generation + 1);
    // Nothing was out of reads: no warning; the deletion started nothing.
    expect(await zoneEvents('f-plain')).toEqual([]);
    expect(await workflowsOf('f-plain')).toEqual([wid]);

    await patchMetadata('f-plain', { finalizers: null }); // the other controller lets go
    await gone('f-plain');
  });

  it('delete while a zone is out → kept; status and a Warning Event name the zone and the release; an unreadable record holds nothing and is named; release-zone → gone within the recheck interval', async () => {
    const name = 'f-out';
    await vmObjects(name);
    const o = await create(name, spec(name));
    await recorded(o, 1);
    const uid = o.metadata.uid;
    const wid = idOf(o, 1);
    // Play the operator for the VMAgent only: zone az-a leaves reads, its VMCluster is patched and
    // never becomes operational.
    await setOperational('VMAgent', NS, name);
    const p = await progressUntil(wid, (x) => x.currentZone === 'az-a' && x.currentStep === 'WaitingOperational', 'az-a patched, waiting operational');
    expect(p.zonesOutOfRotation).toEqual(['az-a']);
    // Before az-a left, az-b (which carries the reads) was operational with an empty backlog on the real vmagent's page.
    expect(await E.activityResults(wid, 'waitCarriersReady')).toEqual([
      { message: 'zones carrying the reads are operational with empty vmagent backlogs: az-b' },
    ]);
    expect(routedVmclusters((await getVm('VMAuth', NS, name)).spec)).toEqual([`${name}-b`]);
    expect(Object.keys(parseRecords((await annotations('VMAuth', name))[OUT_OF_ROTATION_ANNOTATION]))).toEqual([`${uid}/az-a`]);

    await remove(name);
    // The cleanup keeps the patched zone out (not operational) and the workflow ends; the object stays.
    await waitFor(async () => (await statusName(wid)) === 'CANCELLED', { timeoutMs: T, description: 'workflow cancelled', diagnostics: logTail });
    const held = await waitFor(
      async () => {
        const c = await get(name);
        return c.status?.message?.startsWith('being deleted') ? c : undefined;
      },
      { timeoutMs: T, description: 'the deletion report in the status', diagnostics: logTail },
    );
    expect(held.metadata.deletionTimestamp).toEqual(expect.any(String));
    expect(held.metadata.finalizers).toEqual([ROUTE_RECORDS_FINALIZER]);
    expect(held.status?.phase).toBe('Cancelled'); // what the workflow left
    expect(held.status?.zonesOutOfRotation).toEqual(['az-a']);
    const message = held.status!.message!;
    expect(message).toContain(`zone out of read rotation: az-a (VMAuth ${name}, VMUser ${name}-a, VMUser ${name}-b)`);
    expect(message).toContain(`\`kubectl vmdc release-zone --namespace ${NS} --uid ${uid} --zone az-a\``);
    const ev = await waitFor(async () => (await zoneEvents(name))[0], { timeoutMs: T, description: 'ZoneOutOfRotation Event' });
    expect(ev.type).toBe('Warning');
    expect(ev.message).toBe(message);
    expect(ev.involvedObject.uid).toBe(uid);

    // The trigger keeps looking (recheck timer) without repeating the Event for the same state.
    const seen = keptDecisions(name);
    await waitFor(() => keptDecisions(name) >= seen + 3, { timeoutMs: T, description: 'three more rechecks', diagnostics: logTail });
    expect(await zoneEvents(name)).toHaveLength(1);

    // A spec edit while terminating bumps the generation and starts nothing; the report stays.
    const edited = await patchSpec(name, { clusterVersion: 'v1.151.0-cluster' });
    await waitFor(() => keptDecisions(name) >= seen + 5, { timeoutMs: T, description: 'rechecks after the edit', diagnostics: logTail });
    await main.idle();
    await expect(E.client.workflow.getHandle(idOf(o, edited.metadata.generation)).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    expect(await workflowsOf(name)).toEqual([wid]);
    expect((await get(name)).status).toMatchObject({ message, zonesOutOfRotation: ['az-a'] });

    // A record nobody can read holds nothing (docs/security.md#route-records-are-claims): the
    // verified records of the VMUsers still hold the finalizer, and the status names what is not
    // acted on.
    const saved = (await annotations('VMAuth', name))[OUT_OF_ROTATION_ANNOTATION]!;
    await setAnnotation('VMAuth', name, 'not json');
    const unreadable = await waitFor(
      async () => {
        const c = await get(name);
        return c.status?.message?.includes('not acted on (unverified)') ? c : undefined;
      },
      { timeoutMs: T, description: 'unreadable records reported', diagnostics: logTail },
    );
    expect(unreadable.status?.message).toContain(`not acted on (unverified): VMAuth ${name}: ${OUT_OF_ROTATION_ANNOTATION} is not JSON`);
    expect(unreadable.status?.message).toContain(`az-a (VMUser ${name}-a, VMUser ${name}-b)`);
    expect(unreadable.metadata.finalizers).toEqual([ROUTE_RECORDS_FINALIZER]);
    await waitFor(async () => (await zoneEvents(name)).some((e) => e.message === unreadable.status?.message), {
      timeoutMs: T,
      description: 'Warning Event for the changed report',
    });
    await setAnnotation('VMAuth', name, saved);
    await waitFor(async () => ((await get(name)).status?.message === message ? true : undefined), {
      timeoutMs: T,
      description: 'the zone reported again',
      diagnostics: logTail,
    });
    expect((await find(name))?.metadata.finalizers).toEqual([ROUTE_RECORDS_FINALIZER]);

    // A person releases the zone with the documented command (it touches only the routes).
    const run = await promisify(execFile)(
      'npx',
      ['--no-install', 'tsx', 'cli/main.ts', 'release-zone', '--namespace', NS, '--uid', uid, '--zone', 'az-a', '--kubeconfig', E.kube.kubeconfigPath],
      { cwd: REPO_ROOT },
    );
    expect(run.stdout).toContain('back in read rotation');
    expect(routedVmclusters((await getVm('VMAuth', NS, name)).spec)).toEqual([`${name}-a`, `${name}-b`]);
    for (const [kind, n] of [
      ['VMAuth', name],
      ['VMUser', `${name}-a`],
      ['VMUser', `${name}-b`],
    ] as const) {
      expect((await annotations(kind, n))[OUT_OF_ROTATION_ANNOTATION]).toBeUndefined();
    }
    // Only the recheck timer can notice (no watch event, no relist): gone within a few intervals.
    const released = Date.now();
    await gone(name, NS, 10 * RECHECK_MS + 5_000);
    expect(Date.now() - released).toBeLessThan(10 * RECHECK_MS + 5_000);
  });
});
