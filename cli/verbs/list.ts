// `kubectl vmdc list [-A]` (also `get -A` and `get` without NAME): the objects of a namespace or of
// every namespace, one row each, from their status (no Temporal needed).
import type { Command } from '../args';
import { EXIT } from '../exit-codes';
import type { Io } from '../io';
import { listVmdcs, loadKube } from '../kube';
import { isDocument, renderDocument } from '../output';
import { listDocument, listRows, renderList } from '../render-list';

type ListCommand = Extract<Command, { verb: 'list' }>;

export async function list(cmd: ListCommand, io: Io): Promise<number> {
  const kube = loadKube(cmd.kube, cmd.verb);
  const rows = listRows(await listVmdcs(kube, cmd.allNamespaces), new Date());
  if (isDocument(cmd.output)) io.print(renderDocument(listDocument(rows), cmd.output));
  else if (rows.length === 0)
    io.print(cmd.allNamespaces ? 'no VMDistributedCluster in any namespace' : `no VMDistributedCluster in namespace ${kube.namespace}`);
  else for (const line of renderList(rows, { allNamespaces: cmd.allNamespaces, wide: cmd.output === 'wide' })) io.print(line);
  return EXIT.ok;
}
