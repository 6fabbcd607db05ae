// How a stack benchmark hands over its one JSON document: to stdout and to .tmp/bench/<name>.json.
import * as fs from 'node:fs';
import * as path from 'node:path';

export function writeBenchDocument(name: string, doc: object): void {
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  const out = path.join(__dirname, '..', '..', '.tmp', 'bench', `${name}.json`);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, text);
  process.stdout.write(text);
}

/** Runs a benchmark's main; a failure is printed and exits 1. */
export function runBench(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
