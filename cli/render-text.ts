// The text view of `kubectl vmdc get`: a header, then one line per zone (with the backlog during
// the queue wait). Pure: view + now → lines, each at most `width` columns, colour only on request.
import type { Phase, ZonePhase } from '../api/types';
import { bar, formatAge, formatBytes, gatesText } from './format';
import { fit, seg, serialize, textWidth, wrap, type Colour, type Line, type Segment } from './style';
import type { QueueView, RolloutView, ZoneView } from './view';

export const DEFAULT_WIDTH = 100;

export interface TextOptions {
  now: Date;
  colour: boolean;
  width?: number;
}

const PHASE_LOOK: Record<Phase, { icon: string; colour: Colour }> = {
  Pending: { icon: '○', colour: 'dim' },
  Progressing: { icon: '◌', colour: 'cyan' },
  Paused: { icon: '‖', colour: 'yellow' },
  Succeeded: { icon: '✔', colour: 'green' },
  Failed: { icon: '✖', colour: 'red' },
  Superseded: { icon: '↷', colour: 'dim' },
  Cancelled: { icon: '⊘', colour: 'yellow' },
  Aborted: { icon: '■', colour: 'yellow' },
  Invalid: { icon: '⚠', colour: 'red' },
  Planned: { icon: '◇', colour: 'green' },
};

function zoneLook(phase: ZonePhase): { icon: string; colour: Colour } {
  if (phase === 'Done') return { icon: '✔', colour: 'green' };
  if (phase === 'Skipped') return { icon: '✔', colour: 'dim' };
  if (phase === 'Failed') return { icon: '✖', colour: 'red' };
  if (phase === 'Pending') return { icon: '○', colour: 'dim' };
  return { icon: '◌', colour: 'cyan' };
}

const LABEL = 14;
const label = (name: string) => seg(`${name}:`.padEnd(LABEL), 'bold');
/** How many lines a message may take before it is cut (`-o json` has it whole). */
const MESSAGE_LINES = 3;
const DETAIL_INDENT = '    ';
const BAR_CELLS = 20;

const ago = (iso: string | undefined, now: Date) => (iso && Number.isFinite(Date.parse(iso)) ? formatAge(now.getTime() - Date.parse(iso)) : undefined);

/** A labelled field whose value wraps under itself; no name: a line more of the field above. */
function field(name: string | undefined, value: string, width: number, style: Colour[] = []): Line[] {
  return wrap(value, width - LABEL, MESSAGE_LINES).map((text, i) => [i === 0 && name ? label(name) : seg(' '.repeat(LABEL)), { text, style }]);
}

/** The gate the rollout waits at, and the two commands a person answers it with. */
function awaitingLines(v: RolloutView, width: number, now: Date): Line[] {
  const a = v.awaiting;
  if (!a) return [];
  const age = ago(a.since, now);
  const command = (verb: string) => `kubectl vmdc ${verb} ${v.name} -n ${v.namespace}`;
  const since = age ? `, for ${age}` : '';
  const what = a.canary
    ? `approval of canary ${a.canary}, out of reads after an Inconclusive analysis${since}`
    : a.capacity
      ? `approval to go on with zone ${a.nextZone}, out of reads: the capacity guard breached (${a.capacity})${since}`
      : `approval at ${gatesText(a.gates)} before zone ${a.nextZone}${since}`;
  const out = a.canary || a.capacity;
  return [
    ...field('Awaiting', what, width, ['yellow', 'bold']),
    ...field(undefined, `${a.canary ? 'put it back, go on' : 'go on'}: ${command('promote')}`, width),
    ...field(undefined, `${out ? 'fail it, it stays out' : 'stop'}: ${command('abort')}`, width),
  ];
}

/**
 * The link to the workflow. With colour (a terminal) the link is a hyperlink and its text is cut to
 * fit; without, the URL is the only way to it, so it is printed whole, split over lines if it must be.
 */
function webUILines(url: string, width: number, colour: boolean): Line[] {
  if (LABEL + textWidth(url) <= width) return [[label('Web UI'), { text: url, link: url }]];
  if (colour) return [fit([label('Web UI'), { text: url, link: url, style: ['blue'] }], width)];
  const chars = [...url];
  const lines: Line[] = [[label('Web UI'), seg('(the URL is split over the next lines)')]];
  for (let i = 0; i < chars.length; i += width) lines.push([seg(chars.slice(i, i + width).join(''))]);
  return lines;
}

