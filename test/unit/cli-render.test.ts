// kubectl vmdc's views are pure (object + workflow reading + now → lines): golden outputs of a
// rollout in each state a person looks at, the 100-column bound, colour only on request, and the
// JSON document's stable shape.
import type { Condition, VMDistributedClusterStatus } from '../../api/types';
import { renderJson, viewDocument } from '../../cli/render-json';
import { endLines, renderText, statusLine } from '../../cli/render-text';
import { StepClock } from '../../cli/step-clock';
import { textWidth } from '../../cli/style';
import { buildView, type ViewInput } from '../../cli/view';
import type { VmdcObject } from '../../kube/vmdc-object';
import type { Progress } from '../../api/rollout-contract';

const NOW = new Date('2026-03-04T10:20:30Z');
const WORKFLOW = { id: 'vmdc/monitoring/vm-global/g2-1a2b3c4d', runId: '0195a2b4-7c3d-7e8f-9a0b-1c2d3e4f5a6b' };
const ANSI = /\x1b[[\]]/;

function ready(generation: number, status: 'True' | 'False' = 'False'): Condition[] {
  return [{ type: 'Ready', status, reason: 'x', message: '', lastTransitionTime: '2026-03-04T10:00:00Z', observedGeneration: generation }];
}

function vmdc(status: VMDistributedClusterStatus, paused = false): VmdcObject {
  return {
    metadata: { name: 'vm-global', namespace: 'monitoring', generation: 2, uid: '1a2b3c4d-5e6f' },
    spec: {
      clusterVersion: 'v1.151.0-cluster',
      paused,
      zones: ['a', 'b', 'c'].map((z) => ({ name: `az-${z}`, vmcluster: { name: `vm-az-${z}` }, vmuser: { name: `reads-az-${z}` } })),
      vmauth: { name: 'vm-global' },
      vmagent: { name: 'vm-global' },
      strategy: { order: 'Declared', queueDrainedFor: '2m' },
    },
    status: { observedGeneration: 2, workflow: WORKFLOW, conditions: ready(2), ...status },
  };
}

const done = (name: string, gen: number) => ({
  name,
  phase: 'Done' as const,
  vmclusterGeneration: gen,
  startedAt: '2026-03-04T10:05:00Z',
  finishedAt: '2026-03-04T10:12:00Z',
});

function progressOf(p: Partial<Progress> & Pick<Progress, 'phase' | 'zones'>): Progress {
  return { message: '', paused: false, pauseRequested: false, order: ['az-a', 'az-b', 'az-c'], zonesOutOfRotation: [], ...p };
}

const pzone = (name: string, extra: Partial<Progress['zones'][number]>): Progress['zones'][number] => ({
  name,
  vmcluster: `vm-${name}`,
  phase: 'Pending',
  outOfRotation: false,
  patchAttempted: false,
  drainedConfirmed: false,
  removedRefs: 0,
  ...extra,
});

/** az-a done, az-b out of reads waiting for its backlog (the wait's heartbeat: empty for 50 s of 2 min), az-c pending. */
const queueWait: ViewInput = {
  object: vmdc({
    phase: 'Progressing',
    message: 'zone az-b: waiting for the vmagent backlog',
    currentZone: 'az-b',
    zonesOutOfRotation: ['az-b'],
    zones: [
      done('az-a', 4),
      { name: 'az-b', phase: 'WaitingForQueue', vmclusterGeneration: 7, startedAt: '2026-03-04T10:12:10Z' },
      { name: 'az-c', phase: 'Pending' },
    ],
  }),
  workflow: {
    progress: progressOf({
      phase: 'Progressing',
      message: 'zone az-b: waiting for the vmagent backlog',
      currentZone: 'az-b',
      currentStep: 'WaitingForQueue',
      zonesOutOfRotation: ['az-b'],
      zones: [
        pzone('az-a', { phase: 'Done', vmclusterGeneration: 4, startedAt: '2026-03-04T10:05:00Z', finishedAt: '2026-03-04T10:12:00Z' }),
        pzone('az-b', {
          phase: 'WaitingForQueue',
          step: 'WaitingForQueue',
          vmclusterGeneration: 7,
          startedAt: '2026-03-04T10:12:10Z',
          outOfRotation: true,
          patchAttempted: true,
          removedRefs: 4,
        }),
        pzone('az-c', {}),
      ],
    }),
    queueHeartbeat: {
      last: {
        at: '2026-03-04T10:20:28Z',
        pendingBytes: 0,
        unreadablePods: 0,
        totalPods: 2,
        drained: true,
        message: '2 pods, 0 B pending',
        podPendingBytes: { 'vmagent-vm-global-7d9f-0': 0, 'vmagent-vm-global-7d9f-1': 0 },
      },
      emptySince: '2026-03-04T10:19:38Z',
    },
  },
  previousVersion: 'v1.150.0-cluster',
  webUI: { baseUrl: 'http://ui.example', namespace: 'prod' },
};

