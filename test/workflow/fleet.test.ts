/**
 * The fleet's parent workflow (workflows/fleet.ts) on a real Temporal dev server: what it starts,
 * when. Its children here end when the test says (test/workflow/fleet/children.ts); the real
 * rollouts run as its children in test/e2e/fleet.test.ts.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Worker, bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import {
  FLEET_WORKFLOW_TYPE,
  SIGNAL_FLEET_MEMBER,
  fleetWorkflowId,
  type FleetMemberRequest,
  type FleetProgress,
  type FleetResult,
} from '../../api/fleet-contract';
import { SIGNAL_PAUSE, SIGNAL_RESUME, workflowIdFor } from '../../api/rollout-contract';
import type { ObjectGeneration } from '../../api/types';
import { useTemporalDevEnv } from '../infra/harness/temporal';
import { eventually, makeSpec, maybeRecord, NS } from './setup';

jest.setTimeout(120_000);

const getEnv = useTemporalDevEnv();
let bundle: WorkflowBundle;
beforeAll(async () => {
  bundle = await bundleWorkflowCode({ workflowsPath: require.resolve('./fleet/children'), logger: new DefaultLogger('WARN') });
}, 60_000);

interface Member {
  name: string;
  region: string;
  generation?: number;
  namespace?: string;
  fleet?: string;
}

interface Fleet {
  handle: WorkflowHandle;
  send(m: Member, tamper?: (r: FleetMemberRequest) => FleetMemberRequest): Promise<string>;
  progress(): Promise<FleetProgress>;
  until(pred: (p: FleetProgress) => boolean): Promise<FleetProgress>;
  end(workflowId: string, phase?: string): Promise<void>;
  reported: Array<{ object: ObjectGeneration; workflowId: string; message: string }>;
}

/** One uid per member and fleet: child ids are unique across the file's fleets, stable across a member's generations. */
const uids = new Map<string, string>();
function requestOf(m: Member, fleet: string): FleetMemberRequest {
  const key = `${fleet}/${m.name}`;
  if (!uids.has(key)) uids.set(key, randomUUID());
  const object: ObjectGeneration = { namespace: m.namespace ?? NS, name: m.name, uid: uids.get(key)!, generation: m.generation ?? 2 };
  const spec = { ...makeSpec(), fleet: { name: m.fleet ?? fleet, region: m.region } };
  return { workflowId: workflowIdFor(object), input: { object, spec, previousWorkflowIds: [] }, specHash: 'h' };
}

/** A fleet on its own task queue, started by its first request as the trigger does (signalWithStart). */
async function withFleet<T>(body: (f: Fleet) => Promise<T>): Promise<T> {
  const env: TestWorkflowEnvironment = getEnv();
  const taskQueue = `fleet-${randomUUID()}`;
  const name = `f-${randomUUID().slice(0, 8)}`;
  const reported: Fleet['reported'] = [];
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: bundle,
    activities: { reportQueuedMember: async (i: Fleet['reported'][number]) => (reported.push(i), { written: true }) },
  });
  const id = fleetWorkflowId(NS, name);
  const client = env.client;
  const f: Fleet = {
    handle: client.workflow.getHandle(id),
    reported,
    async send(m, tamper = (r) => r) {
      const r = tamper(requestOf(m, name));
      await client.workflow.signalWithStart(FLEET_WORKFLOW_TYPE, {
        workflowId: id,
        taskQueue,
        args: [{ namespace: NS, name }],
        signal: SIGNAL_FLEET_MEMBER,
        signalArgs: [r],
      });
      return r.workflowId;
    },
    progress: () => client.workflow.getHandle(id).query<FleetProgress>('fleetProgress'),
    until: (pred) => eventually(async () => ((p) => (pred(p) ? p : undefined))(await f.progress())),
    end: (workflowId, phase = 'Succeeded') => client.workflow.getHandle(workflowId).signal('end', phase),
  };
  return worker.runUntil(body(f));
}

const names = (refs: Array<{ member: string }>) => refs.map((r) => r.member).sort();

