// `kubectl-vmdc __complete ARGS… WORD`: what kubectl (1.26+) runs, through kubectl_complete-vmdc on
// the PATH, when a person presses TAB after `kubectl vmdc`: Cobra's protocol, one candidate a line
// and then `:DIRECTIVE`. Answered from the same table as `completion` (args.ts: VERBS, ALLOWED, the
// option declarations; output.ts: the -o formats). Pure: which candidates, and whether the object
// names of the cluster are wanted (the verb asks the API server for them).
import { ALLOWED, GLOBAL_OPTIONS, SHELLS, VERB_OPTIONS, VERBS, type KubeFlags, type Verb } from './args';
import { FILE_FLAGS, NO_NAME } from './completion';
import { ACTION_OUTPUT_FLAG_VALUES, OUTPUT_FLAG_VALUES } from './output';

/** Cobra's ShellCompDirective values kubectl passes on to the shell. */
export const DIRECTIVE = { default: 0, noFileComp: 4 } as const;

/** The verbs whose -o also takes wide (they print a table or a view); the others act and are refused it. */
const WIDE_VERBS: readonly Verb[] = ['get', 'list', 'status', 'history', 'version'];

type Option = { type: 'string' | 'boolean'; short?: string };
const ALL_OPTIONS: Record<string, Option> = { ...GLOBAL_OPTIONS, ...VERB_OPTIONS };

/** The option a word spells (`--output`, `-o`), if any. */
function optionOf(word: string): [string, Option] | undefined {
  if (word.startsWith('--')) {
    const name = word.slice(2);
    return Object.hasOwn(ALL_OPTIONS, name) ? [name, ALL_OPTIONS[name]!] : undefined;
  }
  if (/^-[a-zA-Z]$/.test(word)) return Object.entries(ALL_OPTIONS).find(([, o]) => o.short === word.slice(1));
  return undefined;
}

const spellings = (names: readonly string[]): string[] => names.flatMap((n) => [`--${n}`, ...(ALL_OPTIONS[n]!.short ? [`-${ALL_OPTIONS[n]!.short}`] : [])]);

export interface CompleteAnswer {
  candidates: string[];
  directive: number;
  /** Set when the word is an object's NAME: the kube flags given so far, to list the objects with. */
  names?: KubeFlags;
}

export function completeArgs(args: readonly string[]): CompleteAnswer {
  const word = args.at(-1) ?? '';
  const before = args.slice(0, -1);
  const kube: KubeFlags = {};
  const positionals: string[] = [];
  for (let i = 0; i < before.length; i++) {
    const opt = optionOf(before[i]!);
    if (opt?.[1].type === 'string') {
      const value = before[i + 1];
      if (value === undefined) break;
      if (opt[0] === 'namespace') kube.namespace = value;
      if (opt[0] === 'kubeconfig') kube.kubeconfig = value;
      if (opt[0] === 'context') kube.context = value;
      i++;
    } else if (!before[i]!.startsWith('-')) positionals.push(before[i]!);
  }
  const [verbWord, ...names] = positionals;
  const verb = (VERBS as readonly string[]).includes(verbWord ?? '') ? (verbWord as Verb) : undefined;
  const outputs = verb && !WIDE_VERBS.includes(verb) ? ACTION_OUTPUT_FLAG_VALUES : OUTPUT_FLAG_VALUES;
  const matching = (all: readonly string[], directive: number = DIRECTIVE.noFileComp): CompleteAnswer => ({
    candidates: all.filter((c) => c.startsWith(word)),
    directive,
  });

  const prev = optionOf(before.at(-1) ?? '');
  if (prev?.[1].type === 'string') {
    if (prev[0] === 'output') return matching(outputs);
    return FILE_FLAGS.includes(prev[0]) ? { candidates: [], directive: DIRECTIVE.default } : matching([]);
  }
  if (/^--output=/.test(word)) return matching(outputs.map((o) => `--output=${o}`));
  if (verbWord === undefined) return matching(word.startsWith('-') ? spellings(Object.keys(GLOBAL_OPTIONS)) : [...VERBS, 'help']);
  if (!verb) return matching([]);
  if (verb === 'completion') return matching(names.length ? [] : [...SHELLS]);
  if (word.startsWith('-')) return matching([...spellings(ALLOWED[verb]), ...spellings(Object.keys(GLOBAL_OPTIONS))]);
  if (NO_NAME.includes(verb) || names.length > 0) return matching([]);
  return { ...matching([]), names: kube };
}

/** The protocol's text: the candidates, then `:DIRECTIVE`. */
export function completeOutput(candidates: readonly string[], directive: number): string[] {
  return [...candidates, `:${directive}`];
}