/** The same wait seen without Temporal: the backlog as the wait last wrote it into the zone's message. */
const queueWaitStatusOnly: ViewInput = {
  object: vmdc({
    ...queueWait.object.status,
    zones: queueWait.object.status!.zones!.map((z) =>
      z.name === 'az-b'
        ? {
            ...z,
            message:
              'waiting for the vmagent backlog (sample at 2026-03-04T10:20:20Z): 2 pods, 0 B pending [vmagent-vm-global-7d9f-0 0 B, vmagent-vm-global-7d9f-1 0 B]; ' +
              'empty since 2026-03-04T10:19:38Z (42 s of 120 s)',
          }
        : z,
    ),
  }),
  workflowNote: 'Temporal at localhost:7233 unreachable (connect ECONNREFUSED 127.0.0.1:7233)',
};

/** Paused by spec.paused inside a zone: az-b, out of reads, stopped before its last step (its phase is still the step it finished). */
const paused: ViewInput = {
  object: vmdc(
    {
      phase: 'Paused',
      message: 'paused before RejoiningReads of zone az-b',
      currentZone: 'az-b',
      zonesOutOfRotation: ['az-b'],
      zones: [
        done('az-a', 4),
        { name: 'az-b', phase: 'WaitingForQueue', vmclusterGeneration: 7, startedAt: '2026-03-04T10:12:10Z', message: 'out of read rotation for the upgrade' },
        { name: 'az-c', phase: 'Pending' },
      ],
    },
    true,
  ),
  workflow: {
    progress: progressOf({
      phase: 'Paused',
      message: 'paused before RejoiningReads of zone az-b',
      paused: true,
      pauseRequested: true,
      currentZone: 'az-b',
      currentStep: 'RejoiningReads',
      zonesOutOfRotation: ['az-b'],
      zones: [
        pzone('az-a', { phase: 'Done', vmclusterGeneration: 4, startedAt: '2026-03-04T10:05:00Z', finishedAt: '2026-03-04T10:12:00Z' }),
        pzone('az-b', {
          phase: 'WaitingForQueue',
          step: 'RejoiningReads',
          vmclusterGeneration: 7,
          startedAt: '2026-03-04T10:12:10Z',
          outOfRotation: true,
          message: 'out of read rotation for the upgrade',
        }),
        pzone('az-c', {}),
      ],
    }),
  },
  previousVersion: 'v1.150.0-cluster',
};

const GATE_MESSAGE = 'waiting at gate AfterFirstZone for a person, every zone in reads: promote starts zone az-b, abort ends the rollout here';
const AWAITING = { gates: ['AfterFirstZone' as const], nextZone: 'az-b', since: '2026-03-04T10:17:18Z' };

/** az-a upgraded; the rollout waits at the AfterFirstZone gate before az-b, every zone in reads. */
const atGate: ViewInput = {
  object: vmdc({
    phase: 'Progressing',
    message: GATE_MESSAGE,
    currentZone: 'az-b',
    zonesOutOfRotation: [],
    awaiting: AWAITING,
    zones: [done('az-a', 4), { name: 'az-b', phase: 'Pending' }, { name: 'az-c', phase: 'Pending' }],
  }),
  workflow: {
    progress: progressOf({
      phase: 'Progressing',
      message: GATE_MESSAGE,
      currentZone: 'az-b',
      currentStep: 'AwaitingApproval',
      awaiting: AWAITING,
      zones: [
        pzone('az-a', { phase: 'Done', vmclusterGeneration: 4, startedAt: '2026-03-04T10:05:00Z', finishedAt: '2026-03-04T10:12:00Z' }),
        pzone('az-b', {}),
        pzone('az-c', {}),
      ],
    }),
  },
  previousVersion: 'v1.150.0-cluster',
};

const FAILED_MESSAGE =
  'failed at WaitingOperational, kept out of read rotation: VMCluster vm-az-b reports updateStatus failed at generation 7 ' +
  '(vmstorage-vm-az-b-1: CrashLoopBackOff: flag provided but not defined: -storage.minFreeDiskSpaceBytes)';

/** az-b failed and stays out of reads; Temporal cannot be asked: the status alone. */
const failed: ViewInput = {
  object: vmdc({
    phase: 'Failed',
    message: `zone az-b ${FAILED_MESSAGE.replace('failed at WaitingOperational, kept out of read rotation', 'failed at WaitingOperational')}`,
    currentZone: 'az-b',
    zonesOutOfRotation: ['az-b'],
    zones: [
      done('az-a', 4),
      { name: 'az-b', phase: 'Failed', vmclusterGeneration: 7, startedAt: '2026-03-04T10:12:10Z', message: FAILED_MESSAGE },
      { name: 'az-c', phase: 'Pending' },
    ],
    conditions: ready(2),
  }),
  workflowNote: 'Temporal at temporal.example:7233 unreachable (14 UNAVAILABLE: No connection established)',
};

/** Every zone upgraded; the link to the run in the Web UI. */
const succeeded: ViewInput = {
  object: vmdc({
    phase: 'Succeeded',
    message: 'all zones at v1.151.0-cluster (3 upgraded, 0 already up to date)',
    zonesOutOfRotation: [],
    zones: [done('az-a', 4), done('az-b', 8), done('az-c', 3)],
    conditions: ready(2, 'True'),
  }),
  workflowNote: 'the rollout has ended; its status is final',
  previousVersion: 'v1.150.0-cluster',
  webUI: { baseUrl: 'http://127.0.0.1:8233/', namespace: 'default' },
};

const plain = (input: ViewInput) => renderText(buildView(input), { now: NOW, colour: false });

