// `kubectl vmdc import -f FILE|-`: a VMDistributed (the VM operator's, v0.70–v0.74), or the values
// of a victoria-metrics-distributed chart release (--chart-values), as a VMDistributedCluster
// manifest on stdout, what could not be mapped on stderr (docs/migrating.md).
// Its own flags, parsed here: the verb reads a file and talks to no cluster. The conversion is
// ../import/vmdistributed.ts (pure); this module is the reading and the printing.
import { closeSync, openSync, readSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { EXIT } from '../exit-codes';
import type { Io } from '../io';
import { InputError, MAX_INPUT_BYTES, parseManifests } from '../import/manifests';
import { CHART, CHART_VERSION, importChartValues } from '../import/chart-values';
import { importVMDistributed, pickVMDistributed, type ImportMode, type ImportResult, type Note } from '../import/vmdistributed';

export const IMPORT_USAGE = `usage: kubectl vmdc import -f FILE [flags]
       kubectl vmdc import --chart-values FILE --release NAME [flags]

Converts a VMDistributed (operator.victoriametrics.com/v1alpha1, VM operator v0.70-v0.74) into a
VMDistributedCluster: the manifest on stdout, every field it could not map on stderr. Reads only
the file: nothing is applied (review it, then kubectl apply -f; the cut-over: docs/migrating.md).

  -f, --filename FILE          the VMDistributed as YAML or JSON (kubectl get vmdistributed NAME -o yaml);
                               - reads stdin; at most ${MAX_INPUT_BYTES} bytes, no YAML aliases
      --chart-values FILE      the values of a ${CHART} chart release (${CHART_VERSION}) instead:
                               helm get values NAME -o yaml (or --all); - reads stdin. A -f file
                               without a kind: is read as such values too. Always --mode reference
      --release NAME           the Helm release of --chart-values (the chart names objects after it)
  -n, --namespace NS           when the object has no metadata.namespace (chart values: the
                               release's namespace)
      --cluster-version TAG    the version the VMClusters run, when the VMDistributed does not say
                               one for all zones (required then)
      --mode adopt|reference   adopt (default): each zone's VMCluster and the VMAuth as full specs
                               with adopt: true; reference: by name, zoneCommon as the global overrideSpec
      --retain-on-delete BOOL  adopt mode: true (default) keeps the adopted objects when the
                               VMDistributedCluster is deleted; false lets the delete take them, volumes too

exit codes: 0 converted (notes on stderr), 1 not convertible or the result is not valid (each
problem on stderr), 3 bad arguments or an unreadable or refused file.`;

class ImportUsageError extends Error {}

interface ImportArgs {
  file: string;
  chartValues: boolean;
  release?: string;
  /** --mode given: a -f file of chart values then needs reference. */
  modeGiven: boolean;
  namespace?: string;
  clusterVersion?: string;
  mode: ImportMode;
  retainOnDelete?: boolean;
}

function parseImportArgs(argv: string[]): ImportArgs | 'help' {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      filename: { type: 'string', short: 'f' },
      'chart-values': { type: 'string' },
      release: { type: 'string' },
      namespace: { type: 'string', short: 'n' },
      'cluster-version': { type: 'string' },
      mode: { type: 'string' },
      'retain-on-delete': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  if (positionals.length > 0) throw new ImportUsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const chartValues = values['chart-values'];
  if (chartValues !== undefined && values.filename !== undefined) throw new ImportUsageError('-f and --chart-values exclude each other');
  const file = chartValues ?? values.filename;
  if (file === undefined || file === '') throw new ImportUsageError('-f FILE is required (- for stdin), or --chart-values FILE');
  if (chartValues !== undefined && (values.release === undefined || values.release === '')) throw new ImportUsageError('--chart-values needs --release NAME');
  if (chartValues !== undefined && values.mode !== undefined && values.mode !== 'reference')
    throw new ImportUsageError('--chart-values imports by reference only: the objects stay in the Helm release');
  const mode = values.mode ?? (chartValues !== undefined ? 'reference' : 'adopt');
  if (mode !== 'adopt' && mode !== 'reference') throw new ImportUsageError(`--mode must be adopt or reference (got ${JSON.stringify(mode)})`);
  const rod = values['retain-on-delete'];
  if (rod !== undefined && rod !== 'true' && rod !== 'false')
    throw new ImportUsageError(`--retain-on-delete must be true or false (got ${JSON.stringify(rod)})`);
  if (rod !== undefined && mode !== 'adopt') throw new ImportUsageError('--retain-on-delete applies to --mode adopt only (references are never deleted)');
  return {
    file,
    chartValues: chartValues !== undefined,
    release: values.release,
    modeGiven: values.mode !== undefined,
    namespace: values.namespace,
    clusterVersion: values['cluster-version'],
    mode,
    retainOnDelete: rod === undefined ? undefined : rod === 'true',
  };
}

/** Appends chunks, refusing (InputError) as soon as there are more than MAX_INPUT_BYTES. */
class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private length = 0;
  add(chunk: Buffer): void {
    this.length += chunk.length;
    if (this.length > MAX_INPUT_BYTES) throw new InputError(`input is larger than ${MAX_INPUT_BYTES} bytes`);
    this.chunks.push(chunk);
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/** A file, read at most MAX_INPUT_BYTES + 1 bytes far: a larger one is refused, never read whole. */
function readFileCapped(file: string): string {
  const fd = openSync(file, 'r');
  try {
    const out = new CappedBuffer();
    const buf = Buffer.alloc(64 * 1024);
    for (let n = readSync(fd, buf); n > 0; n = readSync(fd, buf)) out.add(Buffer.from(buf.subarray(0, n)));
    return out.text();
  } finally {
    closeSync(fd);
  }
}

/** stdin, as far as the cap: the stream is left unread past it. */
async function readStdinCapped(): Promise<string> {
  const out = new CappedBuffer();
  try {
    for await (const chunk of process.stdin) out.add(chunk as Buffer);
  } finally {
    process.stdin.destroy();
  }
  return out.text();
}

function printNotes(io: Io, label: string, notes: readonly Note[]): void {
  for (const n of notes) io.warn(`${label}: ${n.path}: ${n.why}`);
}

/** One mapping without a `kind`: Helm values, not a Kubernetes object. */
function isValuesFile(docs: readonly unknown[]): boolean {
  const found = docs.filter((d) => d !== null);
  return found.length === 1 && typeof found[0] === 'object' && !Array.isArray(found[0]) && !Object.hasOwn(found[0] as object, 'kind');
}

function chartValues(
  docs: Parameters<typeof pickVMDistributed>[0],
  args: ImportArgs,
): { result: ImportResult; notes: Note[] } | { problem: Note } | { usage: string } {
  if (args.release === undefined || args.release === '') return { usage: `${args.file} holds chart values (no kind:): pass --release NAME` };
  if (args.modeGiven && args.mode !== 'reference')
    return { usage: `${args.file} holds chart values (no kind:), which import by reference only: pass --mode reference` };
  const found = docs.filter((d) => d !== null);
  if (found.length !== 1) return { problem: { path: '(input)', why: `holds ${found.length} documents: a values file is one` } };
  return { result: importChartValues(found[0]!, { release: args.release, namespace: args.namespace, clusterVersion: args.clusterVersion }), notes: [] };
}

export async function importVerb(argv: string[], io: Io): Promise<number> {
  let args: ImportArgs | 'help';
  try {
    args = parseImportArgs(argv);
  } catch (err) {
    io.warn(`error: ${(err as Error).message}`);
    io.warn(IMPORT_USAGE);
    return EXIT.error;
  }
  if (args === 'help') {
    io.print(IMPORT_USAGE);
    return EXIT.ok;
  }
  let docs;
  try {
    docs = parseManifests(args.file === '-' ? await readStdinCapped() : readFileCapped(args.file));
  } catch (err) {
    const what = err instanceof InputError ? err.message : ((err as NodeJS.ErrnoException).code ?? (err as Error).message);
    io.warn(`error: ${args.file === '-' ? 'stdin' : args.file}: ${what}`);
    return EXIT.error;
  }
  const values = args.chartValues || isValuesFile(docs) ? chartValues(docs, args) : undefined;
  if (values !== undefined && 'usage' in values) {
    io.warn(`error: ${values.usage}`);
    return EXIT.error;
  }
  const picked = values ?? pickVMDistributed(docs);
  if ('problem' in picked) {
    printNotes(io, 'not convertible', [picked.problem]);
    return EXIT.failed;
  }
  const result = 'result' in picked ? picked.result : importVMDistributed(picked.doc, args);
  printNotes(io, 'note', [...picked.notes, ...result.notes]);
  if (!result.ok) {
    printNotes(io, 'not convertible', result.problems);
    return EXIT.failed;
  }
  for (const line of stringify(result.manifest, { lineWidth: 0 }).trimEnd().split('\n')) io.print(line);
  return EXIT.ok;
}
