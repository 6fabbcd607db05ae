// kubectl vmdc's command line and exit codes, without a cluster: what parses, what is refused and
// with which code, and which status ends a rollout (the `status` and `get --watch` codes).
import { parseCommand, UsageError } from '../../cli/args';
import { ENDED_PHASES, EXIT, exitCodeForPhase, RELEASE_ZONE_EXIT } from '../../cli/exit-codes';
import { run } from '../../cli/main';
import { endedPhase, statusIsCurrent } from '../../cli/rollout-end';
import { temporalSettings } from '../../cli/temporal';
import type { VMDistributedClusterStatus } from '../../api/types';
import { PHASES } from '../../api/types';
import type { VmdcObject } from '../../kube/vmdc-object';
import { fakeIo } from '../support/fake-io';
import { writeKubeconfig } from '../support/kubeconfig';

/** A kubeconfig whose server nobody answers on: enough for everything that fails before a request. */
const deadKubeconfig = () => writeKubeconfig('https://127.0.0.1:1', '{ token: t }');

describe('parseCommand', () => {
  it('global flags before or after the verb; -n and the Temporal flags', () => {
    expect(parseCommand(['-n', 'monitoring', 'get', 'vm-global', '--watch', '--temporal-address', 't:7233', '--temporal-ui-url', 'http://ui'])).toMatchObject({
      verb: 'get',
      name: 'vm-global',
      watch: true,
      output: 'text',
      intervalMs: 2000,
      kube: { namespace: 'monitoring' },
      temporal: { address: 't:7233', uiUrl: 'http://ui' },
    });
    expect(parseCommand(['get', 'x', '-o', 'json', '-w', '--interval', '5s', '--context', 'prod', '--no-color'])).toMatchObject({
      output: 'json',
      watch: true,
      intervalMs: 5000,
      kube: { context: 'prod' },
      noColour: true,
    });
    expect(parseCommand(['status', 'x', '--timeout', '30m'])).toMatchObject({ verb: 'status', timeoutMs: 30 * 60_000 });
    expect(parseCommand(['status', 'x', '--timeout', '0'])).not.toHaveProperty('timeoutMs');
    expect(parseCommand(['cancel', 'x', '-y'])).toMatchObject({ verb: 'cancel', yes: true });
    expect(parseCommand(['cancel', 'x'])).toMatchObject({ yes: false });
    expect(parseCommand(['history', 'x', '--limit', '5', '-o', 'json'])).toMatchObject({ verb: 'history', limit: 5, output: 'json' });
    expect(parseCommand(['fleet', 'prod', '-n', 'team', '-o', 'yaml'])).toMatchObject({
      verb: 'fleet',
      name: 'prod',
      output: 'yaml',
      kube: { namespace: 'team' },
    });
    for (const verb of ['pause', 'resume', 'retry'] as const) expect(parseCommand([verb, 'x'])).toMatchObject({ verb, name: 'x' });
  });

  it('release-zone takes its flags, and NAME like the other verbs', () => {
    expect(parseCommand(['release-zone', '--namespace', 'ns', '--vmdc', 'dc', '--zone', 'az-a'])).toMatchObject({
      namespace: 'ns',
      vmdc: 'dc',
      zone: 'az-a',
      list: false,
    });
    expect(parseCommand(['release-zone', '-n', 'ns', 'dc', '--zone', 'az-a'])).toMatchObject({ vmdc: 'dc', zone: 'az-a' });
    expect(parseCommand(['release-zone', '-n', 'ns', '--uid', 'u-1', '--list'])).toMatchObject({ uid: 'u-1', list: true });
    expect(parseCommand(['release-zone', '-n', 'ns', '--list'])).toMatchObject({ list: true, vmdc: undefined, uid: undefined });
  });

  it('help: the overview, or one verb', () => {
    expect(parseCommand(['--help'])).toMatchObject({ verb: 'help', text: expect.stringContaining('usage: kubectl vmdc VERB') });
    expect(parseCommand(['help', 'status'])).toMatchObject({ verb: 'help', text: expect.stringMatching(/^usage: kubectl vmdc status NAME \[--timeout 1h\]/) });
    expect(parseCommand(['cancel', '-h'])).toMatchObject({ verb: 'help', text: expect.stringContaining('kubectl vmdc cancel NAME') });
  });

  it.each([
    [[], undefined],
    [['bogus'], undefined],
    [['status'], 'status'],
    [['get', 'a', 'b'], 'get'],
    [['get', 'x', '-o', 'xml'], 'get'],
    [['get', 'x', '--interval', '100ms'], 'get'],
    [['get', 'x', '--yes'], 'get'],
    [['status', 'x', '--timeout', 'soon'], 'status'],
    [['status', 'x', '--watch'], 'status'],
    [['history', 'x', '--limit', '0'], 'history'],
    [['fleet', 'prod.eu'], 'fleet'],
    [['fleet', 'prod', '--limit', '3'], 'fleet'],
    [['pause', 'x', '--bogus'], 'pause'],
    [['get', 'x', '--namespace', ' '], 'get'],
    [['release-zone', '--vmdc', 'dc', '--zone', 'az-a'], 'release-zone'],
    [['release-zone', '-n', 'ns', '--zone', 'az-a'], 'release-zone'],
    [['release-zone', '-n', 'ns', '--vmdc', 'dc'], 'release-zone'],
    [['release-zone', '-n', 'ns', '--vmdc', 'dc', '--uid', 'u', '--zone', 'az-a'], 'release-zone'],
    [['release-zone', '-n', 'ns', 'dc', '--vmdc', 'dc', '--zone', 'az-a'], 'release-zone'],
    [['release-zone', '-n', 'ns', '--vmdc', 'dc', '--list', '--zone', 'az-a'], 'release-zone'],
  ])('refuses %j (usage of %s)', (argv, verb) => {
    let err: unknown;
    try {
      parseCommand(argv);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).verb).toBe(verb);
  });
});