describe('kubectl vmdc get: text view (golden)', () => {
  it('progressing, az-b out of reads in its queue wait: the backlog bar counts down to queueDrainedFor', () => {
    expect(plain(queueWait)).toEqual([
      'Name:         vm-global',
      'Namespace:    monitoring',
      'Phase:        ◌ Progressing',
      'Message:      zone az-b: waiting for the vmagent backlog',
      'Zone:         2/3 az-b · WaitingForQueue',
      'Version:      v1.150.0-cluster → v1.151.0-cluster',
      'Generation:   2',
      'Out of reads: az-b',
      'Workflow:     vmdc/monitoring/vm-global/g2-1a2b3c4d',
      'Web UI:       (the URL is split over the next lines)',
      'http://ui.example/namespaces/prod/workflows/vmdc%2Fmonitoring%2Fvm-global%2Fg2-1a2b3c4d/0195a2b4-7c3',
      'd-7e8f-9a0b-1c2d3e4f5a6b',
      'Source:       the workflow (progress query)',
      '',
      'ZONE  PHASE              STEP  IN STEP  READS  VMCLUSTER  GEN',
      'az-a  ✔ Done             -     -        in     vm-az-a    4',
      'az-b  ◌ WaitingForQueue  5/6   ≤8m20s   OUT    vm-az-b    7',
      '    backlog ▕████████░░░░░░░░░░░░▏ empty 50s of 2m00s · sample 2s ago',
      '    pending vmagent-vm-global-7d9f-0 0 B · vmagent-vm-global-7d9f-1 0 B',
      'az-c  ○ Pending          -     -        in     vm-az-c    -',
    ]);
  });

  it('the same queue wait from the status alone: the figures of the last status write', () => {
    const lines = plain(queueWaitStatusOnly);
    expect(lines.join('\n')).toContain('Source:       the status only: Temporal at localhost:7233 unreachable (connect ECONNREFUSED\n');
    expect(lines.slice(-4)).toEqual([
      'az-b  ◌ WaitingForQueue  5/6   ≤8m20s   OUT    vm-az-b    7',
      '    backlog ▕███████░░░░░░░░░░░░░▏ empty 42s of 2m00s · sample 10s ago',
      '    pending vmagent-vm-global-7d9f-0 0 B · vmagent-vm-global-7d9f-1 0 B',
      'az-c  ○ Pending          -     -        in     vm-az-c    -',
    ]);
  });

  it('paused before the last step of a zone: the step it waits to run is named', () => {
    expect(plain(paused)).toEqual([
      'Name:         vm-global',
      'Namespace:    monitoring',
      'Phase:        ‖ Paused',
      'Message:      paused before RejoiningReads of zone az-b',
      'Zone:         2/3 az-b · RejoiningReads',
      'Version:      v1.150.0-cluster → v1.151.0-cluster',
      'Generation:   2',
      'Out of reads: az-b',
      'Workflow:     vmdc/monitoring/vm-global/g2-1a2b3c4d',
      'Source:       the workflow (progress query)',
      '',
      'ZONE  PHASE              STEP                IN STEP  READS  VMCLUSTER  GEN',
      'az-a  ✔ Done             -                   -        in     vm-az-a    4',
      'az-b  ◌ WaitingForQueue  6/6 RejoiningReads  ≤8m20s   OUT    vm-az-b    7',
      '    out of read rotation for the upgrade',
      'az-c  ○ Pending          -                   -        in     vm-az-c    -',
    ]);
  });

  it('failed, the zone kept out of reads, from the status alone (Temporal unreachable)', () => {
    expect(plain(failed)).toEqual([
      'Name:         vm-global',
      'Namespace:    monitoring',
      'Phase:        ✖ Failed',
      'Message:      zone az-b failed at WaitingOperational: VMCluster vm-az-b reports updateStatus failed',
      '              at generation 7 (vmstorage-vm-az-b-1: CrashLoopBackOff: flag provided but not defined:',
      '              -storage.minFreeDiskSpaceBytes)',
      'Zone:         2/3 az-b',
      'Version:      v1.151.0-cluster',
      'Generation:   2',
      'Out of reads: az-b',
      'Workflow:     vmdc/monitoring/vm-global/g2-1a2b3c4d',
      'Source:       the status only: Temporal at temporal.example:7233 unreachable (14 UNAVAILABLE: No',
      '              connection established)',
      '',
      'ZONE  PHASE      STEP                    IN STEP  READS  VMCLUSTER  GEN',
      'az-a  ✔ Done     -                       -        in     vm-az-a    4',
      'az-b  ✖ Failed   4/6 WaitingOperational  ≤8m20s   OUT    vm-az-b    7',
      '    failed at WaitingOperational, kept out of read rotation: VMCluster vm-az-b reports updateStatus',
      '    failed at generation 7 (vmstorage-vm-az-b-1: CrashLoopBackOff: flag provided but not defined:',
      '    -storage.minFreeDiskSpaceBytes)',
      'az-c  ○ Pending  -                       -        in     vm-az-c    -',
    ]);
  });

  it('succeeded, with the Web UI link (split over lines without colour, never past 100 columns)', () => {
    expect(plain(succeeded)).toEqual([
      'Name:         vm-global',
      'Namespace:    monitoring',
      'Phase:        ✔ Succeeded',
      'Message:      all zones at v1.151.0-cluster (3 upgraded, 0 already up to date)',
      'Zone:         3/3 done',
      'Version:      v1.150.0-cluster → v1.151.0-cluster',
      'Generation:   2',
      'Out of reads: none',
      'Workflow:     vmdc/monitoring/vm-global/g2-1a2b3c4d',
      'Web UI:       (the URL is split over the next lines)',
      'http://127.0.0.1:8233/namespaces/default/workflows/vmdc%2Fmonitoring%2Fvm-global%2Fg2-1a2b3c4d/0195a',
      '2b4-7c3d-7e8f-9a0b-1c2d3e4f5a6b',
      'Source:       the status only: the rollout has ended; its status is final',
      '',
      'ZONE  PHASE   STEP  IN STEP  READS  VMCLUSTER  GEN',
      'az-a  ✔ Done  -     -        in     vm-az-a    4',
      'az-b  ✔ Done  -     -        in     vm-az-b    8',
      'az-c  ✔ Done  -     -        in     vm-az-c    3',
    ]);
  });
});

