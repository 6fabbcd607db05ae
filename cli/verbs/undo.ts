// `kubectl vmdc undo NAME`: rolls out the last clusterVersion that succeeded (status.lastSucceeded)
// as a new generation: a merge patch of spec.clusterVersion with the person's own RBAC (`patch` on
// vmdistributedclusters), as `kubectl patch` would. The trigger starts its rollout like any other.
import type { Command } from '../args';
import { EXIT, Refused } from '../exit-codes';
import { prose, type Io } from '../io';
import { getVmdc, loadKube, setClusterVersion } from '../kube';
import { actionPrinter } from '../output';
import { undoPlan } from '../undo-plan';

type UndoCommand = Extract<Command, { verb: 'undo' }>;

export async function undo(cmd: UndoCommand, io: Io): Promise<number> {
  const kube = loadKube(cmd.kube, cmd.verb);
  const out = actionPrinter(cmd.output, io.print);
  const who = `VMDistributedCluster ${kube.namespace}/${cmd.name}`;
  const before = await getVmdc(kube, cmd.name);
  const plan = undoPlan(before);
  if (plan.kind === 'refused') throw new Refused(`${who}: ${plan.reason}`);
  const after = await setClusterVersion(kube, cmd.name, plan.to, before.metadata?.resourceVersion ?? '');
  for (const l of prose(
    `${who}: spec.clusterVersion ${plan.from ?? '(unset)'} → ${plan.to} (the last that succeeded, generation ${plan.succeededGeneration}); generation ${after.metadata?.generation ?? '?'} rolls it out zone by zone`,
  ))
    out.line(l);
  out.line(`follow it: kubectl vmdc status ${cmd.name} -n ${kube.namespace}`);
  out.document({
    verb: cmd.verb,
    namespace: kube.namespace,
    name: cmd.name,
    uid: after.metadata?.uid,
    result: 'set',
    clusterVersion: { from: plan.from ?? null, to: plan.to },
    succeededGeneration: plan.succeededGeneration,
    generation: after.metadata?.generation ?? null,
  });
  return EXIT.ok;
}
