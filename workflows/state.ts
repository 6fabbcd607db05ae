// The workflow's state: what happened so far, recorded by the steps as transitions (a zone's phase
// and its latest note, the run's latest note). What the status, the progress query, the Events and
// the Web UI say is derived from it in one place (status.ts). Pure types + helpers.
import type { CurrentStep, LastQueueSample, RolloutInput, ZoneProgress } from '../api/rollout-contract';
import type { Awaiting, Condition, DropReading, ReadHealthReading, Gate, NormalizedSpec, ObjectGeneration, RolloutPlanStatus, ZoneStep } from '../api/types';
import type { RouteRemoval } from '../api/route-records';
import { heldMode, type HeldMode } from '../api/traffic-mode';
import { planZoneOrder, shuffleSeed } from './plan';
import { namedStorage } from '../api/storage';

export interface ZoneState extends ZoneProgress {
  /** The latest thing that happened to the zone beyond its phase (status.ts says it in words). */
  note?: ZoneNote;
  /** What leaving reads removed (undefined before step 1 computed it). */
  removals?: RouteRemoval[];
  /** Found out of reads by its route records and taken over: it finishes an earlier rollout's work (not this one's first zone). */
  adopted?: true;
  /** When it left reads (the start of the window strategy.sampleParity counts; from its route records when adopted). */
  outSince?: string;
  /** vmagent's drop counters for the zone from before it left (or as of its last DataDropped failure). */
  dropBaseline?: DropReading;
  /** The capacity guard's readings (strategy.capacityGuard): before the zone left, and the latest one. */
  healthBaseline?: ReadHealthReading;
  healthLast?: ReadHealthReading;
  /** A held zone (`held`) this rollout only takes out of reads: maintenance, or already up to date. */
  leaveOnly?: true;
}

/** How a zone the cleanup put back into reads was found. */
export type RejoinedHow = 'before-upgrade' | 'after-upgrade' | 'not-changed' | 'drained';

/** What happened to a zone, beyond its phase: one kind per transition the status tells. */
export type ZoneNote =
  /** Its VMCluster is at the desired spec and operational: never left reads. */
  | { kind: 'skipped' }
  /** Waiting until the zones that will carry its reads are operational with empty backlogs. */
  | { kind: 'waiting-for-carriers'; carriers: string[] }
  /** Waiting until every ready vmauth pod runs the config without (absent) or with (present) it. */
  | { kind: 'confirming-switch'; expect: 'absent' | 'present'; vmauth: string }
  /** Announced out of reads, its route edit next. */
  | { kind: 'leaving' }
  /** Out of reads for its upgrade (entering a step). */
  | { kind: 'out-for-upgrade' }
  /** Waiting until its vmselects see no new /select/ request for quietMs. */
  | { kind: 'draining-reads'; quietMs: number }
  | { kind: 'failed'; step: ZoneStep; reason: string }
  /** A newer generation took over before its VMCluster changed. */
  | { kind: 'superseded-unpatched'; generation: number }
  /** The run stopped early (`why`) and the zone may not rejoin yet, for `reason`. */
  | { kind: 'stays-out'; why: string; reason: string }
  /** The run stopped early (`why`) and the zone rejoined. */
  | { kind: 'rejoined'; why: string; how: RejoinedHow; generation?: number }
  /** Found out of reads by its route records (left by `generation` at `since`). */
  | { kind: 'adopted'; since: string; generation: number }
  /** Out of reads for good, as its trafficMode says (upgraded: this rollout upgraded it). */
  | { kind: 'held'; mode: HeldMode; upgraded: boolean };