describe('kubectl vmdc get: a rollout waiting at a gate', () => {
  const awaitingLines = (input: ViewInput) => plain(input).filter((l) => /^Awaiting:|^ {14}(go on|stop):/.test(l));

  it('says which gate holds which zone, for how long, and the two commands that answer it', () => {
    expect(plain(atGate)).toEqual([
      'Name:         vm-global',
      'Namespace:    monitoring',
      'Phase:        ◌ Progressing',
      'Message:      waiting at gate AfterFirstZone for a person, every zone in reads: promote starts zone',
      '              az-b, abort ends the rollout here',
      'Awaiting:     approval at gate AfterFirstZone before zone az-b, for 3m12s',
      '              go on: kubectl vmdc promote vm-global -n monitoring',
      '              stop: kubectl vmdc abort vm-global -n monitoring',
      'Zone:         2/3 az-b · AwaitingApproval',
      'Version:      v1.150.0-cluster → v1.151.0-cluster',
      'Generation:   2',
      'Out of reads: none',
      'Workflow:     vmdc/monitoring/vm-global/g2-1a2b3c4d',
      'Source:       the workflow (progress query)',
      '',
      'ZONE  PHASE      STEP  IN STEP  READS  VMCLUSTER  GEN',
      'az-a  ✔ Done     -     -        in     vm-az-a    4',
      'az-b  ○ Pending  -     -        in     vm-az-b    -',
      'az-c  ○ Pending  -     -        in     vm-az-c    -',
    ]);
    expect(statusLine(buildView(atGate), 200)).toBe(
      'Progressing · zone 2/3 az-b AwaitingApproval · awaiting approval at gate AfterFirstZone before zone az-b (promote or abort) · out of reads: none',
    );
  });

  it('from the status alone too; two gates at once; none once promoted, when ended, or when not of the shape vmrollout writes', () => {
    const statusOnly: ViewInput = { object: atGate.object, workflowNote: 'Temporal unreachable' };
    expect(awaitingLines(statusOnly)[0]).toBe('Awaiting:     approval at gate AfterFirstZone before zone az-b, for 3m12s');
    const both = structuredClone(atGate);
    both.workflow!.progress.awaiting = { ...AWAITING, gates: ['BeforeFirstZone', 'BeforeEachZone'], nextZone: 'az-a' };
    expect(awaitingLines(both)[0]).toBe('Awaiting:     approval at gates BeforeFirstZone + BeforeEachZone before zone az-a, for 3m12s');
    // The workflow's answer wins over a status not yet rewritten: promoted, it waits for nobody.
    const promoted = structuredClone(atGate);
    delete promoted.workflow!.progress.awaiting;
    expect(awaitingLines(promoted)).toEqual([]);
    expect(buildView(promoted).awaiting).toBeUndefined();
    const aborted: ViewInput = {
      object: vmdc({ ...atGate.object.status, phase: 'Aborted', message: 'aborted at gate AfterFirstZone before zone az-b', conditions: ready(2) }),
    };
    expect(awaitingLines(aborted)).toEqual([]);
    expect(plain(aborted)[2]).toBe('Phase:        ■ Aborted');
    for (const awaiting of [{ gates: 'AfterFirstZone', nextZone: 'az-b', since: 'x' }, { gates: [], nextZone: 7, since: 'x' }, 'AfterFirstZone']) {
      const hostile: ViewInput = { object: vmdc({ ...atGate.object.status, awaiting: awaiting as never }) };
      expect([awaiting, awaitingLines(hostile)]).toEqual([awaiting, []]);
    }
  });

  it('-o json: awaiting {gates, nextZone, since}, null when none', () => {
    expect(viewDocument(buildView(atGate), NOW).awaiting).toEqual(AWAITING);
    expect(viewDocument(buildView(paused), NOW).awaiting).toBeNull();
  });
});

