// The one VMDistributedCluster status writer (kube/status-writer.ts): its loop against a fake
// client, the activity's and the trigger's guards on top of it, and the HTTP requests it makes
// (against a stand-in HTTP server: paths, headers, precondition body, 404, request timeout).
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { writeStatus, type CurrentObject, type StepTimer } from '../../activities/status/write-status';
import { GROUP, PLURAL, VERSION } from '../../api/constants';
import type { Condition, JsonObject, VMDistributedClusterStatus } from '../../api/types';
import { STATUS_CONFLICT_RETRIES, vmdcStatusClient, writeVmdcStatus, type VmdcStatusClient } from '../../kube/status-writer';
import { createKubeOps } from '../../trigger/kube';
import { applyPatch } from '../../workflows/merge';

type Obj = { metadata: { uid: string; generation: number; resourceVersion: string }; status?: VMDistributedClusterStatus };

const apiError = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });

/** An in-memory object behind the writer's two requests, with a resourceVersion precondition. */
class FakeVmdc implements VmdcStatusClient<Obj> {
  gets = 0;
  readonly patches: Array<{ metadata?: { resourceVersion?: string }; status: object }> = [];
  /** Thrown by the next PATCHes, in order (before the precondition is checked). */
  readonly patchErrors: unknown[] = [];
  /** Runs after each GET has answered: a concurrent writer. */
  afterGet?: (obj: Obj) => void;

  constructor(public obj: Obj | undefined) {}

  async get(): Promise<Obj | undefined> {
    this.gets++;
    const copy = this.obj && (JSON.parse(JSON.stringify(this.obj)) as Obj);
    if (this.obj) this.afterGet?.(this.obj);
    return copy;
  }

  async mergePatchStatus(_ns: string, _name: string, body: object): Promise<void> {
    const b = body as { metadata?: { resourceVersion?: string }; status: object };
    this.patches.push(b);
    const err = this.patchErrors.shift();
    if (err) throw err;
    if (!this.obj) throw apiError(404);
    if (b.metadata?.resourceVersion && b.metadata.resourceVersion !== this.obj.metadata.resourceVersion) throw apiError(409);
    this.obj.status = applyPatch(this.obj.status as JsonObject | undefined, b.status as JsonObject) as VMDistributedClusterStatus;
    bump(this.obj);
  }
}

function bump(o: Obj): void {
  o.metadata.resourceVersion = String(Number(o.metadata.resourceVersion) + 1);
}

const ref = { namespace: 'ns', name: 'x' };
const fresh = (status?: VMDistributedClusterStatus): Obj => ({ metadata: { uid: 'u1', generation: 2, resourceVersion: '10' }, status });

