// An in-memory test double of everything the rollout activities touch: VMCluster / VMAuth /
// VMUser / VMAgent objects, read routes, vmagent queues and the CR status. It implements
// RolloutActivities and records every action (for the invariant checker).
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { SIGNAL_SUPERSEDE, parseWorkflowId, type QueueSample } from '../../api/rollout-contract';
import type { DropCounters, JsonObject, ObjectGeneration, VMDistributedClusterStatus } from '../../api/types';
import { formatRecords, recordKey, type RecordedZone, type RecordOwner, type RouteRecords, type RouteRef, type RouteRemoval } from '../../api/route-records';
import { recordedZones } from '../../kube/route-records';
import { restoreIssue, verifyRecords, type RouteObjectView } from '../../api/record-verification';
import { selects } from '../../api/label-selector';
import type { InputVerdict, ObjectState, RolloutActivities, RouteSnapshot } from '../../workflows/activity-types';
import type { Action } from '../infra/oracle/invariants';
import { FailureType } from '../../workflows/failures';
import { awaitSwitch } from '../../activities/reads/await-switch';
import { judgeHeadroom } from '../../activities/vmagent/headroom';
import { compareQuery, judgeMeasurement, type QueryAnswer } from '../../activities/analysis/compare';
import { judgeSamples } from '../../activities/analysis/sample-parity';
import { queueReporter } from '../../activities/vmagent/queue-report';
import { applyPatch } from '../../workflows/merge';
import { jsonEqual } from '../../api/json-value';
import { computeRemoval, hasReadBackend, routeReferencesCluster } from '../../api/route-targets';
import { applyRemoval, undoRemoval } from '../../api/route-edits';

export type PatchBehaviour = 'operational' | 'failed' | 'hang';
export type QueueBehaviour = 'drained' | 'unreachable' | { notDrainedAttempts: number };

export interface FakeObject {
  exists: boolean;
  generation: number;
  observedGeneration: number;
  updateStatus: string;
  spec: JsonObject;
}

type ActionInput = Action extends infer A ? (A extends Action ? Omit<A, 'seq' | 'actor' | 'actorGeneration'> : never) : never;

interface Gate {
  reached: Promise<void>;
  release: () => void;
  markReached: () => void;
  released: Promise<void>;
  /** Resolves when the held call's activity is asked to cancel (a local activity learns it at once; a regular one only by heartbeating). */
  cancelled: Promise<void>;
  markCancelled: () => void;
}

function gate(): Gate {
  let markReached!: () => void;
  let release!: () => void;
  let markCancelled!: () => void;
  const reached = new Promise<void>((r) => (markReached = r));
  const released = new Promise<void>((r) => (release = r));
  const cancelled = new Promise<void>((r) => (markCancelled = r));
  return { reached, release, markReached, released, cancelled, markCancelled };
}

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** The cancellation signal of the activity running this call, if it runs in one. */
function cancellationSignal(): AbortSignal | undefined {
  try {
    return Context.current().cancellationSignal;
  } catch {
    return undefined;
  }
}

/** The uid of a fake route object (`<kind>/<name>`): what its records are bound to. */
export const routeUid = (rk: string): string => `uid-of-${rk}`;

/** What vmauth serves between two looks of the capacity guard (the fake's readReadHealth). */
export interface ReadWindow {
  requests: number;
  errors: number;
  meanMs: number;
  unreadable?: string;
}

/** A call held at its start until released. */
export interface Held {
  reached: Promise<void>;
  release: () => void;
  cancelled: Promise<void>;
}

