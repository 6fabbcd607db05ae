// The command line of `kubectl vmdc`: verbs, their flags, and the global Kubernetes and Temporal
// flags, which (as with kubectl) may stand before or after the verb. Pure: argv → Command.
import { parseArgs } from 'node:util';
import { parseDuration } from '../api/duration';
import { ABORT_REASON_MAX_LENGTH } from '../api/rollout-contract';
import { DNS1123_LABEL_PATTERN, DNS1123_SUBDOMAIN_PATTERN } from '../api/limits';
import { ACTION_OUTPUT_FLAG_VALUES, OUTPUT_FLAG_VALUES, type ActionOutput, type Output } from './output';

export type { Output } from './output';

export class UsageError extends Error {
  /** The verb whose usage applies (release-zone has its own exit code for bad arguments). */
  constructor(
    message: string,
    readonly verb?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface KubeFlags {
  kubeconfig?: string;
  context?: string;
  /** Unset: the kubeconfig context's namespace, as kubectl does. */
  namespace?: string;
}

/** Each overrides the environment variable the worker reads (TEMPORAL_ADDRESS, …). */
export interface TemporalFlags {
  address?: string;
  namespace?: string;
  tls?: boolean;
  tlsCert?: string;
  tlsKey?: string;
  tlsCa?: string;
  tlsServerName?: string;
  apiKey?: string;
  payloadKeysFile?: string;
  uiUrl?: string;
}

interface Common {
  kube: KubeFlags;
  temporal: TemporalFlags;
  noColour: boolean;
}

export const SHELLS = ['bash', 'zsh'] as const;
export type Shell = (typeof SHELLS)[number];

export type Command =
  | { verb: 'help'; text: string }
  | { verb: 'completion'; shell: Shell }
  | (Common & { verb: 'get'; name: string; watch: boolean; output: Output; intervalMs: number })
  | (Common & { verb: 'list'; allNamespaces: boolean; output: Output })
  | (Common & { verb: 'version'; output: Output })
  | (Common & { verb: 'status'; name: string; output: Output; timeoutMs?: number })
  | (Common & { verb: 'pause' | 'resume'; name: string; output: ActionOutput })
  | (Common & { verb: 'retry'; name: string; output: ActionOutput })
  | (Common & { verb: 'undo'; name: string; output: ActionOutput })
  | (Common & { verb: 'promote'; name: string; output: ActionOutput })
  | (Common & { verb: 'abort'; name: string; reason?: string; output: ActionOutput })
  | (Common & { verb: 'diff'; name: string; output: ActionOutput })
  | (Common & { verb: 'plan'; name: string; output: ActionOutput })
  | (Common & { verb: 'cancel'; name: string; yes: boolean; output: ActionOutput })
  | (Common & { verb: 'history'; name: string; output: Output; limit: number })
  | (Common & { verb: 'fleet'; name: string; output: Output })
  | (Common & { verb: 'release-zone'; namespace: string; vmdc?: string; uid?: string; zone?: string; list: boolean; output: ActionOutput });

export const VERBS = [
  'get',
  'list',
  'status',
  'pause',
  'resume',
  'retry',
  'cancel',
  'history',
  'fleet',
  'release-zone',
  'undo',
  'promote',
  'abort',
  'diff',
  'plan',
  'version',
  'completion',
] as const;
export type Verb = (typeof VERBS)[number];

export const GLOBAL_OPTIONS = {
  namespace: { type: 'string', short: 'n' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  'temporal-address': { type: 'string' },
  'temporal-namespace': { type: 'string' },
  'temporal-tls': { type: 'boolean' },
  'temporal-tls-cert': { type: 'string' },
  'temporal-tls-key': { type: 'string' },
  'temporal-tls-ca': { type: 'string' },
  'temporal-tls-server-name': { type: 'string' },
  'temporal-api-key': { type: 'string' },
  'temporal-payload-keys-file': { type: 'string' },
  'temporal-ui-url': { type: 'string' },
  'no-color': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const VERB_OPTIONS = {
  'all-namespaces': { type: 'boolean', short: 'A' },
  watch: { type: 'boolean', short: 'w' },
  output: { type: 'string', short: 'o' },
  interval: { type: 'string' },
  timeout: { type: 'string' },
  yes: { type: 'boolean', short: 'y' },
  limit: { type: 'string' },
  vmdc: { type: 'string' },
  uid: { type: 'string' },
  zone: { type: 'string' },
  list: { type: 'boolean' },
  reason: { type: 'string' },
} as const;

export type VerbOption = keyof typeof VERB_OPTIONS;

/** The one table of which verb takes which flag: parsing checks it, `completion` is generated from it. */
export const ALLOWED: Record<Verb, readonly VerbOption[]> = {
  get: ['watch', 'output', 'interval', 'all-namespaces'],
  list: ['all-namespaces', 'output'],
  version: ['output'],
  completion: [],
  status: ['timeout', 'output'],
  pause: ['output'],
  resume: ['output'],
  retry: ['output'],
  undo: ['output'],
  promote: ['output'],
  abort: ['reason', 'output'],
  diff: ['output'],
  plan: ['output'],
  cancel: ['yes', 'output'],
  history: ['output', 'limit'],
  fleet: ['output'],
  'release-zone': ['vmdc', 'uid', 'zone', 'list', 'output'],
};

const GLOBAL_HELP = `global flags (before or after the verb):
  -n, --namespace NS              default: the kubeconfig context's namespace
      --kubeconfig PATH           default: $KUBECONFIG, ~/.kube/config, in-cluster
      --context NAME              a kubeconfig context other than the current one
      --temporal-address H:P      $TEMPORAL_ADDRESS (default localhost:7233)
      --temporal-namespace NS     $TEMPORAL_NAMESPACE (default default)
      --temporal-tls              $TEMPORAL_TLS: TLS with the system roots
      --temporal-tls-cert PATH    $TEMPORAL_TLS_CERT (mTLS, with --temporal-tls-key)
      --temporal-tls-key PATH     $TEMPORAL_TLS_KEY
      --temporal-tls-ca PATH      $TEMPORAL_TLS_CA
      --temporal-tls-server-name  $TEMPORAL_TLS_SERVER_NAME
      --temporal-api-key KEY      $TEMPORAL_API_KEY (prefer the variable: a flag shows in ps)
      --temporal-payload-keys-file PATH   $TEMPORAL_PAYLOAD_KEYS_FILE (encrypted payloads)
      --temporal-ui-url URL       $TEMPORAL_UI_URL: link the workflow in the Web UI
      --no-color                  also off when stdout is not a terminal or $NO_COLOR is set`;

export const USAGE: Record<Verb | 'main', string> = {
  main: `usage: kubectl vmdc VERB [NAME] [flags]

  get NAME [-w|--watch] [-o wide|json|yaml] [--interval 2s]   the rollout: header, one line per zone
  list [-A|--all-namespaces] [-o wide|json|yaml]   one line per object (also: get -A, get without NAME)
  status NAME [--timeout 1h] [-o json|yaml]   wait for the rollout to end; exit 0 Succeeded or Planned, 1 Failed,
                                     Cancelled, Superseded, Aborted or Invalid, 2 timeout,
                                     3 usage/API error
  pause NAME | resume NAME           set spec.paused (the trigger signals the workflow)
  retry NAME                         resume a Failed zone (the workflow's resume signal)
  cancel NAME [-y|--yes]             cancel the rollout (after its cleanup rules and a confirmation)
  undo NAME                          roll out the last clusterVersion that succeeded, as a new generation
  promote NAME                       pass the gate the rollout waits at, or end its
                                     pauseBetweenZones wait: the next zone starts now
  abort NAME [--reason TEXT]         end the rollout at the gate or pauseBetweenZones wait it is in:
                                     phase Aborted, every zone in reads
  diff NAME                          each zone's VMCluster spec before/after vmrollout's apply (dry run)
                                     (these and release-zone: -o json|yaml, one document of what they did)
  plan NAME [-o json|yaml]           what a rollout of the current spec would do: zone order, zones
                                     skipped, route edits, gates and pauses, a predicted duration
  history NAME [-o json] [--limit 20]   past rollouts: generation, version, result, start, duration
  fleet NAME [-o json|yaml]          a fleet (spec.fleet) of the namespace: per region, the member
                                     rolling out, those queued, those ended
  release-zone ...                   put a zone kept out of reads back by hand (see its --help)
  version [-o json|yaml]             the plugin's version and the CRD versions the cluster serves
  completion bash|zsh                a shell completion script (source <(kubectl vmdc completion bash))
  import -f FILE|- [flags]           a VMDistributed (the VM operator's) as a VMDistributedCluster

${GLOBAL_HELP}`,
  get: `usage: kubectl vmdc get NAME [-w|--watch] [-o wide|json|yaml] [--interval 2s] [global flags]
       kubectl vmdc get [-A|--all-namespaces] [-o wide|json|yaml] [global flags]   (as list)`,
  list: 'usage: kubectl vmdc list [-A|--all-namespaces] [-o wide|json|yaml] [global flags]',
  version: 'usage: kubectl vmdc version [-o json|yaml] [global flags]',
  completion: 'usage: kubectl vmdc completion bash|zsh',
  status: 'usage: kubectl vmdc status NAME [--timeout 1h] [-o wide|json|yaml] [global flags]   (--timeout 0: none)',
  pause: 'usage: kubectl vmdc pause NAME [-o json|yaml] [global flags]',
  resume: 'usage: kubectl vmdc resume NAME [-o json|yaml] [global flags]',
  retry: 'usage: kubectl vmdc retry NAME [-o json|yaml] [global flags]',
  undo: 'usage: kubectl vmdc undo NAME [-o json|yaml] [global flags]',
  promote: 'usage: kubectl vmdc promote NAME [-o json|yaml] [global flags]',
  abort: `usage: kubectl vmdc abort NAME [--reason TEXT] [-o json|yaml] [global flags]
       --reason: why, in the status and the Event (at most ${ABORT_REASON_MAX_LENGTH} characters)`,
  diff: 'usage: kubectl vmdc diff NAME [-o json|yaml] [global flags]',
  plan: 'usage: kubectl vmdc plan NAME [-o json|yaml] [global flags]',
  cancel: 'usage: kubectl vmdc cancel NAME [-y|--yes] [-o json|yaml] [global flags]',
  history: 'usage: kubectl vmdc history NAME [-o wide|json|yaml] [--limit 20] [global flags]',
  fleet: 'usage: kubectl vmdc fleet NAME [-o json|yaml] [global flags]   (NAME: spec.fleet.name of the members in the namespace)',
  'release-zone': `usage: kubectl vmdc release-zone -n NS (NAME | --vmdc NAME | --uid UID) --zone ZONE [-o json|yaml] [--kubeconfig PATH]
       kubectl vmdc release-zone -n NS [NAME | --vmdc NAME | --uid UID] --list [-o json|yaml] [--kubeconfig PATH]`,
};

const DEFAULT_INTERVAL_MS = 2000;
/**
 * `status` without --timeout: a CI job must not hang for ever on a rollout that waits for a person
 * (a Paused or Failed one). An hour covers a few zones with their waits; longer ones say so.
 */
export const DEFAULT_STATUS_TIMEOUT_MS = 60 * 60_000;
const MIN_INTERVAL_MS = 500;
const DEFAULT_HISTORY_LIMIT = 20;
const MAX_HISTORY_LIMIT = 1000;

/** Node's timers hold at most 2^31-1 ms (about 24.8 days); a longer one fires at once. */
export const MAX_DURATION_MS = 2 ** 31 - 1;

function duration(flag: string, value: string, verb: Verb): number {
  const r = parseDuration(value);
  if (!r.ok) throw new UsageError(`--${flag} ${JSON.stringify(value)} ${r.message}`, verb);
  if (r.ms > MAX_DURATION_MS)
    throw new UsageError(`--${flag} ${JSON.stringify(value)} is too long: at most ${MAX_DURATION_MS}ms (about 24.8 days, 596h)`, verb);
  return r.ms;
}

// The names the API server accepts (apimachinery's NameIsDNSSubdomain for a custom resource's
// name, a DNS-1123 label for a namespace and a zone name). Checked before any request: a name such as
// `..` or `a/b` would otherwise become a different URL path of the API.
const NAME_RULES = {
  name: {
    re: new RegExp(DNS1123_SUBDOMAIN_PATTERN),
    max: 253,
    what: "a lowercase DNS-1123 subdomain (a-z, 0-9, '-' and '.', starting and ending with a letter or digit)",
  },
  label: { re: new RegExp(DNS1123_LABEL_PATTERN), max: 63, what: "a lowercase DNS-1123 label (a-z, 0-9 and '-', starting and ending with a letter or digit)" },
} as const;

function checkName(what: string, value: string | undefined, rule: keyof typeof NAME_RULES, verb: Verb): void {
  if (value === undefined) return;
  const { re, max, what: form } = NAME_RULES[rule];
  if (value.length > max || !re.test(value))
    throw new UsageError(`${what} ${JSON.stringify(value)} is not a valid name: it must be ${form}, at most ${max} characters`, verb);
}

function output(value: string | undefined, verb: Verb): Output {
  if (value === undefined) return 'text';
  const known: readonly string[] = OUTPUT_FLAG_VALUES;
  if (!known.includes(value))
    throw new UsageError(`-o ${JSON.stringify(value)}: the output formats are ${OUTPUT_FLAG_VALUES.join(', ')} (the default is text)`, verb);
  return value as Output;
}

/** The verbs that act: -o json|yaml says what they did; -o wide means nothing there, so it is refused, not ignored. */
function actionOutput(value: string | undefined, verb: Verb): ActionOutput {
  const o = output(value, verb);
  if (o === 'wide') throw new UsageError(`-o wide: ${verb} prints no table to widen; its output formats are ${ACTION_OUTPUT_FLAG_VALUES.join(', ')}`, verb);
  return o;
}

export function parseCommand(argv: string[]): Command {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...GLOBAL_OPTIONS, ...VERB_OPTIONS }, strict: true, allowPositionals: true });
  } catch (err) {
    const verb = argv.find((a) => (VERBS as readonly string[]).includes(a));
    throw new UsageError((err as Error).message, verb);
  }
  const { values, positionals } = parsed;
  const [verbWord, ...names] = positionals;
  if (verbWord === 'help' || (values.help && !verbWord)) {
    const topic = names[0];
    return { verb: 'help', text: topic && Object.hasOwn(USAGE, topic) ? USAGE[topic as Verb] : USAGE.main };
  }
  if (verbWord === undefined) throw new UsageError('no verb given');
  if (!(VERBS as readonly string[]).includes(verbWord)) throw new UsageError(`unknown verb ${JSON.stringify(verbWord)}`);
  const verb = verbWord as Verb;
  if (values.help) return { verb: 'help', text: USAGE[verb] };