describe('writeVmdcStatus', () => {
  it('patches the status computed from a fresh read, with its resourceVersion as precondition', async () => {
    const fake = new FakeVmdc(fresh({ phase: 'Pending' }));
    const seen: Obj[] = [];
    expect(await writeVmdcStatus(fake, ref, (o) => (seen.push(o), { phase: 'Progressing' }))).toBe(true);
    expect(seen[0]?.status).toEqual({ phase: 'Pending' });
    expect(fake.patches).toEqual([{ metadata: { resourceVersion: '10' }, status: { phase: 'Progressing' } }]);
    expect(fake.obj?.status).toEqual({ phase: 'Progressing' });
  });

  it('writes nothing when the callback says so, or when the object is gone', async () => {
    const fake = new FakeVmdc(fresh());
    expect(await writeVmdcStatus(fake, ref, () => undefined)).toBe(false);
    expect(fake.patches).toEqual([]);
    const gone = new FakeVmdc(undefined);
    expect(await writeVmdcStatus(gone, ref, () => ({ phase: 'Failed' }))).toBe(false);
    expect(gone.patches).toEqual([]);
  });

  it('an object deleted between GET and PATCH (404) is "not written"', async () => {
    const fake = new FakeVmdc(fresh());
    fake.patchErrors.push(apiError(404));
    expect(await writeVmdcStatus(fake, ref, () => ({ phase: 'Failed' }))).toBe(false);
  });

  it('a conflict starts over from the GET: the callback decides again on the newer object', async () => {
    const fake = new FakeVmdc(fresh());
    let concurrent = 1;
    fake.afterGet = (o) => {
      if (concurrent-- > 0) {
        o.metadata.generation = 3; // someone edited the spec meanwhile
        bump(o);
      }
    };
    const generations: number[] = [];
    const written = await writeVmdcStatus(
      fake,
      ref,
      (o) => (generations.push(o.metadata.generation), o.metadata.generation === 2 ? { phase: 'Succeeded' } : undefined),
    );
    expect(written).toBe(false);
    expect(generations).toEqual([2, 3]);
    expect(fake.patches).toHaveLength(1);
    expect(fake.obj?.status).toBeUndefined();
  });

  it(`retries a conflict ${STATUS_CONFLICT_RETRIES} times, then gives up with an error`, async () => {
    const fake = new FakeVmdc(fresh());
    fake.afterGet = bump; // always changed between GET and PATCH
    await expect(writeVmdcStatus(fake, ref, () => ({ phase: 'Succeeded' }))).rejects.toThrow(
      `status of ns/x: still conflicting after ${STATUS_CONFLICT_RETRIES + 1} attempts`,
    );
    expect(fake.gets).toBe(STATUS_CONFLICT_RETRIES + 1);

    const once = new FakeVmdc(fresh());
    once.patchErrors.push(apiError(409));
    expect(await writeVmdcStatus(once, ref, () => ({ phase: 'Succeeded' }))).toBe(true);
    expect(once.gets).toBe(2);
  });

  it('any other error is thrown as is', async () => {
    const fake = new FakeVmdc(fresh());
    const err = apiError(500);
    fake.patchErrors.push(err);
    await expect(writeVmdcStatus(fake, ref, () => ({ phase: 'Succeeded' }))).rejects.toBe(err);
    expect(fake.gets).toBe(1);
  });
});