export class FakeCluster {
  readonly objects = new Map<string, FakeObject>();
  readonly routes = new Map<string, JsonObject[]>();
  /** VMUser name → its labels (spec.vmuserSelector selects by them). */
  readonly vmuserLabels = new Map<string, Record<string, string>>();
  /** Route key -> the out-of-rotation records on that route object (as its annotation would hold them). */
  readonly records = new Map<string, RouteRecords>();
  /** `<kind>/<name>` -> the API server's message refusing any write of that object (a 422, say). */
  readonly refused = new Map<string, string>();
  /** The next this-many status writes are rejected as the API server rejects an invalid status (422). */
  rejectStatusWrites = 0;
  /** Spec keys the API server drops, as a structural CRD schema prunes unknown fields. */
  readonly prunedKeys = new Set<string>();
  /** Called before each route's edit of a recorded removal (a test's concurrent edit goes here). */
  beforeRouteEdit?: (routeKey: string) => void;
  readonly log: Action[] = [];
  readonly statuses: VMDistributedClusterStatus[] = [];
  readonly patchBehaviour = new Map<string, PatchBehaviour>();
  readonly queueBehaviour = new Map<string, QueueBehaviour>();
  /** Per VMCluster, its vmagent queue's intake (bytes/s) and room (bytes) as the headroom check reads them; absent: 0 and 1 TiB. */
  readonly headroom = new Map<string, { rateBytesPerSecond: number; roomBytes: number }>();
  /** Per VMCluster, vmagent's drop counters for it (one pod, vmagent-0); absent: all 0. */
  readonly drops = new Map<string, DropCounters>();
  /** Per VMCluster, what vmagent drops for it while its upgrade restarts it (added at each real patch). */
  readonly dropsDuringUpgrade = new Map<string, Partial<DropCounters>>();
  /** Per VMCluster, the samples of tenant 0:0 its window lacks against any other zone (strategy.sampleParity; each zone has 1000). */
  readonly samplesMissing = new Map<string, number>();
  /** Per VMCluster, the samples its upgrade loses (added to samplesMissing at each real patch). */
  readonly samplesLostDuringUpgrade = new Map<string, number>();
  /**
   * Per VMCluster, what its vmselect answers to a canary analysis query (the real comparison judges
   * the answers: activities/analysis/compare.ts); absent: one series, value 1, in 5 ms.
   */
  readonly selectAnswers = new Map<string, (query: string) => QueryAnswer>();
  /**
   * The reads vmauth serves between two looks of the capacity guard (each readReadHealth adds one
   * such window to its cumulative counters); `unreadable` makes the reading say so.
   */
  readWindow: ReadWindow = { requests: 100, errors: 0, meanMs: 5 };
  /** Windows for the next looks, in order, before readWindow again. */
  readonly nextReadWindows: ReadWindow[] = [];
  private readonly readCounters = { requests: 0, errors: 0, durationSeconds: 0, durationCount: 0 };
  /** VMClusters whose read switch can never be confirmed in the vmauth pods (no config Secret, a pod stuck on an old config). */
  readonly unconfirmableSwitch = new Set<string>();
  private readonly queueAttempts = new Map<string, number>();
  private readonly gates = new Map<string, Gate & { after?: string }>();
  /** Every activity call, in order: `<method>:<detail>`. */
  readonly calls: string[] = [];
  /** The VMAgents of every queue read (spec.vmagent's, then the zones' own), one entry per read. */
  readonly queueAgents: string[][] = [];
  client?: Client;
  /** The object's current metadata.generation (status writes for other generations are refused). */
  objectGeneration = 1;
  /** What verifyInput answers (the real decision is activities/start/verify-input.ts, tested on a real API server). */
  inputVerdict: InputVerdict = { verdict: 'ok' };
  /** Workflows that took over, by generation (for supersede). */
  private readonly owners: string[] = [];
  private seq = 0;

  constructor(readonly namespace: string) {}

  /** A status write as the API server would take it: only at the object's current generation. */
  private recordStatus(object: ObjectGeneration, status: VMDistributedClusterStatus): { written: boolean } {
    const written = object.generation === this.objectGeneration;
    if (written) this.statuses.push(clone(status));
    this.record({ type: 'status', written, status: clone(status) });
    return { written };
  }

