// `kubectl vmdc abort NAME [--reason TEXT]`: ends the rollout at the gate or pauseBetweenZones wait
// it is in, every zone in reads (phase Aborted), through the workflow's validated `abort` Update
// (cli/verbs/boundary-update.ts). A zone in flight is not aborted: pause or cancel stop it.
import type { Command } from '../args';
import { abortOutcome } from '../boundary-outcome';
import type { Io } from '../io';
import { abortRollout } from '../temporal';
import { boundaryUpdate } from './boundary-update';

export function abort(cmd: Extract<Command, { verb: 'abort' }>, io: Io): Promise<number> {
  return boundaryUpdate(cmd, io, (t, id) => abortRollout(t, id, cmd.reason === undefined ? {} : { reason: cmd.reason }), abortOutcome);
}
