// The contract of a fleet's parent workflow (spec.fleet, docs/operations.md#fleets-specfleet): its id, the
// signal the trigger hands a member's generation over with, the progress query the CLI reads.
// Plain values only, so the trigger, the workflow and the CLI can import it.
import type { RolloutInput } from './rollout-contract';

export const FLEET_WORKFLOW_TYPE = 'fleetWorkflow';
/** Signal: a member's generation to roll out (FleetMemberRequest), sent by the trigger with signalWithStart. */
export const SIGNAL_FLEET_MEMBER = 'member';
export const QUERY_FLEET_PROGRESS = 'fleetProgress';
/** A fleet queues at most this many members; more are refused (reported in the fleet's progress, never started). */
export const FLEET_MAX_QUEUED = 1000;
/** How many ended members the progress query keeps (the newest). */
export const FLEET_ENDED_KEPT = 100;

/** One parent workflow per fleet and namespace: a fleet never spans namespaces (tenants). */
export function fleetWorkflowId(namespace: string, fleet: string): string {
  return `fleet/${namespace}/${fleet}`;
}

export interface FleetInput {
  namespace: string;
  name: string;
}

/** A member's generation, handed over by the trigger: started as the child `workflowId` with these options. */
export interface FleetMemberRequest {
  workflowId: string;
  input: RolloutInput;
  /** See MEMO_SPEC_HASH. */
  specHash: string;
}

export interface FleetMemberRef {
  /** The VMDistributedCluster's name. */
  member: string;
  region: string;
  workflowId: string;
  /** ISO time it was queued, started or ended. */
  since: string;
}

export interface FleetEnded extends FleetMemberRef {
  /** The child's phase when it ended (Succeeded, Cancelled, Superseded, ...), or how it failed. */
  outcome: string;
}

export interface FleetProgress {
  namespace: string;
  fleet: string;
  paused: boolean;
  /** At most one per region. */
  running: FleetMemberRef[];
  /** In the order they start (per region). */
  queued: FleetMemberRef[];
  ended: FleetEnded[];
  /** Requests not queued (malformed, another namespace or fleet, a full queue), with why; the newest 20. */
  refused: string[];
}

export interface FleetResult {
  ended: FleetEnded[];
  refused: string[];
}
