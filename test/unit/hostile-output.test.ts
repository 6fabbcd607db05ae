// Issue 29, "Output is data": the hostile cases of test/fixtures/hostile/output.ts. What kubectl vmdc
// shows of the cluster reaches the terminal without control characters (text views, -o json, plain
// lines and errors); status messages built from a vmauth config or a vmagent page never quote a
// credential; command-line durations and names are bounded as the timers and the API server bound
// them. Placement of the hostile text in a view is seeded (test/support/property.ts).
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { ConfigUnreadableError, decodeConfig } from '../../activities/vmauth/config';
import { buildQueueSample, readZoneQueues } from '../../activities/vmagent/match';
import { MAX_DURATION_MS, parseCommand, UsageError } from '../../cli/args';
import { printableIo, type Io } from '../../cli/io';
import { run } from '../../cli/main';
import { printable } from '../../cli/printable';
import { renderJson, viewDocument } from '../../cli/render-json';
import { endLines, renderText, statusLine } from '../../cli/render-text';
import { renderHistory } from '../../cli/render-history';
import { buildView } from '../../cli/view';
import type { VmdcObject } from '../../kube/vmdc-object';
import { ARGS_CASES, CASES, PARSE_ERROR_CASES, TERMINAL_CASES, URL_LABEL_CASES } from '../fixtures/hostile/output';
import { assertProperty } from '../support/property';

const NOW = new Date('2026-12-04T10:00:00Z');
/** Any control character, or a bidirectional override, but newline. */
const CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
/** Our own colour (SGR) and hyperlink (OSC 8) sequences, which serialize adds after cleaning. */
const OURS = /\x1b\[[0-9;]*m|\x1b\]8;;[^\x1b]*\x1b\\/g;

function terminal(): { io: Io; shown: string[] } {
  const shown: string[] = [];
  const raw: Io = {
    env: {},
    stdout: { isTTY: true, columns: 100, write: (s) => void shown.push(s) },
    print: (l) => void shown.push(l),
    warn: (l) => void shown.push(l),
    confirm: async () => undefined,
    interrupted: new Promise(() => {}),
  };
  return { io: printableIo(raw), shown };
}

/** A VMDistributedCluster whose status carries `text` in the field `at`. */
function objectWith(at: number, text: string): VmdcObject {
  const zones = [
    { name: 'az-a', phase: 'Done' as const },
    { name: 'az-b', phase: 'Failed' as const, message: at === 0 ? text : 'failed at Patching' },
  ];
  return {
    metadata: { name: 'vm-global', namespace: 'monitoring', generation: 2, uid: 'u-1' },
    spec: { clusterVersion: at === 1 ? text : 'v1.151.0-cluster', zones: zones.map((z) => ({ name: z.name, vmcluster: { name: `vm-${z.name}` } })) },
    status: {
      observedGeneration: 2,
      phase: 'Failed',
      message: at === 2 ? text : 'zone az-b failed',
      currentZone: 'az-b',
      zonesOutOfRotation: at === 3 ? [text] : [],
      workflow: { id: at === 4 ? text : 'vmdc/monitoring/vm-global/g2', runId: 'r1' },
      zones,
    },
  } as VmdcObject;
}
const FIELDS = 5;

test('the table has one id per case and names its defect', () => {
  expect(new Set(CASES.map((c) => c.id)).size).toBe(CASES.length);
  for (const c of CASES) expect(c.defect && c.input && c.expect).toBeTruthy();
});

