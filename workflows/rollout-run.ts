// One run of the rollout workflow: its state, its activities, and the operations every part of
// the rollout shares (status writes, safe points, the read switch, failure holds). Workflow code:
// only workflow APIs (the sandbox's Date is the deterministic workflow clock).
import { CancellationScope, condition, isCancellation, log, setCurrentDetails, sleep } from '@temporalio/workflow';
import type { JsonObject, ManagedObject, NormalizedSpec, ObjectGeneration, Phase, Strategy, VMDistributedClusterStatus, WorkflowRef, ZoneSpec } from '../api/types';
import type { VMKind } from '../api/constants';
import { rolloutProxies, type RolloutProxies } from './activity-options';
import type { RecordedZone, RecordOwner, RouteRef, RouteRemoval } from '../api/route-records';
import type { ApplyObjectInput, ManagedBy, QueueTarget, RolloutActivities, SwitchConfirmed, SwitchInput } from './activity-types';
import { FailureType, failureMessage, failureType, isStepFailure } from './failures';
import { createsObject } from './merge';
import { planZoneOrder, shuffleSeed } from './plan';
import { removedAnything, type RolloutResult, type RolloutState, type RolloutWorkflowInput, type ZoneState } from './state';
import { buildStatus, currentDetails } from './status';

/**
 * How long after the operator rewrote the config Secret a vmauth pod without the config-reloader's
 * content hash (and without a reload seen) is taken to run it: kubelet's sync period (1 min) plus its
 * Secret cache (1 min).
 */
const SECRET_PROPAGATION_BOUND_MS = 120_000;

/** Generations of the route objects an edit changed, to wait for their new config. */
export interface EditedRoutes {
  vmauthGeneration?: number;
  vmuserGenerations?: Record<string, number>;
}

/** How a part of the rollout ended: ran to its end, or stopped for a newer generation. */
export type Outcome = 'done' | 'superseded';

/** What a failure hold does for the zone whose step failed. */
export interface ZoneFailureHooks {
  zone: ZoneState;
  onFailure(msg: string): void;
  onResume(): void;
  /** Superseded while held: the zone's cleanup, as after a cancel. */
  cleanup(why: string): Promise<void>;
}

export class RolloutRun {
  readonly object: ObjectGeneration;
  readonly spec: NormalizedSpec;
  readonly st: Strategy;
  readonly ns: string;
  readonly acts: RolloutProxies;
  readonly state: RolloutState;
  /** Routes the spec manages: the VMAuth and every VMUser named in the spec. */
  readonly routes: RouteRef[];
  pauseRequested: boolean;
  resumeRequested = false;
  /** Set by prepare when zones were out of reads then: the route objects are applied once every zone is done. */
  routesDeferred: boolean;
  private readonly zoneSpecs: Map<string, ZoneSpec>;

  constructor(readonly input: RolloutWorkflowInput, private readonly workflow: WorkflowRef) {
    const { object, spec, carried } = input;
    this.object = object;
    this.spec = spec;
    this.st = spec.strategy;
    this.ns = object.namespace;
    this.acts = rolloutProxies(spec.strategy);
    this.zoneSpecs = new Map(spec.zones.map((z) => [z.name, z]));
    this.state = {
      phase: 'Pending',
      message: 'starting',
      order: planZoneOrder(spec.zones.map((z) => z.name), this.st.order, shuffleSeed(object)),
      zones: spec.zones.map((z) => ({
        name: z.name,
        vmcluster: z.vmcluster.name,
        phase: 'Pending',
        outOfRotation: false,
        patchAttempted: false,
        drainedConfirmed: false,
        ...(carried?.zones.find((x) => x.name === z.name) ?? {}),
      })),
      paused: false,
      conditions: carried?.conditions ?? [],
    };
    if (carried?.supersededBy !== undefined) this.state.supersededBy = carried.supersededBy;
    this.routesDeferred = !!carried?.routesDeferred;
    this.pauseRequested = carried?.pauseRequested ?? spec.paused;
    this.routes = [
      { kind: 'VMAuth' as const, name: spec.vmauth.name },
      ...spec.zones.filter((z) => z.vmuser).map((z) => ({ kind: 'VMUser' as const, name: z.vmuser!.name })),
    ].filter((r, i, all) => all.findIndex((x) => x.kind === r.kind && x.name === r.name) === i);
  }

  /** The applyObject input for a managed object: `patch` is its desired spec; `specPath` where it is in the spec. */
  applyInput(kind: VMKind, obj: ManagedObject, patch: JsonObject, specPath: string): ApplyObjectInput {
    const { name, uid, generation } = this.object;
    const managedBy: ManagedBy = { vmdc: { name, uid, generation }, specPath, retain: !!this.spec.retainOnDelete, adopt: !!obj.adopt, forceConflicts: !!this.spec.forceConflicts };
    return { kind, namespace: this.ns, name: obj.name, patch, create: createsObject(obj), managedBy };
  }

