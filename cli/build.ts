// `npm run build:cli`: the plugin as one executable file, dist/kubectl-vmdc.cjs, that needs only
// node (copied to the PATH as `kubectl-vmdc`, kubectl finds it as `kubectl vmdc`).
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as esbuild from 'esbuild';

const ROOT = path.resolve(__dirname, '..');
export const BUNDLE = path.join(ROOT, 'dist', 'kubectl-vmdc.cjs');

/**
 * process/payload-codec.ts resolves the worker's failure converter by path when it is loaded; in a
 * single file there is no such path and the require would throw at start. The plugin never uses
 * that path (its clients are built without a failure converter path, temporal.ts), so the bundle
 * gets a placeholder. The build fails if the code it replaces has changed.
 */
const failureConverterPath: esbuild.Plugin = {
  name: 'failure-converter-path',
  setup(build) {
    build.onLoad({ filter: /[\\/]process[\\/]payload-codec\.ts$/ }, (args) => {
      const source = fs.readFileSync(args.path, 'utf8');
      const call = "require.resolve('../workflows/failure-converter')";
      if (!source.includes(call)) throw new Error(`${args.path} no longer contains ${call}: review cli/build.ts`);
      return { contents: source.replace(call, JSON.stringify('(not in the kubectl-vmdc bundle)')), loader: 'ts' };
    });
  },
};

async function buildBundle(): Promise<string> {
  await esbuild.build({
    entryPoints: [path.join(ROOT, 'cli', 'main.ts')],
    outfile: BUNDLE,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    banner: { js: '#!/usr/bin/env node' },
    legalComments: 'none',
    logLevel: 'warning',
    plugins: [failureConverterPath],
  });
  fs.chmodSync(BUNDLE, 0o755);
  return BUNDLE;
}

if (require.main === module) {
  buildBundle().then(
    (file) => console.log(`built ${path.relative(process.cwd(), file)} (${(fs.statSync(file).size / 1024 / 1024).toFixed(1)} MiB)`),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