describe('kubectl vmdc shows the cluster as data (TERMINAL_CASES)', () => {
  test.each(TERMINAL_CASES)('$id: printable() removes the controls, keeps the text', ({ input, keeps }) => {
    expect(printable(input)).not.toMatch(CONTROL);
    expect(printable(input, { oneLine: true })).not.toMatch(/[\n\t]/);
    expect(printable(input)).toContain(keeps);
  });

  test('wherever the text stands in a view, no control character reaches the terminal (text, colour, json, status lines)', () => {
    assertProperty(
      fc.property(fc.constantFrom(...TERMINAL_CASES), fc.integer({ min: 0, max: FIELDS - 1 }), fc.string(), (c, at, noise) => {
        const view = buildView({ object: objectWith(at, `${noise}${c.input}${noise}`), webUI: { baseUrl: `https://ui/${c.input}`, namespace: 'default' } });
        const { io, shown } = terminal();
        for (const colour of [false, true]) for (const l of renderText(view, { now: NOW, colour })) io.stdout.write(`${l}\n`);
        io.print(statusLine(view));
        for (const l of endLines(view)) io.print(l);
        io.print(renderJson(view, NOW));
        for (const s of shown) expect(s.replace(OURS, '')).not.toMatch(CONTROL);
        // -o json stays JSON and says exactly what the cluster says: the controls are escaped, not dropped.
        expect(JSON.parse(shown[shown.length - 1]!)).toEqual(JSON.parse(JSON.stringify(viewDocument(view, NOW))));
      }),
    );
  });

  test('history rows go through the same cleaning', () => {
    const { io, shown } = terminal();
    for (const c of TERMINAL_CASES) {
      for (const l of renderHistory([{ workflowId: 'w', runId: 'r', status: 'RUNNING', clusterVersion: c.input, result: c.input }])) io.print(l);
    }
    for (const s of shown) expect(s).not.toMatch(CONTROL);
  });

  test('run() cleans what a verb prints: a raw terminal gets no control character from an error', async () => {
    const shown: string[] = [];
    const raw: Io = {
      env: {},
      stdout: { write: () => true },
      print: (l) => void shown.push(l),
      warn: (l) => void shown.push(l),
      confirm: async () => undefined,
      interrupted: new Promise(() => {}),
    };
    await run(['\u009b2Jverb'], raw);
    expect(shown.join('\n')).toContain('unknown verb "verb"');
    expect(shown.join('\n')).not.toMatch(CONTROL);
  });
});

describe('status never quotes a credential', () => {
  test.each(PARSE_ERROR_CASES)('$id: the vmauth config parse error', ({ input, secret, keeps }) => {
    let message = '';
    try {
      decodeConfig(gzipSync(input));
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigUnreadableError);
      message = (err as Error).message;
    }
    expect(message).toContain(keeps);
    expect(message).not.toContain(secret);
  });

  test.each(URL_LABEL_CASES)('$id: the vmagent queue sample', ({ input, secret, keeps }) => {
    const queue = { index: 0, url: 'https://writer:hunter2@lb.example/api/v1/write', dirName: '1_X' };
    const reading = readZoneQueues(`${input}\n`, [queue]);
    expect(reading.ok).toBe(false);
    const sample = buildQueueSample([{ pod: 'vmagent-0', reading }], { queueEmptyBytes: 0, at: NOW });
    expect(sample.message).toContain(keeps);
    expect(sample.message).not.toContain(secret);
    const problem = buildQueueSample([], { queueEmptyBytes: 0, at: NOW, problem: `VMAgent vm: ${input}` });
    expect(problem.message).not.toContain(secret);
  });
});

describe('the command line is bounded (ARGS_CASES)', () => {
  test.each(ARGS_CASES)('$id', ({ argv, names }) => {
    let err: unknown;
    try {
      parseCommand(argv);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toContain(names);
  });

  test('the longest duration a timer holds is accepted, and named in the refusal of a longer one', () => {
    expect(parseCommand(['status', 'vm', '--timeout', `${MAX_DURATION_MS}ms`])).toMatchObject({ timeoutMs: MAX_DURATION_MS });
    expect(() => parseCommand(['status', 'vm', '--timeout', `${MAX_DURATION_MS + 1}ms`])).toThrow(`at most ${MAX_DURATION_MS}ms`);
  });

  test('valid names pass: a subdomain NAME, a label namespace and zone', () => {
    expect(parseCommand(['get', 'vm.global-1', '-n', 'monitoring'])).toMatchObject({ name: 'vm.global-1', kube: { namespace: 'monitoring' } });
    expect(parseCommand(['release-zone', '-n', 'ns', 'vm', '--zone', 'az-a'])).toMatchObject({ vmdc: 'vm', zone: 'az-a' });
  });
});
