// The workflows of the fleet's workflow test: the real fleet parent, and in place of the rollout a
// child that runs until the test ends it (signal `end` with its phase) or it is cancelled — so the
// test decides when each member's rollout ends and sees what the parent starts next. The real
// rollout children run under a fleet on the real stack (test/e2e/fleet.test.ts).
import { condition, defineSignal, isCancellation, setHandler } from '@temporalio/workflow';
import type { RolloutInput, RolloutResult } from '../../../api/rollout-contract';

export { fleetWorkflow } from '../../../workflows/fleet';

export const endSignal = defineSignal<[RolloutResult['phase']]>('end');

export async function rolloutWorkflow(_input: RolloutInput): Promise<Pick<RolloutResult, 'phase'>> {
  let phase: RolloutResult['phase'] | undefined;
  setHandler(endSignal, (p) => void (phase = p));
  try {
    await condition(() => phase !== undefined);
    return { phase: phase! };
  } catch (err) {
    if (isCancellation(err)) return { phase: 'Cancelled' };
    throw err;
  }
}