describe('exit codes', () => {
  it('help 0; bad arguments 3 with the usage; release-zone bad arguments 2, as the script had', async () => {
    const help = fakeIo();
    expect(await run(['help'], help)).toBe(EXIT.ok);
    expect(help.out.join('\n')).toContain('release-zone');

    const bad = fakeIo();
    expect(await run(['status'], bad)).toBe(EXIT.error);
    expect(bad.err).toEqual(['error: NAME is required', expect.stringMatching(/^usage: kubectl vmdc status NAME/)]);

    const rz = fakeIo();
    expect(await run(['release-zone', '--namespace', 'ns', '--vmdc', 'dc', '--zone', 'az-a', '--bogus'], rz)).toBe(RELEASE_ZONE_EXIT.usage);
    expect(rz.err.join('\n')).toContain('usage: kubectl vmdc release-zone');
    expect(EXIT).toEqual({ ok: 0, failed: 1, timeout: 2, error: 3, interrupted: 130 });
    expect(RELEASE_ZONE_EXIT).toEqual({ ok: 0, refused: 1, usage: 2 });
  });

  it('an unreadable kubeconfig or a bad context is 3 (release-zone: 1 and 2, as the script had)', async () => {
    const io = fakeIo();
    expect(await run(['get', 'x', '--kubeconfig', '/nonexistent/kubeconfig'], io)).toBe(EXIT.error);
    expect(io.err[0]).toMatch(/^error: .*ENOENT/);
    expect(await run(['status', 'x', '--kubeconfig', deadKubeconfig(), '--context', 'nope'], fakeIo())).toBe(EXIT.error);
    expect(await run(['release-zone', '-n', 'ns', '--list', '--kubeconfig', '/nonexistent/kubeconfig'], fakeIo())).toBe(RELEASE_ZONE_EXIT.refused);
    expect(await run(['release-zone', '-n', 'ns', '--list', '--kubeconfig', deadKubeconfig(), '--context', 'nope'], fakeIo())).toBe(RELEASE_ZONE_EXIT.usage);
  });

  it('Temporal settings the worker would refuse are refused the same way (3), flags naming the variable', async () => {
    const io = fakeIo({ TEMPORAL_TLS_CERT: __filename });
    expect(await run(['get', 'x', '--kubeconfig', deadKubeconfig(), '--temporal-address', 'no port'], io)).toBe(EXIT.error);
    expect(io.err.join('\n')).toMatch(/TEMPORAL_ADDRESS: must be host:port[^\n]*"no port"/);
    expect(io.err.join('\n')).toContain('TEMPORAL_TLS_KEY: TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together');
    const ui = fakeIo();
    expect(await run(['get', 'x', '--kubeconfig', deadKubeconfig(), '--temporal-ui-url', 'ui.example'], ui)).toBe(EXIT.error);
    expect(ui.err[0]).toContain('must be http(s)://');
  });

  it('the status verb: 0 for Succeeded and a dry run Planned, 1 for every other end', () => {
    expect(ENDED_PHASES.map((p) => [p, exitCodeForPhase(p)])).toEqual([
      ['Succeeded', 0],
      ['Failed', 1],
      ['Cancelled', 1],
      ['Superseded', 1],
      ['Aborted', 1],
      ['Invalid', 1],
      ['Planned', 0],
    ]);
  });
});