/** The run's latest transition: its phase and message follow from it (status.ts). */
export type RunNote =
  | { kind: 'starting' }
  | { kind: 'adopted'; zones: string[] }
  | { kind: 'preparing' }
  | { kind: 'zone-step'; zone: string; step: ZoneStep }
  | { kind: 'zone-skipped'; zone: string }
  | { kind: 'zone-done'; zone: string }
  | { kind: 'applying-deferred-routes' }
  /** A step failed (of zone `zone`, or of preparing when absent). */
  | { kind: 'failed'; zone?: string; step?: ZoneStep; reason: string }
  | { kind: 'retrying'; zone?: string; step?: ZoneStep }
  /** A status write was refused: the object moved on without this run. */
  | { kind: 'status-refused' }
  | { kind: 'succeeded'; clusterVersion: string; upgraded: number; upToDate: number; held?: Array<{ zone: string; mode: HeldMode }> }
  | { kind: 'superseded'; generation: number | undefined }
  /** The input is for an older generation: nothing done (`message` says why). */
  | { kind: 'stale'; message: string }
  | { kind: 'cancelled'; out: string[] }
  /** A dry run planned the rollout (status.plan) and changed nothing. */
  | { kind: 'planned'; upgrade: number; skip: number; adopt: number; hold?: number; fail: number }
  /** A person aborted at the boundary before `zone` (a gate's, or the pauseBetweenZones wait when no gates). */
  | { kind: 'aborted'; zone: string; gates?: Gate[]; reason?: string; upgraded: number };

export interface RolloutState {
  run: RunNote;
  order: string[];
  zones: ZoneState[];
  currentZone?: string;
  currentStep?: CurrentStep;
  paused: boolean;
  /** The gate the run waits at, while it does. */
  awaiting?: Awaiting;
  /** A dry run's plan (strategy.dryRun). */
  plan?: RolloutPlanStatus;
  lastQueueSample?: LastQueueSample;
  conditions: Condition[];
  /** Why the last status write was rejected by the API server (cleared by the next write that lands). */
  statusError?: string;
  /** Set by prepare when zones were out of reads then: the route objects are applied once every zone is done. */
  routesDeferred: boolean;
}

/**
 * State carried over a continue-as-new (only ever at a zone boundary, with no zone out of rotation
 * but those held by their trafficMode: the records say so again in the next run).
 */
export interface CarriedState {
  zones: Array<Pick<ZoneState, 'name' | 'phase' | 'vmclusterGeneration' | 'startedAt' | 'finishedAt' | 'note' | 'adopted'>>;
  conditions: RolloutState['conditions'];
  pauseRequested: boolean;
  supersededBy?: number;
  /** Route objects still to apply once every zone is done (see prepare). */
  routesDeferred?: boolean;
}

export type RolloutWorkflowInput = RolloutInput & {
  carried?: CarriedState;
  /** Test knob: continue-as-new past this many history events (default CONTINUE_AS_NEW_AFTER_EVENTS). */
  continueAsNewAfterEvents?: number;
};

/** The state a run starts from: every zone Pending, unless carried over a continue-as-new. */
export function initialState(spec: NormalizedSpec, object: ObjectGeneration, carried: CarriedState | undefined): RolloutState {
  return {
    run: { kind: 'starting' },
    order: planZoneOrder(
      spec.zones.map((z) => z.name),
      spec.strategy.order,
      shuffleSeed(object),
      spec.strategy.canary?.zone,
    ),
    zones: spec.zones.map((z) => ({
      name: z.name,
      ...namedStorage(z),
      phase: 'Pending',
      outOfRotation: false,
      patchAttempted: false,
      drainedConfirmed: false,
      ...(heldMode(z) ? { held: heldMode(z) } : {}),
      ...(carried?.zones.find((x) => x.name === z.name) ?? {}),
    })),
    paused: false,
    conditions: carried?.conditions ?? [],
    routesDeferred: !!carried?.routesDeferred,
  };
}

export function zoneState(state: Pick<RolloutState, 'zones'>, name: string): ZoneState {
  return state.zones.find((z) => z.name === name)!;
}

/** Whether leaving reads took anything out of a route for this zone (else it never left). */
export function removedAnything(z: Pick<ZoneState, 'removals'>): boolean {
  return (z.removals ?? []).some((r) => r.removed.length > 0);
}

/** The note of a zone its trafficMode keeps out of reads when the run stops early (`why`). */
export function heldStaysOut(z: Pick<ZoneState, 'held'>, why: string): ZoneNote {
  return { kind: 'stays-out', why, reason: `its trafficMode is ${z.held}` };
}

export function zonesOutOfRotation(state: Pick<RolloutState, 'zones'>): string[] {
  return state.zones.filter((z) => z.outOfRotation).map((z) => z.name);
}
