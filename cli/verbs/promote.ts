// `kubectl vmdc promote NAME`: passes the gate the rollout waits at (strategy.gates) or ends its
// running pauseBetweenZones wait, so the next zone starts now, through the workflow's validated
// `promote` Update (cli/verbs/boundary-update.ts).
import type { Command } from '../args';
import { promoteOutcome } from '../boundary-outcome';
import type { Io } from '../io';
import { promoteWait } from '../temporal';
import { boundaryUpdate } from './boundary-update';

export function promote(cmd: Extract<Command, { verb: 'promote' }>, io: Io): Promise<number> {
  return boundaryUpdate(cmd, io, promoteWait, promoteOutcome);
}
