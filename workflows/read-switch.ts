// Taking a zone out of the read routes and putting it back: each edit writes its record on the
// route objects (which are the truth about who is out), and each switch is awaited until every
// vmauth pod serves it.
import { isCancellation, log } from '@temporalio/workflow';
import { ownValue } from '../api/data-object';
import type { RecordedZone, RouteRemoval } from '../api/route-records';
import type { RolloutActivities, SwitchConfirmed, SwitchInput } from './activity-types';
import { recordOwner, type RunContext } from './run-context';
import { removedAnything, type RolloutState, type ZoneState } from './state';
import type { StatusReport } from './status-report';
import { storageOf } from '../api/storage';

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

type Expect = SwitchInput['expect'];

/** The records on the route objects are the truth: a zone is out of reads exactly when recorded. */
export function syncRecorded(state: RolloutState, recorded: readonly RecordedZone[]): void {
  for (const z of state.zones) {
    const r = recorded.find((x) => x.zone === z.name);
    z.outOfRotation = !!r;
    z.removals = r?.removals;
  }
}

export class ReadSwitch {
  constructor(
    private readonly ctx: RunContext,
    private readonly state: RolloutState,
    private readonly report: StatusReport,
  ) {}

  /** Take the zone out of the routes as `plan` says; each route's edit records what it removed. */
  async leave(z: ZoneState, plan: RouteRemoval[], edited: EditedRoutes): Promise<void> {
    const { step } = this.ctx.acts;
    const r = await this.edit(z, step, plan, 'remove');
    Object.assign(edited, r);
  }

  /**
   * Put the zone back: restore what the records of the zone say (whatever this run remembers) and
   * wait for the switch. `acts`: a step's, or the cleanup's.
   */
  async rejoin(z: ZoneState, acts: RolloutActivities): Promise<void> {
    const removals = z.removals;
    const r = await this.edit(z, acts, removals ?? [], 'restore');
    if (removals && removedAnything({ removals })) await this.await(z, removals, r, 'present');
  }

  /** The switch, confirmed where reads happen: the operator's config, and every ready vmauth pod running it. */
  async confirm(z: ZoneState, removals: readonly RouteRemoval[], expect: Expect): Promise<void> {
    const input = await this.announce(z, removals, expect);
    this.confirmed(z, expect, await this.ctx.acts.wait.confirmSwitch(input));
  }

  /**
   * The whole read switch in one activity: each edited route object (the VMAuth, and each VMUser the
   * zone's removals changed) operational, then every ready vmauth pod running the new config. A
   * generation unknown after a resume is read fresh.
   */
  async await(z: ZoneState, removals: readonly RouteRemoval[], edited: EditedRoutes, expect: Expect): Promise<void> {
    const { ctx } = this;
    const routes = [
      { kind: 'VMAuth' as const, name: ctx.spec.vmauth.name, generation: edited.vmauthGeneration },
      ...editedUsers(removals).map((name) => ({
        kind: 'VMUser' as const,
        name,
        generation: edited.vmuserGenerations && ownValue(edited.vmuserGenerations, name),
      })),
    ];
    const confirm = await this.announce(z, removals, expect);
    const r = await ctx.acts.wait.awaitSwitch({ namespace: ctx.ns, routes, pollIntervalMs: ctx.st.pollIntervalMs, confirm });
    this.confirmed(z, expect, r.confirmed);
  }

  /** Read the records again (after an edit that failed: continue from what actually landed). */
  async readRecords(acts: RolloutActivities): Promise<void> {
    syncRecorded(this.state, await acts.readRecords({ namespace: this.ctx.ns, uid: this.ctx.object.uid }));
  }

  private async edit(z: ZoneState, acts: RolloutActivities, removals: RouteRemoval[], direction: 'remove' | 'restore') {
    const { ctx } = this;
    try {
      const r = await acts.editRoutes({ namespace: ctx.ns, vmauthName: ctx.spec.vmauth.name, removals, direction, record: recordOwner(ctx, z.name) });
      syncRecorded(this.state, r.recorded);
      return r;
    } catch (err) {
      if (!isCancellation(err)) await this.readRecords(acts);
      throw err;
    }
  }

  /** Say in the status which switch the zone waits for; the confirmSwitch input for it. */
  private async announce(z: ZoneState, removals: readonly RouteRemoval[], expect: Expect): Promise<SwitchInput> {
    const { ctx } = this;
    const routes = removals.filter((r) => r.removed.length > 0).map((r) => r.route);
    z.note = { kind: 'confirming-switch', expect, vmauth: ctx.spec.vmauth.name };
    await this.report.write();
    return {
      namespace: ctx.ns,
      vmauthName: ctx.spec.vmauth.name,
      ...storageOf(z),
      expect,
      routes,
      pollIntervalMs: ctx.st.pollIntervalMs,
      fallbackWaitMs: SECRET_PROPAGATION_BOUND_MS,
    };
  }

  private confirmed(z: ZoneState, expect: Expect, r: SwitchConfirmed): void {
    z.switchConfirmed = r.message;
    log.info('read switch confirmed in the vmauth pods', { zone: z.name, expect, message: r.message });
  }
}

/** The VMUsers a zone's removals changed, each once: their new routes must be served too. */
function editedUsers(removals: readonly RouteRemoval[]): string[] {
  return [...new Set(removals.filter((r) => r.route.kind === 'VMUser' && r.removed.length > 0).map((r) => r.route.name))];
}
