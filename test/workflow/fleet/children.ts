// The workflows of the fleet's workflow test: the real fleet parent, and in place of the rollout a
// child that runs until the test ends it (signal `end` with its phase) or it is cancelled — so the
// test decides when each member's rollout ends and sees what the parent starts next. A member named
// `slow-…` cleans up after a cancel until the test ends it. The real rollout children run under a
// fleet on the real stack (test/e2e/fleet.test.ts).
import { CancellationScope, condition, defineSignal, isCancellation, setHandler } from '@temporalio/workflow';
import type { RolloutInput, RolloutResult } from '../../../api/rollout-contract';

export { fleetWorkflow } from '../../../workflows/fleet';

export const endSignal = defineSignal<[RolloutResult['phase']]>('end');

export async function rolloutWorkflow(input: RolloutInput): Promise<Pick<RolloutResult, 'phase'>> {
  let phase: RolloutResult['phase'] | undefined;
  setHandler(endSignal, (p) => void (phase = p));
  try {
    await condition(() => phase !== undefined);
    return { phase: phase! };
  } catch (err) {
    if (!isCancellation(err)) throw err;
    if (input.object.name.startsWith('slow-')) await CancellationScope.nonCancellable(() => condition(() => phase !== undefined));
    return { phase: 'Cancelled' };
  }
}