function header(v: RolloutView, width: number, colour: boolean, now: Date): Line[] {
  const lines: Line[] = [
    [label('Name'), seg(v.name)],
    [label('Namespace'), seg(v.namespace)],
  ];
  const look = v.phase ? PHASE_LOOK[v.phase] : { icon: '?', colour: 'dim' as Colour };
  lines.push([label('Phase'), seg(`${look.icon} ${v.phase ?? 'no status yet'}`, look.colour, 'bold')]);
  if (v.message) lines.push(...field('Message', v.message, width));
  if (v.specPaused && v.phase !== 'Paused' && !v.ended)
    lines.push([label('Paused'), seg('requested (spec.paused: true): the rollout stops at its next safe point', 'yellow')]);
  if (!v.specPaused && v.phase === 'Paused') lines.push([label('Paused'), seg('resume requested (spec.paused: false)', 'yellow')]);
  lines.push(...awaitingLines(v, width, now));
  const finished = v.zones.filter((z) => z.phase === 'Done' || z.phase === 'Skipped').length;
  const zone = v.zoneIndex ? `${v.zoneIndex}/${v.zoneCount} ${v.currentZone}` : `${finished}/${v.zoneCount} done`;
  lines.push([label('Zone'), seg(v.currentStep && !v.ended ? `${zone} · ${v.currentStep}` : zone)]);
  const { from, to } = v.version;
  lines.push([label('Version'), seg(from && to && from !== to ? `${from} → ${to}` : from && from === to ? `${to} (unchanged)` : (to ?? '-'))]);
  const gen = v.generation === undefined ? '-' : String(v.generation);
  lines.push([
    label('Generation'),
    seg(v.current || v.generation === undefined ? gen : `${gen} (the status still shows generation ${v.observedGeneration ?? '-'}: not picked up yet)`),
  ]);
  lines.push([label('Out of reads'), v.zonesOutOfRotation.length ? seg(v.zonesOutOfRotation.join(', '), 'yellow', 'bold') : seg('none')]);
  if (v.statusError) lines.push(...field('Status write', `rejected, retried: ${v.statusError}`, width, ['red']));
  lines.push([label('Workflow'), seg(v.workflow?.id ?? '-')]);
  if (v.workflow?.webUI) lines.push(...webUILines(v.workflow.webUI, width, colour));
  lines.push(
    ...field(
      'Source',
      v.source === 'workflow' ? 'the workflow (progress query)' : `the status only${v.sourceNote ? `: ${v.sourceNote}` : ''}`,
      width,
      v.source === 'workflow' ? [] : ['dim'],
    ),
  );
  return lines;
}

interface Columns {
  zone: number;
  phase: number;
  step: number;
  vmcluster: number;
}

/**
 * k/6, and the step's name when the phase does not say it: a Failed zone's failed step, or the
 * step a zone paused before (its phase is still the step it finished).
 */
function stepText(z: ZoneView): string {
  if (!z.stepIndex) return '-';
  return z.step === z.phase ? `${z.stepIndex}/${z.stepCount}` : `${z.stepIndex}/${z.stepCount} ${z.step}`;
}

const TIME_COL = 7;
const READS_COL = 5;
const GAP = '  ';

/** `text` in a column of `w`: padded, or cut with `…` so the columns after it stay aligned. */
const cell = (text: string, w: number) => (textWidth(text) > w ? `${[...text].slice(0, w - 1).join('')}…` : text.padEnd(w));

function zoneRow(z: ZoneView, c: Columns, now: Date): Line {
  const look = zoneLook(z.phase);
  const since = z.stepSince ? ago(z.stepSince, now) : undefined;
  return [
    seg(cell(z.name, c.zone)),
    seg(GAP),
    seg(`${look.icon} ${z.phase}`.padEnd(c.phase), look.colour),
    seg(GAP),
    seg(stepText(z).padEnd(c.step)),
    seg(GAP),
    seg((since ? `${z.stepSinceExact ? '' : '≤'}${since}` : '-').padEnd(TIME_COL)),
    seg(GAP),
    z.outOfReads ? seg((z.held ? 'HELD' : 'OUT').padEnd(READS_COL), z.phase === 'Failed' ? 'red' : 'yellow', 'bold') : seg('in'.padEnd(READS_COL)),
    seg(GAP),
    seg(cell(storageCell(z), c.vmcluster)),
    seg(GAP),
    seg(z.vmclusterGeneration === undefined ? '-' : String(z.vmclusterGeneration)),
  ];
}