  // ---- setup -------------------------------------------------------------------------------------
  addObject(kind: string, name: string, spec: JsonObject, generation = 1): void {
    this.objects.set(`${kind}/${name}`, { exists: true, generation, observedGeneration: generation, updateStatus: 'operational', spec: clone(spec) });
  }
  setRoute(key: string, targetRefs: JsonObject[]): void {
    this.routes.set(key, clone(targetRefs));
  }
  routeSnapshot(): Record<string, JsonObject[]> {
    return Object.fromEntries([...this.routes].map(([k, v]) => [k, clone(v)]));
  }
  /** A user replaces a route's targetRefs (recorded for invariant 4). */
  userSet(route: string, targetRefs: JsonObject[]): void {
    this.routes.set(route, clone(targetRefs));
    this.record({ type: 'userSet', route, targetRefs: clone(targetRefs) }, '');
  }
  /** A user appends a targetRef to a route (recorded for invariant 4). */
  userAppend(route: string, targetRef: JsonObject): void {
    (this.routes.get(route) ?? []).push(clone(targetRef));
    this.record({ type: 'userAppend', route, targetRef: clone(targetRef) }, '');
  }
  /**
   * Hold the next call matching `key` (`<method>:<detail>`, see `calls`) until released.
   * `reached` resolves when the call arrives.
   */
  /** Holds the next call `key` (with `after`: the next one made after a call `after`) until released. */
  hold(key: string, opts: { after?: string } = {}): Held {
    const g = { ...gate(), after: opts.after };
    this.gates.set(key, g);
    return { reached: g.reached, release: g.release, cancelled: g.cancelled };
  }
  releaseAll(): void {
    for (const g of this.gates.values()) g.release();
  }
  /** Whether any call acted on (or waited for) `vmcluster`, reads of it and carrier checks aside. */
  touched(vmcluster: string): boolean {
    return this.calls.some(
      (c) =>
        c.includes(vmcluster) && !c.startsWith('readObject') && !c.startsWith('dryRun') && !c.startsWith('waitCarriersReady') && !c.startsWith('readVmagent'),
    );
  }
  object(kind: string, name: string): FakeObject | undefined {
    return this.objects.get(`${kind}/${name}`);
  }

  // ---- recording -----------------------------------------------------------------------------------
  private actor(): { actor: string; actorGeneration: number } {
    try {
      const id = Context.current().info.workflowExecution?.workflowId ?? '';
      return { actor: id, actorGeneration: parseWorkflowId(id)?.generation ?? -1 };
    } catch {
      return { actor: '', actorGeneration: -1 };
    }
  }
  private record(a: ActionInput, actorOverride?: string): void {
    const who = actorOverride !== undefined ? { actor: actorOverride, actorGeneration: -1 } : this.actor();
    this.log.push({ ...(a as object), seq: ++this.seq, ...who } as Action);
  }
  private async enter(key: string): Promise<void> {
    this.calls.push(key);
    const g = this.gates.get(key);
    if (g && (!g.after || this.calls.includes(g.after))) {
      this.gates.delete(key);
      cancellationSignal()?.addEventListener('abort', () => g.markCancelled());
      g.markReached();
      await g.released;
    }
  }
  private obj(kind: string, name: string): FakeObject {
    const o = this.objects.get(`${kind}/${name}`);
    if (!o) {
      const created: FakeObject = { exists: false, generation: 0, observedGeneration: 0, updateStatus: '', spec: {} };
      this.objects.set(`${kind}/${name}`, created);
      return created;
    }
    return o;
  }
  private bumpVMAuth(): number {
    const auth = this.vmauth();
    auth.generation++;
    auth.observedGeneration = auth.generation;
    return auth.generation;
  }
  private vmauth(): FakeObject {
    const e = [...this.objects.entries()].find(([k]) => k.startsWith('VMAuth/'));
    if (!e) throw new Error('no VMAuth in the fake cluster');
    return e[1];
  }
  private state(o: FakeObject): ObjectState {
    return o.exists
      ? { exists: true, generation: o.generation, observedGeneration: o.observedGeneration, updateStatus: o.updateStatus, spec: clone(o.spec) }
      : { exists: false };
  }

