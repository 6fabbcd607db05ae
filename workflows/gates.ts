// Where gates (strategy.gates) hold, and which zone is the canary (strategy.canary). Pure and free of
// @temporalio/workflow: the workflow waits where they say, and `kubectl vmdc plan` and the dry run
// predict those waits with the same functions.
import type { Canary, Gate } from '../api/types';

/**
 * The gates that hold before a zone about to be upgraded, given how many zones this rollout has
 * upgraded: each gate holds at one boundary, so none needs remembering across continue-as-new.
 */
export function gatesBefore(gates: readonly Gate[] | undefined, upgraded: number): Gate[] {
  return (gates ?? []).filter((g) => g === 'BeforeEachZone' || (g === 'BeforeFirstZone' ? upgraded === 0 : upgraded === 1));
}

/** Whether `zone`, about to be upgraded after `upgraded` others, is the canary: the zone named, or else the first one upgraded. */
export function isCanaryZone(canary: Pick<Canary, 'zone'> | undefined, zone: string, upgraded: number): boolean {
  if (!canary) return false;
  return canary.zone !== undefined ? canary.zone === zone : upgraded === 0;
}