describe('fleet parent workflow', () => {
  it('runs one child per region at a time, regions in parallel, in arrival order; ends once none is queued or running', async () => {
    await withFleet(async (f) => {
      const a = await f.send({ name: 'east-1', region: 'east' });
      await f.send({ name: 'east-2', region: 'east' });
      const w = await f.send({ name: 'west-1', region: 'west' });
      let p = await f.until((p) => p.running.length === 2 && p.queued.length === 1);
      expect(names(p.running)).toEqual(['east-1', 'west-1']);
      expect(names(p.queued)).toEqual(['east-2']);
      // The child really runs (started by the parent, with the id the trigger recorded in the status).
      expect((await getEnv().client.workflow.getHandle(a).describe()).status.name).toBe('RUNNING');

      // east-1 ends: east-2 starts; west-1 is not waited for.
      await f.end(a);
      p = await f.until((p) => p.running.some((r) => r.member === 'east-2'));
      expect(names(p.running)).toEqual(['east-2', 'west-1']);
      expect(p.ended.map((e) => [e.member, e.outcome])).toEqual([['east-1', 'Succeeded']]);

      await f.end(w, 'Superseded');
      await f.until((p) => p.ended.length === 2);
      await f.end(p.running.find((r) => r.member === 'east-2')!.workflowId);
      const result = (await f.handle.result()) as FleetResult;
      expect(result.ended.map((e) => [e.member, e.region, e.outcome])).toEqual([
        ['east-1', 'east', 'Succeeded'],
        ['west-1', 'west', 'Superseded'],
        ['east-2', 'east', 'Succeeded'],
      ]);
      await maybeRecord('fleet-regions', f.handle);
    });
  });

  it("a member's newer generation waits for its running child, then goes first in the region (the superseded child may have left its zone out for it)", async () => {
    await withFleet(async (f) => {
      const g2 = await f.send({ name: 'east-1', region: 'east', generation: 2 });
      await f.send({ name: 'east-2', region: 'east' });
      await f.until((p) => p.running.length === 1 && p.queued.length === 1);
      const g3 = await f.send({ name: 'east-1', region: 'east', generation: 3 });
      let p = await f.until((p) => p.queued.length === 2);
      // Never two children of one member: generation 3 waits although its member is the one running.
      expect(p.running.map((r) => r.workflowId)).toEqual([g2]);
      // A repeated request changes nothing; an older generation than the newest is refused.
      await f.send({ name: 'east-1', region: 'east', generation: 3 });
      await f.send({ name: 'east-1', region: 'east', generation: 1 });
      p = await f.until((p) => p.refused.length === 1);
      expect(p.queued.map((q) => q.workflowId)).toEqual([expect.any(String), g3]);
      expect(p.refused[0]).toMatch(/generation 1 is older than 3/);

      await f.end(g2, 'Superseded');
      p = await f.until((p) => p.running.length === 1 && p.running[0]!.workflowId !== g2);
      expect(p.running.map((r) => r.workflowId)).toEqual([g3]);
      expect(names(p.queued)).toEqual(['east-2']);
      await f.handle.terminate('test over');
    });
  });

  it('paused, it starts no child (running ones go on); resumed, the next starts', async () => {
    await withFleet(async (f) => {
      const a = await f.send({ name: 'east-1', region: 'east' });
      await f.send({ name: 'east-2', region: 'east' });
      await f.until((p) => p.running.length === 1);
      await f.handle.signal(SIGNAL_PAUSE);
      await f.until((p) => p.paused);
      await f.end(a);
      let p = await f.until((p) => p.ended.length === 1);
      expect(p.running).toEqual([]);
      expect(names(p.queued)).toEqual(['east-2']);
      await f.handle.signal(SIGNAL_RESUME);
      p = await f.until((p) => p.running.length === 1);
      expect(names(p.running)).toEqual(['east-2']);
      await f.handle.terminate('test over');
    });
  });

  it('cancelled, it cancels its running children and reports every queued member Cancelled, never started', async () => {
    await withFleet(async (f) => {
      const a = await f.send({ name: 'east-1', region: 'east' });
      const b = await f.send({ name: 'east-2', region: 'east' });
      await f.until((p) => p.running.length === 1 && p.queued.length === 1);
      await f.handle.cancel();
      await expect(f.handle.result()).rejects.toThrow(/cancel/i);
      await maybeRecord('fleet-cancel', f.handle);
      const child = await getEnv().client.workflow.getHandle(a).describe();
      expect(child.status.name).toBe('COMPLETED'); // the stand-in's cleanup ends it with phase Cancelled
      expect(await getEnv().client.workflow.getHandle(a).result()).toEqual({ phase: 'Cancelled' });
      expect(f.reported).toEqual([
        {
          object: expect.objectContaining({ name: 'east-2' }),
          workflowId: b,
          message: expect.stringMatching(/fleet f-\w+ was cancelled .* before its turn in region east: this generation took no zone out of reads/),
        },
      ]);
      // The queued member's child never ran.
      await expect(getEnv().client.workflow.getHandle(b).describe()).rejects.toThrow(/not found/i);
    });
  });

  it('a member handed over while the cancelled children clean up is reported Cancelled too, never started', async () => {
    await withFleet(async (f) => {
      const a = await f.send({ name: 'slow-1', region: 'east' });
      await f.until((p) => p.running.length === 1);
      await f.handle.cancel();
      // slow-1 cleans up (its cancel arrived); meanwhile another generation is handed over.
      await eventually(async () =>
        (await getEnv().client.workflow.getHandle(a).fetchHistory()).events?.some((e) => e.workflowExecutionCancelRequestedEventAttributes),
      );
      const late = await f.send({ name: 'east-2', region: 'east' });
      await f.until((p) => p.queued.length === 1);
      await f.end(a, 'Cancelled');
      await expect(f.handle.result()).rejects.toThrow(/cancel/i);
      expect(f.reported.map((r) => r.workflowId)).toEqual([late]);
      await expect(getEnv().client.workflow.getHandle(late).describe()).rejects.toThrow(/not found/i);
    });
  });

  it('refuses what the signal cannot claim: another namespace, another fleet, a workflow id not of that generation, a bad region', async () => {
    await withFleet(async (f) => {
      await f.send({ name: 'east-1', region: 'east' });
      await f.send({ name: 'other-ns', region: 'east', namespace: 'tenant-b' });
      await f.send({ name: 'other-fleet', region: 'east', fleet: 'someone-else' });
      await f.send({ name: 'forged', region: 'west' }, (r) => ({ ...r, workflowId: 'vmdc/default/victim/g9-deadbeef' }));
      await f.send({ name: 'bad-region', region: 'East_1' });
      const p = await f.until((p) => p.refused.length === 4);
      expect(names(p.running)).toEqual(['east-1']);
      expect(p.queued).toEqual([]);
      expect(p.refused.join('\n')).toMatch(/tenant-b\/other-ns: not in namespace default/);
      expect(p.refused.join('\n')).toMatch(/other-fleet: its spec names fleet "someone-else"/);
      expect(p.refused.join('\n')).toMatch(/forged: workflow id "vmdc\/default\/victim\/g9-deadbeef" is not its generation's/);
      expect(p.refused.join('\n')).toMatch(/bad-region: its region is not a DNS-1123 label/);
      await f.handle.terminate('test over');
    });
  });
});