/** Each pod's pending bytes, as many as fit in `room`; the others counted. */
function podsText(q: QueueView, room: number): string | undefined {
  const parts = q.pods.map((p) => `${p.pod} ${formatBytes(p.bytes)}`);
  const tail = (hidden: number) =>
    [hidden + q.unlistedPods ? `+${hidden + q.unlistedPods} more` : '', q.unreadablePods ? `${q.unreadablePods} unreadable` : ''].filter(Boolean);
  let n = parts.length;
  while (n > 0 && textWidth([...parts.slice(0, n), ...tail(parts.length - n)].join(' · ')) > room) n--;
  const items = [...parts.slice(0, n), ...tail(parts.length - n)];
  return items.length ? items.join(' · ') : undefined;
}

/** The queue wait: a bar counting down to queueDrainedFor, and each vmagent pod's pending bytes. */
function queueLines(q: QueueView, width: number, now: Date): Line[] {
  const pending = q.pods.reduce((n, p) => n + p.bytes, 0);
  const state = q.emptySince
    ? `empty ${formatAge(q.emptyForMs ?? 0)}${q.drainedForMs !== undefined ? ` of ${formatAge(q.drainedForMs)}` : ''}`
    : `not empty: ${formatBytes(pending)} pending`;
  const sample = q.sampleAt ? ` · sample ${ago(q.sampleAt, now) ?? '?'} ago` : '';
  const first: Segment[] = [seg(`${DETAIL_INDENT}backlog `)];
  if (q.drainedForMs) first.push(seg(`▕${bar(q.emptySince ? (q.emptyForMs ?? 0) / q.drainedForMs : 0, BAR_CELLS)}▏ `, q.emptySince ? 'green' : 'yellow'));
  first.push(seg(state), seg(sample, 'dim'));
  const pods = podsText(q, width - textWidth(`${DETAIL_INDENT}pending `));
  const lines: Line[] = [first];
  if (pods) lines.push([seg(`${DETAIL_INDENT}pending `), seg(pods)]);
  return lines;
}

/**
 * A zone in flight whose headroom preflight passed: what its tightest vmagent queue takes in and
 * can hold, while the queue fills (a failed zone says it in its message; in the queue wait the
 * backlog itself is shown).
 */
function headroomLines(z: ZoneView): Line[] {
  const h = z.headroom;
  if (!h?.fits || !z.step || z.phase === 'Failed' || z.queue || h.needBytes === undefined || h.roomBytes === undefined) return [];
  const rate = formatBytes(Math.round(h.rateBytesPerSecond ?? 0));
  return [
    [
      seg(`${DETAIL_INDENT}headroom `),
      seg(`${formatBytes(h.needBytes)} of ${formatBytes(h.roomBytes)} over ${formatAge(h.horizonSeconds * 1000)} (${h.pod}: ${rate}/s)`, 'dim'),
    ],
  ];
}

/** The canary's analysis, while it runs or once it decided: its verdict, against which zone, how many measurements (the zone's message says the latest). */
function analysisLines(z: ZoneView): Line[] {
  const a = z.analysis;
  if (!a) return [];
  const counts = `${a.measurements} measurement${a.measurements === 1 ? '' : 's'} of ${formatAge(a.bakeSeconds * 1000)} bake (${a.failed} Failed, ${a.inconclusive} Inconclusive)`;
  return [[seg(`${DETAIL_INDENT}canary `), seg(`${a.verdict}${a.promoted ? ' (promoted)' : ''} vs ${a.baseline ?? 'no zone'} · ${counts}`, 'dim')]];
}

/** The capacity guard's latest look at the reads the other zones carry, while the zone is out. */
function capacityLines(z: ZoneView): Line[] {
  const c = z.capacity;
  if (!c || !z.outOfReads) return [];
  const failed = c.errorRatio !== undefined ? `, ${(c.errorRatio * 100).toFixed(2)}% failed` : '';
  const latency = `${c.latencyMs !== undefined ? `, mean ${c.latencyMs} ms` : ''}${c.baselineLatencyMs !== undefined ? ` (before: ${c.baselineLatencyMs} ms)` : ''}`;
  return [
    [
      seg(`${DETAIL_INDENT}capacity `),
      seg(`${c.breached ? 'BREACHED' : 'ok'} · ${c.requests} reads since the last look${failed}${latency}`, c.breached ? 'yellow' : 'dim'),
    ],
  ];
}