  now(): string {
    return new Date().toISOString();
  }

  zone(name: string): ZoneState {
    return this.state.zones.find((z) => z.name === name)!;
  }

  zoneSpec(name: string): ZoneSpec {
    return this.zoneSpecs.get(name)!;
  }

  superseded(): boolean {
    return this.state.supersededBy !== undefined;
  }

  /** The CR status as of now. */
  status(): VMDistributedClusterStatus {
    return buildStatus(this.state, this.object, this.workflow, this.now());
  }

  /**
   * Write the status; the rollout never moves on without telling it. A status the API server
   * rejects (an error that will not go away, e.g. an older CRD) is reported in the progress query
   * and the worker log, and tried again every pollInterval. The Web UI's current details say the same.
   */
  async writeStatus(): Promise<{ written: boolean }> {
    for (;;) {
      const status = this.status();
      setCurrentDetails(currentDetails(status));
      try {
        const r = await this.acts.status.writeStatus({ object: this.object, status });
        this.state.statusError = undefined;
        return r;
      } catch (err) {
        if (failureType(err) !== FailureType.StatusRejected) throw err;
        this.state.statusError = failureMessage(err);
        log.warn('status write rejected by the API server; retrying', { error: this.state.statusError, retryInMs: this.st.pollIntervalMs });
        await sleep(this.st.pollIntervalMs);
      }
    }
  }

  /** A refused status write means the object moved on without us: stop, before touching anything. */
  stopRefused(): void {
    this.state.supersededBy ??= this.object.generation + 1;
    this.state.message = 'the status is no longer ours to write (a newer generation, or the object is gone): stopping';
  }

  /** Who a route record of zone `z` belongs to. */
  recordOwner(z: ZoneState): RecordOwner {
    return {
      vmdc: { namespace: this.object.namespace, name: this.object.name, uid: this.object.uid },
      zone: z.name,
      workflowId: this.workflow.id,
      generation: this.object.generation,
    };
  }

  /** The records on the route objects are the truth: a zone is out of reads exactly when recorded. */
  syncRecorded(recorded: readonly RecordedZone[]): void {
    for (const z of this.state.zones) {
      const r = recorded.find((x) => x.zone === z.name);
      z.outOfRotation = !!r;
      z.removals = r?.removals;
    }
  }

  /** Read the records again (after an edit that failed: continue from what actually landed). */
  async resyncRecorded(acts: RolloutActivities): Promise<void> {
    this.syncRecorded(await acts.readRecords({ namespace: this.ns, uid: this.object.uid }));
  }

  /** Record the end of the rollout in the status and return its result. */
  async finish(phase: Phase, message: string): Promise<RolloutResult> {
    const { state } = this;
    state.phase = phase;
    state.message = message;
    state.currentStep = undefined;
    if (phase === 'Succeeded') state.currentZone = undefined;
    await this.writeStatus();
    return this.result();
  }

  finishSuperseded(): Promise<RolloutResult> {
    return this.finish('Superseded', `superseded by generation ${this.state.supersededBy}`);
  }

  /** A newer generation asks for another rollout: act on nothing, not even the status. */
  endStale(message: string): RolloutResult {
    this.state.phase = 'Superseded';
    this.state.message = message;
    return this.result();
  }

  result(): RolloutResult {
    return {
      phase: this.state.phase,
      message: this.state.message,
      zones: this.state.order.map((n) => {
        const z = this.zone(n);
        return { name: n, phase: z.phase, ...(z.vmclusterGeneration !== undefined ? { vmclusterGeneration: z.vmclusterGeneration } : {}) };
      }),
      zonesOutOfRotation: this.state.zones.filter((z) => z.outOfRotation).map((z) => z.name),
    };
  }

  queueTarget(zs: ZoneSpec): QueueTarget {
    return {
      namespace: this.ns,
      vmagentName: this.spec.vmagent.name,
      vmclusterName: zs.vmcluster.name,
      ...(zs.remoteWriteURL ? { remoteWriteURL: zs.remoteWriteURL } : {}),
      queueEmptyBytes: this.st.queueEmptyBytes,
      zone: zs.name,
      objectName: this.object.name,
    };
  }

  /** A safe point: honour pause (unless superseded: a newer generation is waiting for us). */
  async safePoint(): Promise<void> {
    const { state } = this;
    if (!this.pauseRequested || this.superseded()) return;
    const before = { phase: state.phase, message: state.message };
    state.paused = true;
    state.phase = 'Paused';
    state.message = state.currentZone ? `paused before ${state.currentStep ?? 'next step'} of zone ${state.currentZone}` : 'paused';
    await this.writeStatus();
    await condition(() => !this.pauseRequested || this.superseded());
    state.paused = false;
    state.phase = before.phase === 'Paused' ? 'Progressing' : before.phase;
    state.message = before.message;
    await this.writeStatus();
  }