describe('kubectl vmdc get: the queue headroom preflight', () => {
  const HEADROOM = {
    at: '2026-03-04T10:12:11Z',
    fits: true,
    horizonSeconds: 1800,
    pods: 2,
    pod: 'vmagent-vm-global-7d9f-1',
    rateBytesPerSecond: 1536.4,
    needBytes: 2_765_520,
    roomBytes: 536_870_912,
    message: 'every vmagent queue for the zone holds its expected downtime; …',
  };
  /** The queue wait's rollout a step earlier (the operator restarting az-b: its queue fills), or in the queue wait itself. */
  const withHeadroom = (h: unknown, step: 'WaitingOperational' | 'WaitingForQueue' = 'WaitingOperational'): ViewInput => {
    const input = structuredClone(queueWait);
    const z = input.workflow!.progress.zones[1]!;
    Object.assign(z, { phase: step, step, queueHeadroom: h });
    input.workflow!.progress.currentStep = step;
    if (step !== 'WaitingForQueue') delete input.workflow!.queueHeartbeat;
    return input;
  };
  const headroomLines = (input: ViewInput) => plain(input).filter((l) => l.includes('headroom '));

  it('a zone in flight shows what its tightest vmagent queue needs over the expected downtime and can hold', () => {
    expect(headroomLines(withHeadroom(HEADROOM))).toEqual(['    headroom 2.6 MiB of 512.0 MiB over 30m00s (vmagent-vm-global-7d9f-1: 1.5 KiB/s)']);
    // Negative controls: the same view without a verdict has no such line; in the queue wait the backlog replaces it.
    expect(headroomLines(withHeadroom(undefined))).toEqual([]);
    expect(headroomLines(withHeadroom(HEADROOM, 'WaitingForQueue'))).toEqual([]);
    expect(plain(withHeadroom(HEADROOM, 'WaitingForQueue')).some((l) => l.startsWith('    backlog '))).toBe(true);
  });

  it('-o json: dataCompleteness as written, null when none or not of the shape vmrollout writes', () => {
    const COMPLETE = {
      at: '2026-03-04T10:20:30Z',
      complete: false,
      since: '2026-03-04T10:12:11Z',
      dropped: { samples: 19, bytes: 0, blocks: 0, packets: 0 },
      unverifiedPods: 0,
      message: 'vmagent dropped data for the zone …',
    };
    const withCompleteness = (c: unknown): ViewInput => {
      const input = structuredClone(queueWait);
      (input.workflow!.progress.zones[1] as { dataCompleteness?: unknown }).dataCompleteness = c;
      return input;
    };
    expect(viewDocument(buildView(withCompleteness(COMPLETE)), NOW).zones[1]!.dataCompleteness).toEqual(COMPLETE);
    expect(viewDocument(buildView(queueWait), NOW).zones[1]!.dataCompleteness).toBeNull();
    for (const hostile of [{ ...COMPLETE, dropped: { samples: -1 } }, { ...COMPLETE, complete: 'no' }, 7]) {
      expect([hostile, viewDocument(buildView(withCompleteness(hostile)), NOW).zones[1]!.dataCompleteness]).toEqual([hostile, null]);
    }
  });

  it('-o json: queueHeadroom as written, null when none; a value not of the shape vmrollout writes is not shown', () => {
    expect(viewDocument(buildView(withHeadroom(HEADROOM)), NOW).zones[1]!.queueHeadroom).toEqual(HEADROOM);
    expect(viewDocument(buildView(queueWait), NOW).zones[1]!.queueHeadroom).toBeNull();
    for (const hostile of [{ ...HEADROOM, fits: 'yes' }, { ...HEADROOM, roomBytes: -1 }, 'fits']) {
      expect([hostile, headroomLines(withHeadroom(hostile)), viewDocument(buildView(withHeadroom(hostile)), NOW).zones[1]!.queueHeadroom]).toEqual([
        hostile,
        [],
        null,
      ]);
    }
  });
});

