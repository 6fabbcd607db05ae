// What `promote` and `abort` say about the workflow's answer to their Update (api/rollout-contract.ts):
// the lines for a person and the -o json|yaml document, or, when the workflow refused, the document
// and the error that ends the verb with exit 1. Pure: the answer in, words out (`deliver` prints them
// through the printer it is given).
import type { AbortResult, PromoteResult } from '../api/rollout-contract';
import { EXIT, Refused } from './exit-codes';
import { formatAge, gatesText } from './format';
import { prose } from './io';
import type { ActionDocument, actionPrinter } from './output';

/** The rollout an Update went to, as both verbs' documents name it. */
export interface UpdateTarget {
  verb: 'promote' | 'abort';
  namespace: string;
  name: string;
  uid?: string;
  workflowId: string;
}

export interface UpdateOutcome {
  lines: string[];
  document: ActionDocument;
  /** Set when the workflow refused: the verb prints the document, then throws this (exit 1). */
  refused?: Refused;
}

const base = (t: UpdateTarget) => ({ verb: t.verb, namespace: t.namespace, name: t.name, uid: t.uid, workflowId: t.workflowId });
const follow = (t: UpdateTarget, end = '') => `follow it: kubectl vmdc get ${t.name} -n ${t.namespace} --watch${end}`;

export function promoteOutcome(t: UpdateTarget, r: PromoteResult): UpdateOutcome {
  // A build from before gates answers only for its pause, without nextZone.
  if ('nextZone' in r)
    return {
      lines: [`${t.workflowId}: ${gatesText(r.gates)} passed; zone ${r.nextZone} starts now`, follow(t)],
      document: { ...base(t), result: 'accepted', gates: r.gates, nextZone: r.nextZone },
    };
  return {
    lines: [`${t.workflowId}: the wait after zone ${r.after} ended ${formatAge(r.skippedMs)} early; the next zone starts now`, follow(t)],
    document: { ...base(t), result: 'accepted', afterZone: r.after, skippedMs: r.skippedMs },
  };
}

export function abortOutcome(t: UpdateTarget, r: AbortResult): UpdateOutcome {
  const where = r.gates ? `at ${gatesText(r.gates)}` : 'in the pause between zones';
  const upgraded = `${r.upgraded} ${r.upgraded === 1 ? 'zone' : 'zones'} upgraded`;
  return {
    lines: [
      `${t.workflowId}: aborted ${where}, before zone ${r.nextZone}: every zone is in reads; ${upgraded}, the zones not reached keep their version`,
      'The phase becomes Aborted; a new spec starts a new rollout.',
      follow(t, ' (ends at Aborted)'),
    ],
    document: { ...base(t), result: 'accepted', gates: r.gates ?? null, nextZone: r.nextZone, upgraded: r.upgraded },
  };
}

/** A workflow of a vmrollout from before gates has no abort Update: Temporal's own words for that. */
const NO_ABORT_HANDLER = /No registered handler for update: abort/;

/** The workflow's validator said no (`reason`): nothing happened. */
export function refusedOutcome(t: UpdateTarget, reason: string): UpdateOutcome {
  const older = t.verb === 'abort' && NO_ABORT_HANDLER.test(reason) ? ' (its worker runs a vmrollout from before gates, which cannot abort)' : '';
  return {
    lines: [],
    document: { ...base(t), result: 'refused', reason },
    refused: new Refused(`${t.workflowId} refused the ${t.verb}: ${reason}${older}`),
  };
}

/** Says it through the verb's printer (text: the lines; -o json|yaml: the document), then ends the verb: 0, or the refusal (exit 1). */
export function deliver(said: UpdateOutcome, out: ReturnType<typeof actionPrinter>): number {
  for (const line of said.lines) for (const l of prose(line)) out.line(l);
  out.document(said.document);
  if (said.refused) throw said.refused;
  return EXIT.ok;
}