/** The sample count of a zone out of reads (strategy.sampleParity): short or not, against which zone. */
function samplesLines(z: ZoneView): Line[] {
  const p = z.samples;
  if (!p || !z.outOfReads) return [];
  const missing = p.tenants.reduce((n, t) => n + t.missing, 0);
  const counted = `${p.tenantCount} tenant${p.tenantCount === 1 ? '' : 's'}`;
  const text = !p.healthy
    ? p.message
    : p.complete
      ? `ok · ${counted} as on ${p.healthy}`
      : missing > 0
        ? `SHORT · ${missing} missing against ${p.healthy} (${counted})`
        : `CANNOT TELL against ${p.healthy} (${counted})`;
  return [[seg(`${DETAIL_INDENT}samples `), seg(text, p.complete ? 'dim' : 'yellow')]];
}

function zoneDetails(z: ZoneView, width: number, now: Date): Line[] {
  return [...headroomLines(z), ...analysisLines(z), ...capacityLines(z), ...samplesLines(z), ...zoneMessageLines(z, width, now)];
}

function zoneMessageLines(z: ZoneView, width: number, now: Date): Line[] {
  if (z.queue) return queueLines(z.queue, width, now);
  const show = z.step !== undefined || z.phase === 'Failed' || z.outOfReads;
  if (!show || !z.message) return [];
  const colour: Colour[] = z.phase === 'Failed' ? ['red'] : ['dim'];
  return wrap(z.message, width - DETAIL_INDENT.length, MESSAGE_LINES).map((t) => [seg(DETAIL_INDENT), { text: t, style: colour }]);
}

/** The VMCLUSTER column: the zone's VMCluster, or its VMSingle said as one. */
const storageCell = (z: ZoneView): string => (z.vmcluster === undefined ? '-' : z.storageKind ? `${z.vmcluster} (VMSingle)` : z.vmcluster);

function zoneTable(v: RolloutView, width: number, now: Date): Line[] {
  const c: Columns = {
    zone: Math.min(24, Math.max(4, ...v.zones.map((z) => textWidth(z.name)))),
    phase: Math.max(5, ...v.zones.map((z) => textWidth(z.phase) + 2)),
    step: Math.max(4, ...v.zones.map((z) => textWidth(stepText(z)))),
    vmcluster: Math.min(32, Math.max(9, ...v.zones.map((z) => textWidth(storageCell(z))))),
  };
  const head: Line = [
    seg(
      [
        'ZONE'.padEnd(c.zone),
        'PHASE'.padEnd(c.phase),
        'STEP'.padEnd(c.step),
        'IN STEP'.padEnd(TIME_COL),
        'READS'.padEnd(READS_COL),
        'VMCLUSTER'.padEnd(c.vmcluster),
        'GEN',
      ].join(GAP),
      'bold',
    ),
  ];
  const lines: Line[] = [head];
  for (const z of v.zones) lines.push(zoneRow(z, c, now), ...zoneDetails(z, width, now));
  return lines;
}

function renderLines(v: RolloutView, opts: TextOptions): Line[] {
  const width = opts.width ?? DEFAULT_WIDTH;
  return [...header(v, width, opts.colour, opts.now), [], ...zoneTable(v, width, opts.now)].map((l) => fit(l, width));
}

export function renderText(v: RolloutView, opts: TextOptions): string[] {
  return renderLines(v, opts).map((l) => serialize(l, opts.colour));
}

/** One line for logs (`status`): phase, zone, step, the gate it waits at and what is out of reads. */
export function statusLine(v: RolloutView, width = DEFAULT_WIDTH): string {
  const parts = [v.current ? (v.phase ?? 'no status yet') : `generation ${v.generation ?? '-'} not picked up yet`];
  if (v.current && v.zoneIndex) parts.push(`zone ${v.zoneIndex}/${v.zoneCount} ${v.currentZone}${v.currentStep && !v.ended ? ` ${v.currentStep}` : ''}`);
  if (v.awaiting?.canary) parts.push(`awaiting approval of canary ${v.awaiting.canary} (Inconclusive analysis: promote or abort)`);
  else if (v.awaiting?.capacity) parts.push(`awaiting approval: the capacity guard breached while zone ${v.awaiting.nextZone} is out (promote or abort)`);
  else if (v.awaiting) parts.push(`awaiting approval at ${gatesText(v.awaiting.gates)} before zone ${v.awaiting.nextZone} (promote or abort)`);
  parts.push(`out of reads: ${v.zonesOutOfRotation.join(', ') || 'none'}`);
  return serialize(fit([seg(parts.join(' · '))], width), false);
}

/** How the rollout ended, in full (wrapped): the last thing `status` prints. */
export function endLines(v: RolloutView, width = DEFAULT_WIDTH): string[] {
  return wrap(`${v.ended ?? v.phase ?? '-'}: ${v.message ?? ''}`, width);
}
