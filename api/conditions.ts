// The one merge of VMDistributedCluster status conditions (metav1.Condition semantics), used by the
// workflow (building its status), the status-writing activity (carrying over conditions it does not
// own) and the trigger (its Valid condition). Pure, no Node imports: deterministic workflow code
// imports it too.
import type { Condition } from './types';

/** The order the workflow writes its conditions in (order: 'canonical'). */
export const CONDITION_ORDER: ReadonlyArray<Condition['type']> = ['Ready', 'Progressing', 'Paused', 'Valid', 'Drifted', 'RecordsVerified'];

/** A condition to set; one that carries no lastTransitionTime gets it from the merge. */
export type ConditionUpdate = Omit<Condition, 'lastTransitionTime'> & { lastTransitionTime?: string };

export interface MergeConditionsOptions {
  /** Set on every updated condition (otherwise each keeps its own). */
  observedGeneration?: number;
  /** 'stable' (default): existing conditions keep their place, new types are appended; 'canonical': CONDITION_ORDER. */
  order?: 'stable' | 'canonical';
}

/**
 * Sets `updates` in `current` and returns a new list; conditions of other types are kept.
 * A condition written as is (it carries its lastTransitionTime) needs no `now`: the activity writes
 * conditions whose times the workflow already computed.
 */
export function mergeConditions(current: ReadonlyArray<Condition> | undefined, updates: ReadonlyArray<Condition>, opts?: MergeConditionsOptions): Condition[];
/**
 * An update without lastTransitionTime keeps the current one while its status is unchanged, and
 * gets `now` (ISO time) when it is new or its status changed.
 */
export function mergeConditions(
  current: ReadonlyArray<Condition> | undefined,
  updates: ReadonlyArray<ConditionUpdate>,
  opts: MergeConditionsOptions & { now: string },
): Condition[];
export function mergeConditions(
  current: ReadonlyArray<Condition> | undefined,
  updates: ReadonlyArray<ConditionUpdate>,
  opts: MergeConditionsOptions & { now?: string } = {},
): Condition[] {
  const prev = current ?? [];
  const next = (u: ConditionUpdate): Condition => {
    const old = prev.find((c) => c.type === u.type);
    const kept = old && old.status === u.status && old.lastTransitionTime ? old.lastTransitionTime : undefined;
    const lastTransitionTime = u.lastTransitionTime ?? kept ?? opts.now;
    if (lastTransitionTime === undefined) throw new Error(`mergeConditions: condition ${u.type} has no lastTransitionTime and no now was given`);
    return { ...u, lastTransitionTime, ...(opts.observedGeneration !== undefined ? { observedGeneration: opts.observedGeneration } : {}) };
  };
  const out: Condition[] = [];
  const placed = new Set<Condition['type']>();
  for (const c of prev) {
    if (placed.has(c.type)) continue; // another condition of an updated type: one per type
    const u = updates.find((x) => x.type === c.type);
    if (!u) {
      out.push({ ...c });
      continue;
    }
    out.push(next(u));
    placed.add(c.type);
  }
  for (const u of updates) {
    if (placed.has(u.type)) continue;
    out.push(next(u));
    placed.add(u.type);
  }
  if (opts.order === 'canonical') out.sort((a, b) => CONDITION_ORDER.indexOf(a.type) - CONDITION_ORDER.indexOf(b.type));
  return out;
}