describe('writeStatus (the activity): mayWriteStatus and adoption on top of the writer', () => {
  const object = { namespace: 'ns', name: 'x', uid: 'u1', generation: 2 };
  const wf = { id: 'vmdc/ns/x/g2-u1', runId: 'r' };
  const valid: Condition = { type: 'Valid', status: 'True', reason: 'ValidSpec', message: '', lastTransitionTime: 't0', observedGeneration: 2 };
  const ready: Condition = { type: 'Ready', status: 'False', reason: 'Progressing', message: '', lastTransitionTime: 't1', observedGeneration: 2 };
  const phases: string[] = [];
  // The step timer (zone step durations) sees every status written, and only those.
  const stepTimer = { observe: (_o: unknown, s: VMDistributedClusterStatus) => phases.push(s.phase ?? '') } as unknown as StepTimer;
  const client = (f: FakeVmdc) => f as unknown as VmdcStatusClient<CurrentObject>;
  beforeEach(() => (phases.length = 0));

  it("at its generation: writes everything, keeps the trigger's Valid condition, clears what it left out", async () => {
    const fake = new FakeVmdc(fresh({ observedGeneration: 2, workflow: wf, conditions: [valid], message: 'old', currentZone: 'a' }));
    const status: VMDistributedClusterStatus = { observedGeneration: 2, workflow: wf, phase: 'Progressing', conditions: [ready] };
    expect(await writeStatus(client(fake), { object, status }, { stepTimer })).toEqual({ written: true });
    expect(fake.obj?.status).toEqual({ observedGeneration: 2, workflow: wf, phase: 'Progressing', conditions: [valid, ready] });
    expect(phases).toEqual(['Progressing']);
  });

  it("adopted (a later generation still names the workflow): observedGeneration and workflow stay the trigger's", async () => {
    const fake = new FakeVmdc({ ...fresh({ observedGeneration: 3, workflow: wf }), metadata: { uid: 'u1', generation: 3, resourceVersion: '10' } });
    const status: VMDistributedClusterStatus = { observedGeneration: 2, workflow: wf, phase: 'Paused' };
    expect(await writeStatus(client(fake), { object, status }, { stepTimer })).toEqual({ written: true });
    expect(fake.obj?.status).toMatchObject({ observedGeneration: 3, workflow: wf, phase: 'Paused' });
  });

  it('superseded, or another object with the same name: nothing written, no metric', async () => {
    const other = { id: 'vmdc/ns/x/g3-u1', runId: 'r3' };
    const superseded = new FakeVmdc({ ...fresh({ observedGeneration: 3, workflow: other }), metadata: { uid: 'u1', generation: 3, resourceVersion: '10' } });
    const status: VMDistributedClusterStatus = { observedGeneration: 2, workflow: wf, phase: 'Succeeded' };
    expect(await writeStatus(client(superseded), { object, status }, { stepTimer })).toEqual({ written: false });
    const recreated = new FakeVmdc({ ...fresh(), metadata: { uid: 'u2', generation: 2, resourceVersion: '10' } });
    expect(await writeStatus(client(recreated), { object, status }, { stepTimer })).toEqual({ written: false });
    expect([...superseded.patches, ...recreated.patches]).toEqual([]);
    expect(phases).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------
// the HTTP requests, against a stand-in server

interface Seen {
  method: string;
  url: string;
  contentType?: string;
  body?: unknown;
}

async function standIn(handler: (req: Seen, res: http.ServerResponse) => void): Promise<{ kc: KubeConfig; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString()));
    req.on('end', () => {
      const s: Seen = { method: req.method ?? '', url: req.url ?? '', contentType: req.headers['content-type'], body: data ? JSON.parse(data) : undefined };
      seen.push(s);
      handler(s, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
    currentContext: 'ctx',
  });
  return {
    kc,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const path = `/apis/${GROUP}/${VERSION}/namespaces/ns/${PLURAL}/x`;
const json = (res: http.ServerResponse, code: number, body: unknown) => res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
const notFound = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 };
const vmdc = (generation: number) => ({
  apiVersion: `${GROUP}/${VERSION}`,
  kind: 'VMDistributedCluster',
  metadata: { name: 'x', namespace: 'ns', uid: 'u1', generation, resourceVersion: '7' },
});

describe('vmdcStatusClient and the trigger over HTTP', () => {
  it('GET of the object (404 → undefined) and a merge patch of its status subresource with the field manager', async () => {
    const api = await standIn((req, res) => {
      if (req.method === 'GET') return json(res, req.url.endsWith('/absent') ? 404 : 200, req.url.endsWith('/absent') ? notFound : vmdc(2));
      json(res, 200, vmdc(2));
    });
    try {
      const client = vmdcStatusClient(api.kc, { fieldManager: 'vmrollout' });
      expect(await client.get('ns', 'absent')).toBeUndefined();
      expect(await writeVmdcStatus(client, ref, () => ({ phase: 'Succeeded' }))).toBe(true);
      const patch = api.seen.find((s) => s.method === 'PATCH')!;
      expect(patch.url).toBe(`${path}/status?fieldManager=vmrollout`);
      expect(patch.contentType).toContain('application/merge-patch+json');
      expect(patch.body).toEqual({ metadata: { resourceVersion: '7' }, status: { phase: 'Succeeded' } });
    } finally {
      await api.close();
    }
  });

  it('a request that gets no answer fails after the request timeout', async () => {
    const api = await standIn(() => undefined); // never answers
    try {
      const t0 = Date.now();
      await expect(vmdcStatusClient(api.kc, { requestTimeoutMs: 300 }).get('ns', 'x')).rejects.toThrow();
      expect(Date.now() - t0).toBeLessThan(5_000);
    } finally {
      await api.close();
    }
  });

  it("the trigger's guard: only the same uid at the same generation is written", async () => {
    let generation = 3;
    const api = await standIn((req, res) => json(res, 200, vmdc(generation)));
    try {
      const kube = createKubeOps(api.kc, 'test', 2_000);
      expect(await kube.patchStatus({ ...ref, uid: 'u1', generation: 2 }, () => ({ phase: 'Invalid' }))).toBe(false);
      expect(await kube.patchStatus({ ...ref, uid: 'u2', generation: 3 }, () => ({ phase: 'Invalid' }))).toBe(false);
      expect(api.seen.filter((s) => s.method === 'PATCH')).toEqual([]);
      generation = 2;
      expect(await kube.patchStatus({ ...ref, uid: 'u1', generation: 2 }, () => ({ observedGeneration: 2 }))).toBe(true);
      const patch = api.seen.find((s) => s.method === 'PATCH')!;
      expect(patch.url).toBe(`${path}/status`);
      expect(patch.body).toEqual({ metadata: { resourceVersion: '7' }, status: { observedGeneration: 2 } });
    } finally {
      await api.close();
    }
  });
});