  // ---- RolloutActivities -------------------------------------------------------------------------
  activities(): RolloutActivities {
    const acts: RolloutActivities = {
      verifyInput: async ({ object }) => {
        await this.enter(`verifyInput:g${object.generation}`);
        return this.inputVerdict;
      },
      takeOverObject: async ({ object, ownWorkflowId, previousWorkflowIds }) => {
        await this.enter(`takeOverObject:g${object.generation}`);
        if (object.generation < this.objectGeneration) {
          this.record({ type: 'takeOver', stale: true });
          return { stale: true, superseded: [] };
        }
        const others = [...new Set([...previousWorkflowIds, ...this.owners])].filter((id) => id !== ownWorkflowId);
        for (const id of others) {
          const h = this.client!.workflow.getHandle(id);
          try {
            await h.signal(SIGNAL_SUPERSEDE, { generation: object.generation });
          } catch {
            /* already closed */
          }
          try {
            await h.result();
          } catch {
            /* closed in any way */
          }
        }
        this.owners.push(ownWorkflowId);
        this.record({ type: 'takeOver', stale: false });
        return { stale: false, superseded: others };
      },

      writeStatus: async ({ object, status }: { object: ObjectGeneration; status: VMDistributedClusterStatus }) => {
        await this.enter(`writeStatus:${status.phase}`);
        if (this.rejectStatusWrites > 0) {
          this.rejectStatusWrites--;
          throw ApplicationFailure.nonRetryable('status rejected by the API server: HTTP 422: status.phase: Unsupported value', FailureType.StatusRejected);
        }
        return this.recordStatus(object, status);
      },

      reportQueuedMember: async ({ object, message }) => this.recordStatus(object, { phase: 'Cancelled', message }),

      readObject: async ({ kind, name }) => {
        await this.enter(`readObject:${kind}:${name}`);
        const o = this.obj(kind, name);
        const s = this.state(o);
        if (o.exists && o.updateStatus === 'operational') this.record({ type: 'operational', kind, name, generation: o.observedGeneration });
        return s;
      },

      applyObject: async ({ kind, name, patch, create, dryRun, without }) => {
        await this.enter(`${dryRun ? 'dryRun' : 'applyObject'}:${kind}:${name}${without?.length ? ` without ${without.map((c) => c.name).join(',')}` : ''}`);
        const refusal = this.refused.get(`${kind}/${name}`);
        if (refusal) throw ApplicationFailure.nonRetryable(`applyObject: the API server refused the request: ${refusal}`, FailureType.PatchRejected);
        if (dryRun) {
          const cur = this.objects.get(`${kind}/${name}`);
          if (!cur?.exists) {
            if (!create) throw ApplicationFailure.nonRetryable(`${kind} ${name} not found`, 'NotFound');
            return { generation: 1, created: true, changed: true };
          }
          const changed = !jsonEqual(this.prune(applyPatch(cur.spec, patch)), cur.spec);
          return { generation: cur.generation + (changed ? 1 : 0), created: false, changed };
        }
        const o = this.obj(kind, name);
        if (!o.exists) {
          if (!create) throw ApplicationFailure.nonRetryable(`${kind} ${name} not found`, 'NotFound');
          Object.assign(o, { exists: true, generation: 1, observedGeneration: 0, updateStatus: 'expanding', spec: applyPatch({}, patch) });
          this.record({ type: 'patch', kind, name, generation: 1, changed: true });
          return { generation: 1, created: true, changed: true };
        }
        const next = this.prune(applyPatch(o.spec, patch));
        const changed = !jsonEqual(next, o.spec);
        if (changed) {
          o.spec = next;
          o.generation++;
          o.updateStatus = 'expanding';
          const lost = kind === 'VMCluster' ? this.samplesLostDuringUpgrade.get(name) : undefined;
          if (lost) this.samplesMissing.set(name, (this.samplesMissing.get(name) ?? 0) + lost);
          const dropping = kind === 'VMCluster' ? this.dropsDuringUpgrade.get(name) : undefined;
          if (dropping) {
            const c = this.drops.get(name) ?? { samples: 0, bytes: 0, blocks: 0, packets: 0 };
            this.drops.set(name, {
              samples: c.samples + (dropping.samples ?? 0),
              bytes: c.bytes + (dropping.bytes ?? 0),
              blocks: c.blocks + (dropping.blocks ?? 0),
              packets: c.packets + (dropping.packets ?? 0),
            });
          }
        }
        this.record({ type: 'patch', kind, name, generation: o.generation, changed });
        return { generation: o.generation, created: false, changed };
      },

      waitOperational: async ({ kind, name, generation }) => {
        await this.enter(`waitOperational:${kind}:${name}`);
        const o = this.obj(kind, name);
        const b = this.patchBehaviour.get(name) ?? 'operational';
        if (o.generation >= generation && o.updateStatus !== 'operational' && o.updateStatus !== 'failed') {
          if (b === 'operational') {
            o.observedGeneration = o.generation;
            o.updateStatus = 'operational';
          } else if (b === 'failed') {
            o.observedGeneration = o.generation;
            o.updateStatus = 'failed';
          }
        }
        if (o.updateStatus === 'failed') throw ApplicationFailure.nonRetryable(`${kind} ${name} failed`, FailureType.ObjectFailed);
        if (!o.exists || o.observedGeneration < generation || o.updateStatus !== 'operational') {
          return this.stillWaiting(`${kind} ${name} not operational at generation ${generation} yet`, 'NotReady');
        }
        this.record({ type: 'operational', kind, name, generation: o.observedGeneration });
        return this.state(o);
      },

      // The named routes, and the VMUsers whose labels (vmuserLabels) spec.vmuserSelector selects, as the real activity.
      readRoutes: async ({ routes, vmuserSelector }) => {
        await this.enter('readRoutes');
        const selected = [...this.vmuserLabels]
          .filter(
            ([name, labels]) => vmuserSelector !== undefined && selects(vmuserSelector, labels) && !routes.some((r) => r.kind === 'VMUser' && r.name === name),
          )
          .map(([name]) => ({ kind: 'VMUser' as const, name }));
        return [...routes, ...selected].map((route): RouteSnapshot => ({ route, targetRefs: clone(this.routes.get(`${route.kind}/${route.name}`) ?? []) }));
      },

      readRecords: async ({ uid }) => {
        await this.enter('readRecords');
        return this.recordedZones(uid);
      },

      editRoutes: ({ removals, direction, record }) => this.editRecorded(removals, direction, record),

      waitQueueDrained: async (t) => {
        await this.enter(`waitQueueDrained:${t.vmclusterName}`);
        const s = this.sample(t.vmclusterName, true);
        if (!s.drained) return this.stillWaiting(`queue for ${t.vmclusterName} not drained: ${s.message}`, 'NotDrained');
        this.record({ type: 'drained', vmcluster: t.vmclusterName, emptyForMs: t.queueDrainedForMs });
        return s;
      },

      sampleQueue: async (t) => {
        await this.enter(`sampleQueue:${t.vmclusterName}`);
        return this.sample(t.vmclusterName, false);
      },

      // An unreadable queue polls through Temporal's retries, as waitQueueDrained does here.
      watchQueue: async (t) => {
        await this.enter(`watchQueue:${t.vmclusterName}`);
        this.queueAgents.push([t.vmagentName, ...(t.zoneVmagents ?? [])]);
        // The real activity's reporter, on the fake's status writes (every sample here).
        const reporter = queueReporter(t.report, t.queueDrainedForMs, {
          writeStatus: async ({ object, status }) => this.recordStatus(object, status),
          client: this.client!,
        });
        for (;;) {
          const s = this.sample(t.vmclusterName, true);
          if (!s.drained && s.unreadablePods > 0) return this.stillWaiting(`queue for ${t.vmclusterName} not drained: ${s.message}`, 'NotDrained');
          if (s.drained) {
            this.record({ type: 'drained', vmcluster: t.vmclusterName, emptyForMs: t.queueDrainedForMs });
            return { last: s, emptySince: s.at };
          }
          await reporter.write({ last: s });
          await this.enter(`queueSampled:${t.vmclusterName}`);
        }
      },

      // One vmagent pod: its headroom judged by the real verdict (activities/vmagent/headroom.ts), its drop counters as set.
      readVmagent: async ({ headroomHorizonMs: horizon, drops, vmclusterName, vmagentName, zoneVmagents }) => {
        this.queueAgents.push([vmagentName, ...(zoneVmagents ?? [])]);
        await this.enter(`readVmagent:${vmclusterName}:${[horizon !== undefined ? 'headroom' : '', drops ? 'drops' : ''].filter(Boolean).join(',')}`);
        const at = new Date();
        const h = this.headroom.get(vmclusterName) ?? { rateBytesPerSecond: 0, roomBytes: 2 ** 40 };
        const queue = { index: 0, ...h, onDiskOff: false, maxDiskUsage: '', uptimeSeconds: 3600 };
        const counters = this.drops.get(vmclusterName) ?? { samples: 0, bytes: 0, blocks: 0, packets: 0 };
        return {
          ...(horizon !== undefined ? { headroom: judgeHeadroom([{ pod: 'vmagent-0', queues: [queue] }], horizon, at) } : {}),
          ...(drops ? { drops: { at: at.toISOString(), pods: [{ pod: 'vmagent-0', counters: { ...counters } }] } } : {}),
        };
      },

      // The spec's queries on both zones' answers, compared and judged as the real activity does.
      measureCanary: async ({ canary, baseline, analysis }) => {
        await this.enter(`measureCanary:${canary.vmcluster}`);
        const answer = (vmc: string, q: string): QueryAnswer =>
          this.selectAnswers.get(vmc)?.(q) ?? { ok: true, ms: 5, result: { type: 'vector', series: new Map([['[]', [[1, '1']]]]) } };
        const queries = analysis.queries.map((q) =>
          compareQuery({ text: q, source: 'spec' }, answer(baseline.vmcluster, q), answer(canary.vmcluster, q), analysis),
        );
        return judgeMeasurement(new Date().toISOString(), queries, undefined, analysis);
      },

      // Tenant 0:0's counts on both zones, judged as the real activity does.
      countSamples: async ({ zone, healthy, fromMs, toMs, parity }) => {
        await this.enter(`countSamples:${zone.vmcluster}:${healthy.vmcluster}`);
        const counts = [
          {
            tenant: '0:0',
            samples: 1000 - (this.samplesMissing.get(zone.vmcluster) ?? 0),
            healthySamples: 1000 - (this.samplesMissing.get(healthy.vmcluster) ?? 0),
          },
        ];
        const iso = (ms: number) => new Date(ms).toISOString();
        return judgeSamples({ at: iso(Date.now()), healthy: healthy.zone, from: iso(fromMs), to: iso(toMs), counts, tolerance: parity.tolerance });
      },

      // vmauth's cumulative counters grow by one readWindow per look (the real page's fields: activities/reads/read-health.ts).
      readReadHealth: async ({ carriers }) => {
        await this.enter(`readReadHealth:${carriers.map((c) => c.vmcluster).join(',')}`);
        const at = new Date().toISOString();
        const w = this.nextReadWindows.shift() ?? this.readWindow;
        if (w.unreadable) return { at, pods: [], unreadable: w.unreadable };
        const c = this.readCounters;
        c.requests += w.requests;
        c.errors += w.errors;
        c.durationCount += w.requests;
        c.durationSeconds += (w.requests * w.meanMs) / 1000;
        return { at, pods: [{ pod: 'vmauth/vmauth-0', counters: { ...c } }] };
      },

      waitCarriersReady: async ({ carriers }) => {
        await this.enter(`waitCarriersReady:${carriers.map((c) => c.vmcluster).join(',')}`);
        for (const c of carriers) this.queueAgents.push([c.queue.vmagentName, ...(c.queue.zoneVmagents ?? [])]);
        const notReady = carriers.filter((c) => {
          const o = this.obj('VMCluster', c.vmcluster);
          return !(o.exists && o.updateStatus === 'operational' && o.observedGeneration >= o.generation && this.sample(c.vmcluster, true).drained);
        });
        if (notReady.length > 0) return this.stillWaiting(`carriers not ready: ${notReady.map((c) => c.zone).join(', ')}`, 'CarriersNotReady');
        this.record({ type: 'carriers-ready', vmclusters: carriers.map((c) => c.vmcluster) });
        return { message: `carriers ready: ${carriers.map((c) => c.zone).join(', ')}` };
      },

      // The fake's vmauth pods run whatever the routes say: the switch is confirmed once the edited
      // routes no longer (or again) send reads to the zone.
      confirmSwitch: async ({ vmcluster, namespace, expect, routes }) => {
        await this.enter(`confirmSwitch:${expect}:${vmcluster}`);
        if (this.unconfirmableSwitch.has(vmcluster))
          return this.stillWaiting(`Secret vmauth-config-vm-global, where the operator writes the VMAuth's config, does not exist`, 'SwitchPending');
        const vmc = { name: vmcluster, namespace };
        const wrong = routes.filter((r) => routeReferencesCluster(this.routes.get(`${r.kind}/${r.name}`) ?? [], vmc) !== (expect === 'present'));
        if (wrong.length > 0) return this.stillWaiting(`switch not confirmed for ${vmcluster}`, 'SwitchPending');
        this.record({ type: 'switch-confirmed', vmcluster, expect });
        return {
          hash: 1,
          pods: [{ pod: 'vmauth-0', via: 'content-hash' as const }],
          message: `1 vmauth pod runs config 00000001 ${expect === 'absent' ? 'without' : 'with'} VMCluster ${vmcluster}`,
        };
      },

      waitReadsDrained: async ({ vmcluster }) => {
        await this.enter(`waitReadsDrained:${vmcluster}`);
        this.record({ type: 'reads-drained', vmcluster });
        return { quiet: true, message: `reads drained: no new /select/ request on 1 vmselect pod` };
      },

      awaitSwitch: (input) => awaitSwitch(acts, input),
    };
    return acts;
  }