describe('temporalSettings', () => {
  it('the worker defaults, the variables, and flags over them', () => {
    expect(temporalSettings({}, {})).toEqual({ connection: expect.objectContaining({ address: 'localhost:7233', namespace: 'default' }) });
    const env = { TEMPORAL_ADDRESS: 'env:7233', TEMPORAL_NAMESPACE: 'env-ns', TEMPORAL_UI_URL: 'http://ui.env' };
    expect(temporalSettings({}, env)).toEqual({ connection: expect.objectContaining({ address: 'env:7233', namespace: 'env-ns' }), uiUrl: 'http://ui.env' });
    expect(temporalSettings({ address: 'flag:7233', tls: true, uiUrl: 'https://ui.flag' }, env)).toEqual({
      connection: expect.objectContaining({ address: 'flag:7233', namespace: 'env-ns', tls: expect.any(Object) }),
      uiUrl: 'https://ui.flag',
    });
  });
});

describe('when has the current spec rollout ended?', () => {
  const obj = (generation: number, status: VMDistributedClusterStatus): VmdcObject => ({ metadata: { name: 'x', namespace: 'ns', generation }, status });
  const ready = (g: number) => [{ type: 'Ready' as const, status: 'True' as const, reason: 'r', message: '', lastTransitionTime: 't', observedGeneration: g }];
  const wf = (g: number) => ({ id: `vmdc/ns/x/g${g}-abcdef12`, runId: 'r' });

  it('a spec change not yet picked up, or picked up but not yet written by its workflow, has not ended', () => {
    const before = { phase: 'Succeeded' as const, observedGeneration: 1, workflow: wf(1), conditions: ready(1) };
    expect(endedPhase(obj(1, before))).toBe('Succeeded');
    expect(endedPhase(obj(2, before))).toBeUndefined(); // the trigger has not seen generation 2
    expect(endedPhase(obj(2, { ...before, observedGeneration: 2, workflow: wf(2) }))).toBeUndefined(); // its workflow has not written yet
    expect(endedPhase(obj(2, { ...before, observedGeneration: 2, workflow: wf(2), conditions: ready(2) }))).toBe('Succeeded');
  });

  it('a generation that changed spec.paused only is adopted: the older workflow speaks for it', () => {
    expect(statusIsCurrent(obj(3, { phase: 'Paused', observedGeneration: 3, workflow: wf(2), conditions: ready(2) }))).toBe(true);
    expect(endedPhase(obj(3, { phase: 'Succeeded', observedGeneration: 3, workflow: wf(2), conditions: ready(2) }))).toBe('Succeeded');
  });

  it('Invalid is written by the trigger, without a workflow; running phases never end it', () => {
    expect(endedPhase(obj(4, { phase: 'Invalid', observedGeneration: 4 }))).toBe('Invalid');
    for (const phase of PHASES.filter((p) => !ENDED_PHASES.includes(p))) {
      expect(endedPhase(obj(2, { phase, observedGeneration: 2, workflow: wf(2), conditions: ready(2) }))).toBeUndefined();
    }
  });
});