  for (const k of Object.keys(VERB_OPTIONS) as VerbOption[]) {
    if (values[k] !== undefined && !ALLOWED[verb].includes(k)) throw new UsageError(`${verb} takes no --${k}`, verb);
  }
  for (const [k, v] of Object.entries(values)) {
    if (typeof v === 'string' && v.trim() === '') throw new UsageError(`--${k} must not be empty`, verb);
  }

  const common: Common = {
    kube: { kubeconfig: values.kubeconfig, context: values.context, namespace: values.namespace },
    temporal: {
      address: values['temporal-address'],
      namespace: values['temporal-namespace'],
      tls: values['temporal-tls'],
      tlsCert: values['temporal-tls-cert'],
      tlsKey: values['temporal-tls-key'],
      tlsCa: values['temporal-tls-ca'],
      tlsServerName: values['temporal-tls-server-name'],
      apiKey: values['temporal-api-key'],
      payloadKeysFile: values['temporal-payload-keys-file'],
      uiUrl: values['temporal-ui-url'],
    },
    noColour: values['no-color'] === true,
  };

  checkName('--namespace', values.namespace, 'label', verb);
  for (const n of names) checkName('NAME', n, 'name', verb);
  checkName('--vmdc', values.vmdc, 'name', verb);
  checkName('--zone', values.zone, 'label', verb);
  if (verb === 'release-zone') return releaseZone(common, names, values, actionOutput(values.output, verb));
  if (verb === 'completion') {
    const shell = names[0];
    if (names.length !== 1 || !(SHELLS as readonly string[]).includes(shell!)) throw new UsageError(`one shell: ${SHELLS.join(' or ')}`, verb);
    return { verb, shell: shell as Shell };
  }
  if (verb === 'version' || verb === 'list' || (verb === 'get' && (values['all-namespaces'] || names.length === 0))) {
    if (names.length) throw new UsageError(verb === 'get' ? `-A lists every object: no NAME (got ${names.join(' ')})` : `${verb} takes no NAME`, verb);
    if (verb === 'version') return { ...common, verb, output: output(values.output, verb) };
    if (values.watch || values.interval) throw new UsageError('--watch and --interval follow one object: give its NAME (not -A)', verb);
    return { ...common, verb: 'list', allNamespaces: values['all-namespaces'] === true, output: output(values.output, verb) };
  }

