// A whole read switch in one activity: every edited route object operational at its generation
// after the edit, then the switch confirmed in the vmauth pods. One history entry per switch
// instead of one per wait.
import type { AwaitSwitchInput, RolloutActivities, SwitchConfirmed } from '../../workflows/activity-types';

export async function awaitSwitch(
  acts: Pick<RolloutActivities, 'readObject' | 'waitOperational' | 'confirmSwitch'>,
  input: AwaitSwitchInput,
): Promise<{ confirmed: SwitchConfirmed }> {
  const { namespace, pollIntervalMs } = input;
  for (const r of input.routes) {
    // Unknown after a resume: the generation as it is now, which includes the edit.
    const generation = r.generation ?? (await acts.readObject({ kind: r.kind, namespace, name: r.name })).generation ?? 0;
    await acts.waitOperational({ kind: r.kind, namespace, name: r.name, generation, pollIntervalMs });
  }
  return { confirmed: await acts.confirmSwitch(input.confirm) };
}