describe('kubectl vmdc get: bounds and colour', () => {
  const all = [queueWait, queueWaitStatusOnly, paused, atGate, failed, succeeded];

  it('every line is at most 100 columns, with and without colour; no ANSI when colour is off', () => {
    for (const input of all) {
      for (const colour of [false, true]) {
        const lines = renderText(buildView(input), { now: NOW, colour });
        const visible = lines.map((l) => l.replace(/\x1b\]8;;[^\x1b]*\x1b\\/g, '').replace(/\x1b\[[0-9;]*m/g, ''));
        for (const l of visible) expect([l, textWidth(l)]).toEqual([l, Math.min(textWidth(l), 100)]);
        if (!colour) for (const l of lines) expect(l).not.toMatch(ANSI);
      }
    }
  });

  it('with colour: styled phases and a terminal hyperlink to the workflow carrying the whole URL', () => {
    const lines = renderText(buildView(succeeded), { now: NOW, colour: true });
    expect(lines.join('\n')).toContain('\x1b[32;1m✔ Succeeded\x1b[0m');
    const url = `http://127.0.0.1:8233/namespaces/default/workflows/${encodeURIComponent(WORKFLOW.id)}/${WORKFLOW.runId}`;
    expect(lines.find((l) => l.startsWith('\x1b[1mWeb UI:'))).toContain(`\x1b]8;;${url}\x1b\\`);
  });

  it('a zone its trafficMode holds out of reads is HELD, not OUT', () => {
    const held = structuredClone(succeeded);
    const st = held.object.status!;
    st.zonesOutOfRotation = ['az-c'];
    st.zones![2] = { ...st.zones![2]!, trafficMode: 'write-only' };
    const rows = plain(held).filter((l) => /^az-[bc] /.test(l));
    expect(rows[1]).toMatch(/^az-c +✔ Done .* HELD +vm-az-c/);
    // Negative control: out without a trafficMode is OUT; in reads, `in`.
    delete st.zones![2]!.trafficMode;
    expect(plain(held).find((l) => l.startsWith('az-c'))).toMatch(/ OUT +vm-az-c/);
    expect(rows[0]).toMatch(/ in +vm-az-b/);
  });

  it('a held zone in flight counts its own steps (write-only: 4, it never waits for its queue nor rejoins)', () => {
    const leaving = structuredClone(queueWait);
    const z = leaving.workflow!.progress.zones[1]!;
    Object.assign(z, { phase: 'WaitingForSwitch', step: 'WaitingForSwitch', held: 'write-only' });
    expect(buildView(leaving).zones[1]).toMatchObject({ step: 'WaitingForSwitch', stepIndex: 2, stepCount: 4, held: 'write-only' });
    // Negative control: the same zone not held has six.
    delete z.held;
    expect(buildView(leaving).zones[1]).toMatchObject({ stepIndex: 2, stepCount: 6 });
  });

  it('a narrower width is kept as well', () => {
    for (const input of all) for (const l of renderText(buildView(input), { now: NOW, colour: false, width: 60 })) expect(textWidth(l)).toBeLessThanOrEqual(60);
  });

  it('a step seen to begin is dated exactly; one found running is bounded by the zone start (≤)', () => {
    const clock = new StepClock();
    const first = clock.apply(buildView(queueWait), NOW);
    expect(first.zones[1]).toMatchObject({ step: 'WaitingForQueue', stepSince: '2026-03-04T10:12:10Z', stepSinceExact: false });
    const rejoining = structuredClone(queueWait);
    rejoining.workflow!.progress.zones[1]!.step = 'RejoiningReads';
    rejoining.workflow!.progress.zones[1]!.phase = 'RejoiningReads';
    const later = new Date(NOW.getTime() + 5000);
    const second = clock.apply(buildView(rejoining), later);
    expect(second.zones[1]).toMatchObject({ step: 'RejoiningReads', stepSince: later.toISOString(), stepSinceExact: true });
    const row = renderText(second, { now: new Date(later.getTime() + 3000), colour: false }).find((l) => l.startsWith('az-b'));
    expect(row).toMatch(/^az-b +◌ RejoiningReads +6\/6 +3s +OUT /);
  });

  it('a step the rollout dates (stepStartedAt, in the status or the progress query) is exact, and the clock keeps it', () => {
    const dated = structuredClone(failed);
    const st = dated.object.status!;
    st.zones![1]!.stepStartedAt = '2026-03-04T10:15:00Z';
    const fromStatus = buildView(dated);
    expect(fromStatus.zones[1]).toMatchObject({ step: 'WaitingOperational', stepSince: '2026-03-04T10:15:00Z', stepSinceExact: true });
    expect(plain(dated).find((l) => l.startsWith('az-b'))).toMatch(/^az-b +✖ Failed +4\/6 WaitingOperational +5m30s +OUT /);

    const running = structuredClone(queueWait);
    running.workflow!.progress.zones[1]!.stepStartedAt = '2026-03-04T10:19:00Z';
    const clock = new StepClock();
    expect(clock.apply(buildView(running), NOW).zones[1]).toMatchObject({ stepSince: '2026-03-04T10:19:00Z', stepSinceExact: true });
    // The same step still dated by the rollout at the next look: not re-dated from the watch.
    expect(clock.apply(buildView(running), new Date(NOW.getTime() + 5000)).zones[1]).toMatchObject({ stepSince: '2026-03-04T10:19:00Z', stepSinceExact: true });
  });

  it('status: one line a log can carry, then how it ended in full', () => {
    expect(statusLine(buildView(queueWait))).toBe('Progressing · zone 2/3 az-b WaitingForQueue · out of reads: az-b');
    expect(statusLine(buildView(succeeded))).toBe('Succeeded · out of reads: none');
    expect(statusLine(buildView(failed), 30)).toBe('Failed · zone 2/3 az-b · out …');
    expect(endLines(buildView(succeeded))).toEqual(['Succeeded: all zones at v1.151.0-cluster (3 upgraded, 0 already up to date)']);
    const failedEnd = endLines(buildView(failed));
    expect(failedEnd[0]).toMatch(/^Failed: zone az-b failed at WaitingOperational: /);
    for (const l of failedEnd) expect(textWidth(l)).toBeLessThanOrEqual(100);
  });
});