  private prune(spec: JsonObject): JsonObject {
    const walk = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(walk);
      if (v && typeof v === 'object')
        return Object.fromEntries(
          Object.entries(v)
            .filter(([k]) => !this.prunedKeys.has(k))
            .map(([k, x]) => [k, walk(x)]),
        );
      return v;
    };
    return walk(spec) as JsonObject;
  }

  /** The route object `<kind>/<name>` as the real activities read it (api/record-verification.ts). */
  routeView(rk: string): RouteObjectView {
    const [kind, name] = rk.split('/') as [RouteRef['kind'], string];
    const recs = this.records.get(rk);
    return {
      route: { kind, name },
      uid: routeUid(rk),
      namespace: this.namespace,
      targetRefs: this.routes.get(rk) ?? [],
      annotation: recs ? (formatRecords(recs) ?? undefined) : undefined,
    };
  }

  /** The zones of `uid` that the records on the routes show out of reads, verified as the real activity verifies them. */
  recordedZones(uid: string): RecordedZone[] {
    const keys = [...new Set([...this.routes.keys(), ...this.records.keys()])];
    return recordedZones(
      verifyRecords(
        keys.map((rk) => this.routeView(rk)),
        { namespace: this.namespace, uid },
      ).verified,
    );
  }

  /**
   * editRoutes with records, one route at a time as the real activity does (each route is its own
   * API call): a removal is planned again from the route as it is and written together with its
   * record; a restore undoes what the records of the zone say, wherever they are.
   */
  private async editRecorded(removals: RouteRemoval[], direction: 'remove' | 'restore', owner: RecordOwner) {
    const key = recordKey(owner.vmdc.uid, owner.zone);
    const vmcluster = removals[0]?.vmcluster.name ?? this.recordedZones(owner.vmdc.uid).find((z) => z.zone === owner.zone)?.vmcluster.name ?? '';
    await this.enter(`editRoutes:${direction}:${vmcluster}`);
    const vmuserGenerations: Record<string, number> = {};
    const write = (route: RouteRef, removal: RouteRemoval, next: JsonObject[], recs: RouteRecords) => {
      const rk = `${route.kind}/${route.name}`;
      const before = { [rk]: clone(this.routes.get(rk) ?? []) };
      this.routes.set(rk, clone(next));
      if (Object.keys(recs).length > 0) this.records.set(rk, recs);
      else this.records.delete(rk);
      if (route.kind === 'VMAuth') this.bumpVMAuth();
      else {
        const user = this.obj('VMUser', route.name);
        user.generation++;
        user.observedGeneration = user.generation;
        vmuserGenerations[route.name] = user.generation;
      }
      const recorded = this.recordedZones(owner.vmdc.uid).map((z) => z.zone);
      this.record({ type: 'routes', direction, vmcluster, removals: [clone(removal)], before, after: { [rk]: clone(next) }, recorded });
    };
    if (direction === 'remove') {
      for (const r of removals) {
        const rk = `${r.route.kind}/${r.route.name}`;
        const recs = { ...(this.records.get(rk) ?? {}) };
        this.beforeRouteEdit?.(rk);
        const cur = this.routes.get(rk) ?? [];
        const fresh = computeRemoval({ route: r.route, targetRefs: cur }, r.vmcluster);
        if (fresh.removed.length === 0) continue;
        const next = applyRemoval(cur, fresh);
        if (!hasReadBackend(next)) throw ApplicationFailure.nonRetryable(`removing ${vmcluster} would leave ${rk} with no backend`, FailureType.EmptyRoute);
        const route = { kind: r.route.kind, name: r.route.name, uid: routeUid(rk) };
        recs[key] = { ...clone(owner), route, vmcluster: { ...r.vmcluster }, removed: fresh.removed, since: new Date().toISOString() };
        write(r.route, fresh, next, recs);
      }
      for (const r of removals) if (r.route.kind === 'VMUser') vmuserGenerations[r.route.name] ??= this.obj('VMUser', r.route.name).generation;
    } else {
      for (const [rk, all] of [...this.records]) {
        const rec = all[key];
        if (!rec) continue;
        const [kind, name] = rk.split('/') as [RouteRef['kind'], string];
        if (restoreIssue(rec, this.routeView(rk), { namespace: this.namespace, uid: owner.vmdc.uid })) continue; // as the real restore: left as it is
        const recs = { ...all };
        delete recs[key];
        write({ kind, name }, { route: { kind, name }, vmcluster: rec.vmcluster, removed: rec.removed }, undoRemoval(this.routes.get(rk) ?? [], rec), recs);
      }
    }
    return { vmauthGeneration: this.vmauth().generation, vmuserGenerations, recorded: this.recordedZones(owner.vmdc.uid) };
  }

  /**
   * A waiting activity that is not done yet: like the real ones it heartbeats (so a cancelled
   * workflow's cancel reaches it and it ends as cancelled); then it fails retryably, and Temporal's
   * retries (server-side timers the time-skipping server fast-forwards) stand in for the polling.
   */
  private async stillWaiting(message: string, type: string): Promise<never> {
    const ctx = Context.current();
    ctx.heartbeat();
    await Promise.race([ctx.cancelled, new Promise((r) => setTimeout(r, 200))]);
    throw ApplicationFailure.retryable(message, type);
  }

  private sample(vmcluster: string, consume: boolean): QueueSample {
    const b = this.queueBehaviour.get(vmcluster) ?? 'drained';
    const at = new Date().toISOString();
    if (b === 'unreachable') {
      return { at, pendingBytes: 0, unreadablePods: 2, totalPods: 2, drained: false, message: 'scrape failed on 2/2 vmagent pods' };
    }
    if (b !== 'drained') {
      const n = this.queueAttempts.get(vmcluster) ?? 0;
      if (n < b.notDrainedAttempts) {
        if (consume) this.queueAttempts.set(vmcluster, n + 1);
        return {
          at,
          pendingBytes: 4096,
          unreadablePods: 0,
          totalPods: 2,
          drained: false,
          message: '4 KiB pending on 2/2 vmagent pods',
          podPendingBytes: { 'vmagent-0': 3072, 'vmagent-1': 1024 },
        };
      }
    }
    return { at, pendingBytes: 0, unreadablePods: 0, totalPods: 2, drained: true, message: 'drained', podPendingBytes: { 'vmagent-0': 0, 'vmagent-1': 0 } };
  }
}
