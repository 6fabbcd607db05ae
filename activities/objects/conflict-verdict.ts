// Which server-side apply conflicts one VMDistributedCluster's apply may resolve by force (the
// caller: activities/objects/apply-object.ts). Pure.
//
// A route edit (kube/field-managers.ts) owns a route list only while it holds a zone out of reads:
// - this VMDistributedCluster's own route edits are its own (its workflow applies route objects only
//   while none of its zones is out of reads: docs/design.md#one-rollout-per-generation);
// - another VMDistributedCluster's, while a zone of it is recorded out of reads on the object, are
//   never taken, not even with forceConflicts: the applied list would put that zone back into reads
//   in the middle of its upgrade;
// - once no zone of it is recorded there, its edit is over (the list is what it took out and put
//   back) and the field is taken like one's own;
// - an unattributed route edit (the shared manager of unreleased builds before 1.0.0-rc.1) is held
//   while any other VMDistributedCluster has a zone recorded out of reads on the object, and taken
//   otherwise.
import type { OutOfRotationRecord } from '../../api/route-records';
import type { FieldConflict } from '../../kube/apply-conflicts';
import { RELEASED_FIELD_MANAGER, routeEditor, UNATTRIBUTED_ROUTE_EDIT } from '../../kube/field-managers';

export type ConflictVerdict =
  /** vmrollout's own (its route edits, fields it handed over or applied and someone changed since, fields it takes): forced. */
  | { verdict: 'ours' }
  /** Another manager's: forced only with forceConflicts. */
  | { verdict: 'foreign' }
  /** Another VMDistributedCluster's route edit holding these zones out of reads: never forced. */
  | { verdict: 'held'; by: OutOfRotationRecord[] };

export interface ConflictContext {
  /** The uid of the applying VMDistributedCluster. */
  uid: string;
  /** Fields the VMDistributedCluster takes from whoever set them (a VMCluster's clusterVersion). */
  taken: readonly string[];
  /** Whether the field is one vmrollout applied and someone changed since (kube/applied-fields.ts isDrift). */
  drifted(field: string): boolean;
  /** The out-of-rotation records on the object (every VMDistributedCluster's). */
  records(): readonly OutOfRotationRecord[];
}

const OURS: ConflictVerdict = { verdict: 'ours' };

export function conflictVerdict(c: FieldConflict, ctx: ConflictContext): ConflictVerdict {
  const editor = routeEditor(c.manager);
  if (editor === ctx.uid) return OURS;
  if (editor !== undefined) {
    const others = ctx.records().filter((r) => r.vmdc.uid !== ctx.uid);
    const by = editor === UNATTRIBUTED_ROUTE_EDIT ? others : others.filter((r) => r.vmdc.uid === editor);
    return by.length > 0 ? { verdict: 'held', by } : OURS;
  }
  if (c.manager === RELEASED_FIELD_MANAGER || ctx.taken.includes(c.field) || ctx.drifted(c.field)) return OURS;
  return { verdict: 'foreign' };
}