describe('kubectl vmdc get -o json', () => {
  it('has the same keys in the same order whatever the state, null for what is unknown', () => {
    const keys = (o: object) =>
      JSON.stringify(o, (_k, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.keys(v).map((k) => [k, 0])) : 0));
    const docs = [queueWait, paused, atGate, failed, succeeded].map((i) => viewDocument(buildView(i), NOW));
    for (const d of docs) expect(Object.keys(d)).toEqual(Object.keys(docs[0]!));
    const zoneKeys = docs.flatMap((d) => d.zones.map((z) => Object.keys(z).join(',')));
    expect(new Set(zoneKeys).size).toBe(1);
    // The backlog read from the status message has the shape of the one from the heartbeat.
    const fromStatus = viewDocument(buildView(queueWaitStatusOnly), NOW).zones[1]!.queue!;
    expect(keys(fromStatus)).toBe(keys(docs[0]!.zones[1]!.queue!));
    expect(fromStatus).toMatchObject({
      source: 'status',
      sampleAt: '2026-03-04T10:20:20Z',
      emptySince: '2026-03-04T10:19:38Z',
      emptyForSeconds: 42,
      drainedForSeconds: 120,
    });
  });

  it('the queue wait as a script reads it', () => {
    const doc = JSON.parse(renderJson(buildView(queueWait), NOW)) as ReturnType<typeof viewDocument>;
    expect(doc).toMatchObject({
      schemaVersion: 1,
      phase: 'Progressing',
      source: 'workflow',
      zoneIndex: 2,
      zoneCount: 3,
      clusterVersion: { from: 'v1.150.0-cluster', to: 'v1.151.0-cluster' },
      workflow: { ...WORKFLOW, webUI: `http://ui.example/namespaces/prod/workflows/${encodeURIComponent(WORKFLOW.id)}/${WORKFLOW.runId}` },
      zonesOutOfRotation: ['az-b'],
      ended: null,
    });
    expect(doc.zones[1]).toEqual({
      name: 'az-b',
      vmcluster: 'vm-az-b',
      phase: 'WaitingForQueue',
      step: 'WaitingForQueue',
      stepIndex: 5,
      stepSince: '2026-03-04T10:12:10Z',
      stepSinceIsUpperBound: true,
      secondsInStep: 500,
      outOfReads: true,
      vmclusterGeneration: 7,
      startedAt: '2026-03-04T10:12:10Z',
      finishedAt: null,
      message: null,
      queue: {
        source: 'heartbeat',
        sampleAt: '2026-03-04T10:20:28Z',
        pods: [
          { pod: 'vmagent-vm-global-7d9f-0', pendingBytes: 0 },
          { pod: 'vmagent-vm-global-7d9f-1', pendingBytes: 0 },
        ],
        unlistedPods: 0,
        unreadablePods: 0,
        emptySince: '2026-03-04T10:19:38Z',
        emptyForSeconds: 50,
        drainedForSeconds: 120,
      },
      queueHeadroom: null,
      dataCompleteness: null,
      sampleParity: null,
      analysis: null,
      capacity: null,
    });
  });

  it('is the same text for the same inputs', () => {
    expect(renderJson(buildView(failed), NOW)).toBe(renderJson(buildView(structuredClone(failed)), NOW));
    expect(viewDocument(buildView(succeeded), NOW)).toMatchObject({ ended: 'Succeeded', statusIsCurrent: true, source: 'status' });
  });
});

describe('kubectl vmdc get: the canary (strategy.canary)', () => {
  const ANALYSIS = {
    verdict: 'Failed',
    baseline: 'az-a',
    startedAt: '2026-03-04T10:15:00Z',
    bakeSeconds: 300,
    measurements: 3,
    failed: 1,
    inconclusive: 0,
    latest: {
      at: '2026-03-04T10:16:00Z',
      verdict: 'Failed',
      queries: [
        {
          query: 'sum(up)',
          source: 'spec',
          verdict: 'mismatch',
          baselineMs: 4,
          canaryMs: 5,
          baselineSeries: 1,
          canarySeries: 1,
          detail: 'series {}: 3 on the baseline, 2 on the canary',
        },
      ],
      message: '1 of 1 queries failed on the canary: mismatch for sum(up): series {}: 3 on the baseline, 2 on the canary',
    },
    message: 'canary analysis Failed after 3 measurements against az-a (1 Failed, 0 Inconclusive)',
  };
  /** az-b, the canary, failed its analysis: from the status alone. */
  const canaryFailed = (analysis: unknown): ViewInput => {
    const input = structuredClone(failed);
    const b = input.object.status!.zones![1]!;
    Object.assign(b, { message: `failed at Analyzing, kept out of read rotation: ${ANALYSIS.message}`, analysis });
    return input;
  };
  const zoneLines = (input: ViewInput) => plain(input).filter((l) => l.startsWith('az-b') || l.startsWith('    canary'));

  it('a canary counts 7 steps (Analyzing among them), and its analysis is a line under it; any other zone counts 6', () => {
    expect(zoneLines(canaryFailed(ANALYSIS))).toEqual([
      'az-b  ✖ Failed   6/7 Analyzing  ≤8m20s   OUT    vm-az-b    7',
      '    canary Failed vs az-a · 3 measurements of 5m00s bake (1 Failed, 0 Inconclusive)',
    ]);
    expect(buildView(canaryFailed(ANALYSIS)).zones[1]!.stepCount).toBe(7);
    expect(buildView(failed).zones[1]!.stepCount).toBe(6);
    expect(viewDocument(buildView(canaryFailed(ANALYSIS)), NOW).zones[1]!.analysis).toEqual(ANALYSIS);
  });

  it("an analysis not of the shape vmrollout writes is not shown (the status subresource is others' input too)", () => {
    for (const hostile of [{ ...ANALYSIS, verdict: 'Passed' }, { ...ANALYSIS, measurements: -1 }, 'Failed']) {
      expect([hostile, viewDocument(buildView(canaryFailed(hostile)), NOW).zones[1]!.analysis]).toEqual([hostile, null]);
      expect(zoneLines(canaryFailed(hostile)).some((l) => l.startsWith('    canary'))).toBe(false);
    }
  });

  it('awaiting a person after an Inconclusive analysis: what promote and abort do to the canary', () => {
    const input = canaryFailed({ ...ANALYSIS, verdict: 'Inconclusive', failed: 0, inconclusive: 3 });
    Object.assign(input.object.status!, { phase: 'Progressing', awaiting: { gates: [], nextZone: 'az-b', canary: 'az-b', since: '2026-03-04T10:20:00Z' } });
    const lines = plain(input);
    expect(lines.filter((l) => /^(Awaiting: | {14}(put|fail))/.test(l))).toEqual([
      'Awaiting:     approval of canary az-b, out of reads after an Inconclusive analysis, for 30s',
      '              put it back, go on: kubectl vmdc promote vm-global -n monitoring',
      '              fail it, it stays out: kubectl vmdc abort vm-global -n monitoring',
    ]);
    expect(statusLine(buildView(input), 200)).toContain('awaiting approval of canary az-b (Inconclusive analysis: promote or abort)');
  });
});

