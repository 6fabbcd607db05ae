// `kubectl vmdc cancel NAME [--yes]`: what `temporal workflow cancel` does, after saying what the
// cleanup will and will not do (docs/operations.md#pause-resume-cancel-a-new-spec-a-worker-crash) and asking.
import type { Command } from '../args';
import { EXIT, Refused } from '../exit-codes';
import { prose, type Io } from '../io';
import { getVmdc, loadKube } from '../kube';
import { actionPrinter } from '../output';
import { endedPhase } from '../rollout-end';
import { requestCancel } from '../temporal';
import { onRunningWorkflow } from './workflow-source';

type CancelCommand = Extract<Command, { verb: 'cancel' }>;

const CLEANUP_RULES = [
  'The cleanup runs to its end whatever happens (a non-cancellable scope), for each zone out of reads:',
  '  - a zone whose VMCluster was not patched yet rejoins reads at once;',
  '  - a patched zone rejoins only if its VMCluster is operational and its vmagent backlog drained;',
  '    otherwise it stays out of reads, recorded on its routes, and the status says so: the next',
  '    generation takes it from there, or a person with `kubectl vmdc release-zone`.',
  'Nothing is rolled back: zones already done keep the new version, zones not reached the old one.',
  'The phase becomes Cancelled; a new spec starts a new rollout.',
];

export async function cancel(cmd: CancelCommand, io: Io): Promise<number> {
  const kube = loadKube(cmd.kube, cmd.verb);
  const o = actionPrinter(cmd.output, io.print);
  // With a document on stdout, what the person confirms goes to stderr, where the question is.
  const tell = cmd.output === 'text' ? io.print : io.warn;
  const obj = await getVmdc(kube, cmd.name);
  const st = obj.status ?? {};
  const id = st.workflow?.id;
  if (!id) throw new Refused('status.workflow names no workflow to cancel');
  const ended = endedPhase(obj);
  if (ended && ended !== 'Failed') throw new Refused(`the rollout has ended (${ended}): nothing to cancel`);
  const out = st.zonesOutOfRotation ?? [];
  tell(`Cancelling rollout ${id} of VMDistributedCluster ${kube.namespace}/${cmd.name}`);
  for (const l of prose(`(phase ${st.phase ?? '-'}${st.currentZone ? `, zone ${st.currentZone}` : ''}; out of reads now: ${out.join(', ') || 'none'}).`))
    tell(l);
  for (const line of CLEANUP_RULES) tell(line);
  if (!cmd.yes) {
    const answer = await io.confirm('Cancel this rollout? [y/N] ');
    if (answer === undefined) throw new Refused('stdin is not a terminal, so nobody can confirm: pass --yes');
    if (!answer) throw new Refused('not cancelled');
  }
  await onRunningWorkflow(cmd.temporal, io.env, id, 'cancel', (t) => requestCancel(t, id));
  o.line(`cancel requested for ${id}; the cleanup runs now`);
  o.line(`follow it: kubectl vmdc get ${cmd.name} -n ${kube.namespace} --watch (ends at Cancelled)`);
  o.document({
    verb: cmd.verb,
    namespace: kube.namespace,
    name: cmd.name,
    uid: obj.metadata?.uid,
    result: 'cancel-requested',
    workflowId: id,
    zonesOutOfRotation: out,
  });
  return EXIT.ok;
}
