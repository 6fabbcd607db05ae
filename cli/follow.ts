// Following an object's rollouts: the object through a Kubernetes watch, the workflow its status
// names (status.workflow: a new generation's workflow as soon as the trigger records it) through its
// progress query on every change and every `intervalMs`, until the rollout of the current spec ends
// (`status`, `make demo`) or, for `get --watch`, across rollouts until stopped.
import { refusedForGood } from '../kube/errors';
import type { Phase } from '../api/types';
import type { VmdcObject } from '../kube/vmdc-object';
import { followVmdc, type Kube } from './kube';
import { endedPhase } from './rollout-end';
import { StepClock } from './step-clock';
import { previousVersion, readWorkflow, temporalProblem, type Temporal } from './temporal';
import { buildView, type RolloutView, type ViewInput, type WorkflowReading } from './view';

/** Where the view's workflow part comes from. */
export interface WorkflowSource {
  temporal?: Temporal;
  /** Why there is no `temporal` (shown in the header). */
  note?: string;
  webUI?: { baseUrl: string; namespace: string };
}

/** Everything a view needs beyond the object: asks Temporal, unless the rollout has ended (the status is then final). */
export async function viewInput(object: VmdcObject, source: WorkflowSource, cache: Map<string, string | undefined> = new Map()): Promise<ViewInput> {
  const input: ViewInput = { object, ...(source.webUI ? { webUI: source.webUI } : {}) };
  const id = object.status?.workflow?.id;
  const t = source.temporal;
  if (!t) return source.note ? { ...input, workflowNote: source.note } : input;
  if (!id) return { ...input, workflowNote: 'no workflow yet' };
  if (!cache.has(id)) cache.set(id, await previousVersion(t, object.metadata?.namespace ?? '', object.metadata?.name ?? '', id).catch(() => undefined));
  const from = cache.get(id);
  if (from) input.previousVersion = from;
  const ended = endedPhase(object);
  // A Failed rollout has not ended: its workflow holds the zone until a retry, a new generation or a cancel.
  if (ended && ended !== 'Failed') return { ...input, workflowNote: 'the rollout has ended; its status is final' };
  let workflow: WorkflowReading;
  try {
    workflow = await readWorkflow(t, id);
  } catch (err) {
    return { ...input, workflowNote: `the workflow did not answer: ${temporalProblem(err)}` };
  }
  return { ...input, workflow };
}

export type FollowEnd = { kind: 'ended'; phase: Phase } | { kind: 'gone' } | { kind: 'stopped' } | { kind: 'error'; error: unknown };

export interface Following {
  done: Promise<FollowEnd>;
  stop(): void;
}

/**
 * Calls `onView` with a fresh view on every change of the object and every `intervalMs`, and ends
 * when the current spec's rollout has ended (after showing it; not with `acrossRollouts`: the next
 * spec's rollout is followed as well), the object is gone, `stop()` is called, or Kubernetes
 * refuses for good (the first read failing counts as that: nothing to follow).
 */
export function followRollout(opts: {
  kube: Kube;
  name: string;
  source: WorkflowSource;
  intervalMs: number;
  acrossRollouts?: boolean;
  onView(view: RolloutView, now: Date): void;
}): Following {
  const clock = new StepClock();
  const versions = new Map<string, string | undefined>();
  let latest: VmdcObject | undefined;
  let running = false;
  let again = false;
  let finished = false;
  let finish!: (end: FollowEnd) => void;
  const done = new Promise<FollowEnd>((resolve) => (finish = resolve));
  const end = (e: FollowEnd) => {
    if (finished) return;
    finished = true;
    watch.stop();
    clearInterval(tick);
    finish(e);
  };
  const refresh = async () => {
    if (!latest || finished) return;
    if (running) return void (again = true);
    running = true;
    try {
      do {
        again = false;
        const object = latest;
        const input = await viewInput(object, opts.source, versions);
        if (finished) return;
        const now = new Date();
        opts.onView(clock.apply(buildView(input), now), now);
        const phase = endedPhase(object);
        if (phase && !opts.acrossRollouts) return end({ kind: 'ended', phase });
      } while (again);
    } catch (error) {
      end({ kind: 'error', error });
    } finally {
      running = false;
    }
  };
  const watch = followVmdc(opts.kube, opts.name, {
    onObject(obj) {
      latest = obj;
      void refresh();
    },
    onGone: () => end({ kind: 'gone' }),
    onError(error) {
      if (!latest || refusedForGood(error)) end({ kind: 'error', error });
    },
  });
  const tick = setInterval(() => void refresh(), opts.intervalMs);
  return { done, stop: () => end({ kind: 'stopped' }) };
}