describe('kubectl vmdc get: the capacity guard (strategy.capacityGuard)', () => {
  const CHECK = {
    at: '2026-03-04T10:20:00Z',
    breached: true,
    requests: 812,
    errorRatio: 0,
    latencyMs: 512.4,
    baselineLatencyMs: 4.1,
    message: "vmauth's mean read latency 512.4 ms, 3× and 100 ms over its 4.1 ms before the zone left",
  };
  const withCapacity = (capacity: unknown, awaiting = true): ViewInput => {
    const input = structuredClone(queueWait);
    (input.workflow!.progress.zones[1] as { capacity?: unknown }).capacity = capacity;
    if (awaiting) input.workflow!.progress.awaiting = { gates: [], nextZone: 'az-b', capacity: CHECK.message, since: '2026-03-04T10:20:00Z' };
    return input;
  };
  it('a zone out shows the last look; a breach waits for a person, saying what promote and abort do', () => {
    const lines = plain(withCapacity(CHECK));
    expect(lines.filter((l) => l.startsWith('    capacity'))).toEqual([
      '    capacity BREACHED · 812 reads since the last look, 0.00% failed, mean 512.4 ms (before: 4.1 ms)',
    ]);
    expect(lines.filter((l) => /^(Awaiting: | {14}(go on|fail))/.test(l))).toEqual([
      "Awaiting:     approval to go on with zone az-b, out of reads: the capacity guard breached (vmauth's",
      '              go on: kubectl vmdc promote vm-global -n monitoring',
      '              fail it, it stays out: kubectl vmdc abort vm-global -n monitoring',
    ]);
    expect(viewDocument(buildView(withCapacity(CHECK)), NOW).zones[1]!.capacity).toEqual(CHECK);
  });
  it('a check not of the shape vmrollout writes is not shown', () => {
    for (const hostile of [{ ...CHECK, breached: 'yes' }, { ...CHECK, requests: -1 }, 7]) {
      expect([hostile, viewDocument(buildView(withCapacity(hostile, false)), NOW).zones[1]!.capacity]).toEqual([hostile, null]);
      expect(plain(withCapacity(hostile, false)).some((l) => l.startsWith('    capacity'))).toBe(false);
    }
  });
});

describe('kubectl vmdc get: the sample count (strategy.sampleParity)', () => {
  const SHORT = {
    at: '2026-03-04T10:20:00Z',
    complete: false,
    healthy: 'az-a',
    from: '2026-03-04T10:10:00Z',
    to: '2026-03-04T10:19:30Z',
    tenants: [
      { tenant: '3:0', samples: 700, healthySamples: 1000, missing: 300 },
      { tenant: '0:0', samples: 5000, healthySamples: 5000, missing: 0 },
    ],
    tenantCount: 2,
    message: '300 samples missing against az-a over its window 2026-03-04T10:10:00Z to 2026-03-04T10:19:30Z: tenant 3:0 lacks 300 of 1000 (30%)',
  };
  const withSamples = (samples: unknown): ViewInput => {
    const input = structuredClone(queueWait);
    (input.workflow!.progress.zones[1] as { sampleParity?: unknown }).sampleParity = samples;
    return input;
  };
  it('a zone out shows whether it has its samples, and against which zone', () => {
    expect(plain(withSamples(SHORT)).filter((l) => l.startsWith('    samples'))).toEqual(['    samples SHORT · 300 missing against az-a (2 tenants)']);
    expect(plain(withSamples({ ...SHORT, complete: true, tenants: [] })).filter((l) => l.startsWith('    samples'))).toEqual([
      '    samples ok · 2 tenants as on az-a',
    ]);
    expect(plain(withSamples({ ...SHORT, tenants: [], message: 'cannot tell against az-a: …' })).filter((l) => l.startsWith('    samples'))).toEqual([
      '    samples CANNOT TELL against az-a (2 tenants)',
    ]);
    expect(viewDocument(buildView(withSamples(SHORT)), NOW).zones[1]!.sampleParity).toEqual(SHORT);
  });
  it('a count not of the shape vmrollout writes is not shown', () => {
    for (const hostile of [{ ...SHORT, complete: 'no' }, { ...SHORT, tenants: [{ tenant: '0:0', samples: -1, healthySamples: 1, missing: 2 }] }, 'x']) {
      expect([hostile, viewDocument(buildView(withSamples(hostile)), NOW).zones[1]!.sampleParity]).toEqual([hostile, null]);
      expect(plain(withSamples(hostile)).some((l) => l.startsWith('    samples'))).toBe(false);
    }
  });
});
