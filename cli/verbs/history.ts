// `kubectl vmdc history NAME [-o wide|json|yaml] [--limit N]`: the object's rollouts from Temporal visibility
// (the Vmdc* search attributes the trigger sets), the deleted object's of that name included.
import type { Command } from '../args';
import { EXIT } from '../exit-codes';
import type { Io } from '../io';
import { getVmdc, loadKube, NotFound } from '../kube';
import { isDocument, renderDocument } from '../output';
import { historyDocument, historyRows, renderHistory } from '../render-history';
import { listRollouts, readResult } from '../temporal';
import { requireTemporal } from './workflow-source';

type HistoryCommand = Extract<Command, { verb: 'history' }>;

export async function history(cmd: HistoryCommand, io: Io): Promise<number> {
  const kube = loadKube(cmd.kube, cmd.verb);
  const obj = await getVmdc(kube, cmd.name).catch((err: unknown) => {
    if (err instanceof NotFound) return undefined;
    throw err;
  });
  const t = await requireTemporal(cmd.temporal, io.env);
  try {
    const records = (await listRollouts(t, kube.namespace, cmd.name)).slice(0, cmd.limit);
    for (const r of records) {
      const phase = await readResult(t, r);
      if (phase) r.resultPhase = phase;
    }
    const rows = historyRows(records, new Date(), { workflowId: obj?.status?.workflow?.id, phase: obj?.status?.phase });
    if (isDocument(cmd.output)) io.print(renderDocument(historyDocument(rows), cmd.output));
    else if (rows.length === 0) io.print(`no rollout of VMDistributedCluster ${kube.namespace}/${cmd.name} in Temporal namespace ${t.namespace}`);
    else for (const line of renderHistory(rows, { wide: cmd.output === 'wide' })) io.print(line);
    return EXIT.ok;
  } finally {
    await t.connection.close();
  }
}
