// Before any zone: apply the VMAgent and VMUser definitions of the spec (created, or patched with
// their overlays) and wait until each is operational. A failure holds the rollout like a zone's.
import type { JsonObject } from '../api/types';
import { createsObject, managedObjectPatch } from './merge';
import type { Outcome, RolloutRun } from './rollout-run';

export function prepare(run: RolloutRun): Promise<Outcome> {
  const { state, spec, ns, st } = run;
  const { step, wait } = run.acts;
  state.currentStep = 'Preparing';
  return run.withFailureHold(async () => {
    state.phase = 'Progressing';
    state.message = 'applying VMAgent and VMUsers';
    await run.writeStatus();
    const items: Array<{ kind: 'VMAgent' | 'VMUser'; name: string; patch: JsonObject; create: boolean }> = [];
    const ap = managedObjectPatch(spec.vmagent);
    if (ap) items.push({ kind: 'VMAgent', name: spec.vmagent.name, patch: ap, create: createsObject(spec.vmagent) });
    for (const zs of spec.zones) {
      const up = managedObjectPatch(zs.vmuser);
      if (zs.vmuser && up) items.push({ kind: 'VMUser', name: zs.vmuser.name, patch: up, create: createsObject(zs.vmuser) });
    }
    // Nothing is applied unless the API server would take all of it.
    if (run.preflight) for (const it of items) await step.applyObject({ kind: it.kind, namespace: ns, name: it.name, patch: it.patch, create: it.create, dryRun: true });
    for (const it of items) {
      const r = await step.applyObject({ kind: it.kind, namespace: ns, name: it.name, patch: it.patch, create: it.create });
      await wait.waitOperational({ kind: it.kind, namespace: ns, name: it.name, generation: r.generation, pollIntervalMs: st.pollIntervalMs });
    }
    return 'done';
  });
}
