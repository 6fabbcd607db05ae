// `kubectl-vmdc __complete ARGS… WORD` (kubectl_complete-vmdc runs it for kubectl's TAB): the
// candidates of cli/complete-protocol.ts and, for a NAME, the VMDistributedClusters the person may
// list in the namespace given (or the context's). It prints no error: a TAB must never print one;
// when the names cannot be read, there are none to offer.
import { completeArgs, completeOutput } from '../complete-protocol';
import { EXIT } from '../exit-codes';
import type { Io } from '../io';
import { listVmdcs, loadKube } from '../kube';

export async function complete(args: string[], io: Io): Promise<number> {
  const answer = completeArgs(args);
  let candidates = answer.candidates;
  if (answer.names) {
    const word = args.at(-1) ?? '';
    const kube = answer.names;
    const names = await Promise.resolve()
      .then(() => listVmdcs(loadKube(kube), false))
      .then(
        (objs) => objs.flatMap((o) => (o.metadata?.name ? [o.metadata.name] : [])),
        () => [],
      );
    candidates = names.filter((n) => n.startsWith(word));
  }
  for (const line of completeOutput(candidates, answer.directive)) io.print(line);
  return EXIT.ok;
}
