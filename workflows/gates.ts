// Where gates (strategy.gates) hold. Pure and free of @temporalio/workflow: the workflow waits where
// it says, and `kubectl vmdc plan` predicts those waits with the same function.
import type { Gate } from '../api/types';

/**
 * The gates that hold before a zone about to be upgraded, given how many zones this rollout has
 * upgraded: each gate holds at one boundary, so none needs remembering across continue-as-new.
 */
export function gatesBefore(gates: readonly Gate[] | undefined, upgraded: number): Gate[] {
  return (gates ?? []).filter((g) => g === 'BeforeEachZone' || (g === 'BeforeFirstZone' ? upgraded === 0 : upgraded === 1));
}