  if (names.length !== 1) throw new UsageError(names.length ? `one NAME only, got ${names.join(' ')}` : 'NAME is required', verb);
  const name = names[0]!;
  switch (verb) {
    case 'get': {
      const intervalMs = values.interval === undefined ? DEFAULT_INTERVAL_MS : duration('interval', values.interval, verb);
      if (intervalMs < MIN_INTERVAL_MS) throw new UsageError(`--interval must be at least ${MIN_INTERVAL_MS}ms`, verb);
      return { ...common, verb, name, watch: values.watch === true, output: output(values.output, verb), intervalMs };
    }
    case 'status': {
      // `0` (no unit, as kubectl takes it): wait without a timeout.
      const timeoutMs =
        values.timeout === undefined ? DEFAULT_STATUS_TIMEOUT_MS : values.timeout.trim() === '0' ? 0 : duration('timeout', values.timeout, verb);
      return { ...common, verb, name, output: output(values.output, verb), ...(timeoutMs > 0 ? { timeoutMs } : {}) };
    }
    case 'cancel':
      return { ...common, verb, name, yes: values.yes === true, output: actionOutput(values.output, verb) };
    case 'abort': {
      // The workflow's validator refuses a longer one too: refused here, nothing is sent.
      const reason = values.reason;
      if (reason !== undefined && reason.length > ABORT_REASON_MAX_LENGTH)
        throw new UsageError(`--reason is ${reason.length} characters long: at most ${ABORT_REASON_MAX_LENGTH}`, verb);
      return { ...common, verb, name, ...(reason !== undefined ? { reason } : {}), output: actionOutput(values.output, verb) };
    }
    case 'history': {
      const limit = values.limit === undefined ? DEFAULT_HISTORY_LIMIT : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_HISTORY_LIMIT)
        throw new UsageError(`--limit must be a whole number from 1 to ${MAX_HISTORY_LIMIT}`, verb);
      return { ...common, verb, name, output: output(values.output, verb), limit };
    }
    case 'fleet':
      checkName('NAME', name, 'label', verb);
      return { ...common, verb, name, output: output(values.output, verb) };
    default:
      return { ...common, verb, name, output: actionOutput(values.output, verb) };
  }
}

