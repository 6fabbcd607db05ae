// `kubectl vmdc diff NAME`: what the rollout of the current spec would change in each zone's
// VMCluster: the apply the workflow would make (cli/zone-applies.ts), dry-run as the person
// (cli/zone-dry-run.ts), and the object's spec before and after as a unified diff. Nothing is
// stored. Exit 0: no zone would change; 1: some would (as `kubectl diff`). A zone in trafficMode
// maintenance is left alone by rollouts: said, not dry-run.
import { stringify } from 'yaml';
import type { Command } from '../args';
import { EXIT, Refused } from '../exit-codes';
import type { Io } from '../io';
import { getVmdc, loadKube } from '../kube';
import { actionPrinter } from '../output';
import { unifiedDiff } from '../unified-diff';
import { heldMode } from '../../api/traffic-mode';
import { zoneApplies } from '../zone-applies';
import { dryRunZones } from '../zone-dry-run';

type DiffCommand = Extract<Command, { verb: 'diff' }>;

/** Keys sorted: the same spec always reads the same, so only real changes show. */
const specText = (spec: unknown): string => (spec === undefined ? '' : stringify(spec, { sortMapEntries: true, lineWidth: 0 }));

export async function diff(cmd: DiffCommand, io: Io): Promise<number> {
  const kube = loadKube(cmd.kube, cmd.verb);
  const out = actionPrinter(cmd.output, io.print);
  const obj = await getVmdc(kube, cmd.name);
  const plan = zoneApplies(obj);
  if (!plan.ok) throw new Refused(`nothing to diff: ${plan.reason}`);
  let changed = 0;
  const zones: { zone: string; vmcluster: string; changed: boolean; missing?: true; leftAlone?: true; diff: string }[] = [];
  const alone = new Set(plan.spec.zones.filter((z) => heldMode(z) === 'maintenance').map((z) => z.name));
  for (const a of plan.applies.filter((x) => alone.has(x.zone))) {
    const note = `# ${a.kind} ${a.namespace}/${a.name} (zone ${a.zone}): trafficMode maintenance: left alone by rollouts, not diffed`;
    out.line(note);
    zones.push({ zone: a.zone, vmcluster: `${a.namespace}/${a.name}`, changed: false, leftAlone: true, diff: note });
  }
  const applies = plan.applies.filter((x) => !alone.has(x.zone));
  for (const { apply: a, current, after } of await dryRunZones(kube, applies)) {
    const what = `${a.kind} ${a.namespace}/${a.name} (zone ${a.zone})`;
    if (!after) {
      const note = `# ${what}: not found, and the spec names it without a full spec: the rollout would fail at this zone`;
      out.line(note);
      zones.push({ zone: a.zone, vmcluster: `${a.namespace}/${a.name}`, changed: true, missing: true, diff: note });
      changed++;
      continue;
    }
    const lines = unifiedDiff(specText(current?.spec), specText(after.spec), {
      from: `${what} spec${current ? '' : ' (absent: created)'}`,
      to: `${what} spec after vmrollout's apply (server-side dry run)`,
    });
    zones.push({ zone: a.zone, vmcluster: `${a.namespace}/${a.name}`, changed: lines.length > 0, diff: lines.join('\n') });
    if (lines.length === 0) continue;
    changed++;
    for (const l of lines) out.line(l);
  }
  if (changed === 0) out.line(`no zone's VMCluster or VMSingle would change (${applies.length} dry-run)`);
  out.document({ verb: cmd.verb, namespace: kube.namespace, name: cmd.name, uid: obj.metadata?.uid, result: changed ? 'changes' : 'none', zones });
  return changed ? EXIT.failed : EXIT.ok;
}
