// `npm run build:cli`: the plugin as one executable file, dist/kubectl-vmdc.cjs, that needs only
// node (copied to the PATH as `kubectl-vmdc`, kubectl finds it as `kubectl vmdc`).
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { vmrolloutVersionOf } from '../process/build-info';
import { BAKED_VERSION_CONSTANT } from './plugin-version';

const ROOT = path.resolve(__dirname, '..');
export const BUNDLE = path.join(ROOT, 'dist', 'kubectl-vmdc.cjs');

async function buildBundle(): Promise<string> {
  const version = vmrolloutVersionOf(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  if (!version) throw new Error('package.json holds no vmrollout version to bake into the plugin');
  await esbuild.build({
    entryPoints: [path.join(ROOT, 'cli', 'main.ts')],
    outfile: BUNDLE,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    banner: { js: '#!/usr/bin/env node' },
    // `kubectl vmdc version`: the file on a PATH has no package.json to read (cli/plugin-version.ts).
    define: { [BAKED_VERSION_CONSTANT]: JSON.stringify(version) },
    legalComments: 'none',
    logLevel: 'warning',
    // process/payload-codec.ts resolves the worker's failure converter only when asked; the plugin
    // never asks (its clients have no failure converter path, temporal.ts).
    logOverride: { 'require-resolve-not-external': 'silent' },
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