/**
 * The flags and rules of release-zone. The namespace stays
 * required, unlike for the other verbs: this puts reads back without any check, so it must not act
 * in whatever namespace a kubeconfig context happens to name.
 */
function releaseZone(common: Common, names: string[], values: { vmdc?: string; uid?: string; zone?: string; list?: boolean }, output: ActionOutput): Command {
  const verb = 'release-zone';
  if (names.length > 1) throw new UsageError(`one NAME only, got ${names.join(' ')}`, verb);
  if (names.length && values.vmdc) throw new UsageError('give NAME or --vmdc, not both', verb);
  const vmdc = names[0] ?? values.vmdc;
  const namespace = common.kube.namespace;
  if (!namespace) throw new UsageError('--namespace is required', verb);
  if (vmdc && values.uid) throw new UsageError('give --vmdc or --uid, not both', verb);
  const list = values.list === true;
  if (list) {
    if (values.zone) throw new UsageError('--list takes no --zone', verb);
  } else {
    if (!vmdc && !values.uid) throw new UsageError('--vmdc NAME or --uid UID is required', verb);
    if (!values.zone) throw new UsageError('--zone is required (or --list)', verb);
  }
  return { ...common, verb, namespace, vmdc, uid: values.uid, zone: values.zone, list, output };
}
