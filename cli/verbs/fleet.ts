// `kubectl vmdc fleet NAME [-o json|yaml]`: what a fleet's parent workflow says (its progress query):
// per region the member rolling out, those queued, those ended, the requests it refused.
import { WorkflowNotFoundError } from '@temporalio/client';
import { fleetWorkflowId, QUERY_FLEET_PROGRESS, type FleetProgress } from '../../api/fleet-contract';
import type { Command } from '../args';
import { EXIT } from '../exit-codes';
import type { Io } from '../io';
import { loadKube, NotFound } from '../kube';
import { isDocument, renderDocument } from '../output';
import { fleetDocument, renderFleet, type FleetView } from '../render-fleet';
import { requireTemporal } from './workflow-source';

type FleetCommand = Extract<Command, { verb: 'fleet' }>;

export async function fleet(cmd: FleetCommand, io: Io): Promise<number> {
  const { namespace } = loadKube(cmd.kube, cmd.verb);
  const workflowId = fleetWorkflowId(namespace, cmd.name);
  const t = await requireTemporal(cmd.temporal, io.env);
  try {
    const handle = t.client.workflow.getHandle(workflowId);
    let view: FleetView;
    try {
      const d = await handle.describe();
      view = { workflowId, execution: d.status.name, progress: await handle.query<FleetProgress>(QUERY_FLEET_PROGRESS) };
    } catch (err) {
      if (err instanceof WorkflowNotFoundError)
        throw new NotFound(
          `no fleet ${cmd.name} in namespace ${namespace}: no member naming it in spec.fleet has had a rollout (workflow ${workflowId} not found)`,
        );
      throw err;
    }
    if (isDocument(cmd.output)) io.print(renderDocument(fleetDocument(view), cmd.output));
    else for (const line of renderFleet(view, new Date())) io.print(line);
    return EXIT.ok;
  } finally {
    await t.connection.close();
  }
}