  /** The switch, confirmed where reads happen: the operator's config, and every ready vmauth pod running it. */
  async confirmInPods(z: ZoneState, removals: readonly RouteRemoval[], expect: 'absent' | 'present'): Promise<void> {
    const input = await this.announceConfirm(z, removals, expect);
    this.confirmed(z, expect, await this.acts.wait.confirmSwitch(input));
  }

  /**
   * The whole read switch in one activity: each edited route object (the VMAuth, and each VMUser the
   * zone's removals changed) operational, then every ready vmauth pod running the new config. A
   * generation unknown after a resume is read fresh.
   */
  async waitSwitch(z: ZoneState, removals: readonly RouteRemoval[], edited: EditedRoutes, expect: 'absent' | 'present'): Promise<void> {
    const routes = [
      { kind: 'VMAuth' as const, name: this.spec.vmauth.name, generation: edited.vmauthGeneration },
      ...editedUsers(removals).map((name) => ({ kind: 'VMUser' as const, name, generation: edited.vmuserGenerations?.[name] })),
    ];
    const confirm = await this.announceConfirm(z, removals, expect);
    const r = await this.acts.wait.awaitSwitch({ namespace: this.ns, routes, pollIntervalMs: this.st.pollIntervalMs, confirm });
    this.confirmed(z, expect, r.confirmed);
  }

  /** Say in the status which switch the zone waits for; the confirmSwitch input for it. */
  private async announceConfirm(z: ZoneState, removals: readonly RouteRemoval[], expect: 'absent' | 'present'): Promise<SwitchInput> {
    const routes = removals.filter((r) => r.removed.length > 0).map((r) => r.route);
    z.message = `waiting until every ready vmauth pod runs the operator's config ${expect === 'absent' ? 'without' : 'with'} VMCluster ${z.vmcluster} (config-reloader content hash = CRC32 of Secret vmauth-config-${this.spec.vmauth.name})`;
    await this.writeStatus();
    return {
      namespace: this.ns,
      vmauthName: this.spec.vmauth.name,
      vmcluster: z.vmcluster,
      expect,
      routes,
      pollIntervalMs: this.st.pollIntervalMs,
      fallbackWaitMs: SECRET_PROPAGATION_BOUND_MS,
    };
  }

  private confirmed(z: ZoneState, expect: 'absent' | 'present', r: SwitchConfirmed): void {
    z.switchConfirmed = r.message;
    log.info('read switch confirmed in the vmauth pods', { zone: z.name, expect, message: r.message });
  }

  /** Put a zone back into read rotation: restore what the records of the zone say (whatever this run remembers) and wait for the switch. */
  async rejoin(z: ZoneState, acts: RolloutActivities): Promise<void> {
    const removals = z.removals;
    let r: Awaited<ReturnType<RolloutActivities['editRoutes']>>;
    try {
      r = await acts.editRoutes({ namespace: this.ns, vmauthName: this.spec.vmauth.name, removals: removals ?? [], direction: 'restore', record: this.recordOwner(z) });
    } catch (err) {
      if (!isCancellation(err)) await this.resyncRecorded(acts);
      throw err;
    }
    this.syncRecorded(r.recorded ?? []);
    if (removals && removedAnything({ removals })) await this.waitSwitch(z, removals, r, 'present');
  }

  /**
   * Run `body`; if a step fails (non-retryably or by exhausting zoneTimeout), report Failed and wait
   * for `resume` (run `body` again), a supersede (clean up the zone and stop), or cancellation.
   */
  async withFailureHold(body: () => Promise<Outcome>, zone?: ZoneFailureHooks): Promise<Outcome> {
    const { state } = this;
    const z = zone?.zone;
    for (;;) {
      try {
        return await body();
      } catch (err) {
        if (isCancellation(err)) throw err;
        if (!isStepFailure(err)) throw err; // a bug: fail the task, not the zone
        this.resumeRequested = false;
        const msg = failureMessage(err);
        zone?.onFailure(msg);
        state.phase = 'Failed';
        state.message = z ? `zone ${z.name} failed at ${z.failedStep}: ${msg}` : `failed: ${msg}`;
        await this.writeStatus();
        await condition(() => this.resumeRequested || this.superseded());
        if (!this.resumeRequested) {
          if (zone) await CancellationScope.nonCancellable(() => zone.cleanup('superseded after failure'));
          return 'superseded';
        }
        this.resumeRequested = false;
        this.pauseRequested = false;
        zone?.onResume();
        state.phase = 'Progressing';
        state.message = z ? `retrying zone ${z.name} from ${z.step}` : 'retrying';
        await this.writeStatus();
      }
    }
  }
}

/** The VMUsers a zone's removals changed, each once: their new routes must be served too. */
function editedUsers(removals: readonly RouteRemoval[]): string[] {
  return [...new Set(removals.filter((r) => r.route.kind === 'VMUser' && r.removed.length > 0).map((r) => r.route.name))];
}
