// The workflow's in-memory state (also what the `progress` query returns). Pure types + helpers.
import type { RolloutInput } from '../api/rollout-contract';
import type { Condition, NormalizedSpec, ObjectGeneration, Phase, ZonePhase, ZoneStep } from '../api/types';
import type { RouteRemoval } from '../api/route-records';
import type { QueueSample } from './activity-types';
import { planZoneOrder, shuffleSeed } from './plan';
import type { RolloutSignals } from './signals';

export interface ZoneState {
  name: string;
  vmcluster: string;
  phase: ZonePhase;
  /** The step running or about to run (while the zone is in flight or Failed). */
  step?: ZoneStep;
  vmclusterGeneration?: number;
  startedAt?: string;
  /** When `step` began; a Failed zone keeps its failed step's. */
  stepStartedAt?: string;
  finishedAt?: string;
  message?: string;
  /** What leaving reads removed (undefined before step 1 computed it). */
  removals?: RouteRemoval[];
  /** True from the moment a route removal may have been applied until the restore completed. */
  outOfRotation: boolean;
  /** True from the moment the VMCluster patch may have been sent. */
  patchAttempted: boolean;
  /** Set once waitQueueDrained succeeded after the zone became operational at the patched generation. */
  drainedConfirmed: boolean;
  /** The step that failed (phase Failed). */
  failedStep?: ZoneStep;
  /**
   * The VMCluster's generation before this run could have patched it (undefined: unknown, e.g. a
   * zone found out of reads by an earlier generation). Cleanup decides "patched?" against it.
   */
  baseGeneration?: number;
  /** How the last read switch of the zone was confirmed in the vmauth pods. */
  switchConfirmed?: string;
}

export interface LastQueueSample extends QueueSample {
  zone: string;
  /** Since when the zone's queues have been empty without a break (the streak). */
  emptySince?: string;
}

export interface RolloutState {
  phase: Phase;
  message: string;
  order: string[];
  zones: ZoneState[];
  currentZone?: string;
  currentStep?: ZoneStep | 'Preparing' | 'PauseBetweenZones';
  paused: boolean;
  lastQueueSample?: LastQueueSample;
  conditions: Condition[];
  /** Why the last status write was rejected by the API server (cleared by the next write that lands). */
  statusError?: string;
  /** Set by prepare when zones were out of reads then: the route objects are applied once every zone is done. */
  routesDeferred: boolean;
}

/** State carried over a continue-as-new (only ever at a zone boundary, with no zone out of rotation). */
export interface CarriedState {
  zones: Array<Pick<ZoneState, 'name' | 'phase' | 'vmclusterGeneration' | 'startedAt' | 'finishedAt' | 'message'>>;
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

/** What the workflow returns. */
export interface RolloutResult {
  phase: Phase;
  message: string;
  zones: Array<{ name: string; phase: string; vmclusterGeneration?: number }>;
  zonesOutOfRotation: string[];
}

/** What the `progress` query returns. */
export interface Progress {
  phase: Phase;
  message: string;
  paused: boolean;
  pauseRequested: boolean;
  supersededBy?: number;
  currentZone?: string;
  currentStep?: RolloutState['currentStep'];
  order: string[];
  zones: Array<Omit<ZoneState, 'removals'> & { removedRefs: number }>;
  zonesOutOfRotation: string[];
  lastQueueSample?: LastQueueSample;
  statusError?: string;
}

/** The state a run starts from: every zone Pending, unless carried over a continue-as-new. */
export function initialState(spec: NormalizedSpec, object: ObjectGeneration, carried: CarriedState | undefined): RolloutState {
  return {
    phase: 'Pending',
    message: 'starting',
    order: planZoneOrder(spec.zones.map((z) => z.name), spec.strategy.order, shuffleSeed(object)),
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

export function zonesOutOfRotation(state: Pick<RolloutState, 'zones'>): string[] {
  return state.zones.filter((z) => z.outOfRotation).map((z) => z.name);
}

export function progressOf(state: RolloutState, signals: Pick<RolloutSignals, 'pauseRequested' | 'supersededBy'>): Progress {
  return {
    phase: state.phase,
    message: state.message,
    paused: state.paused,
    pauseRequested: signals.pauseRequested,
    supersededBy: signals.supersededBy,
    currentZone: state.currentZone,
    currentStep: state.currentStep,
    order: [...state.order],
    zones: state.zones.map(({ removals, ...z }) => ({
      ...z,
      removedRefs: (removals ?? []).reduce((n, r) => n + r.removed.length, 0),
    })),
    zonesOutOfRotation: zonesOutOfRotation(state),
    lastQueueSample: state.lastQueueSample,
    statusError: state.statusError,
  };
}
