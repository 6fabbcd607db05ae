// The plugin's own version: package.json's, baked into the bundle by cli/build.ts (esbuild `define`),
// because the single-file plugin on a PATH has no package.json beside it. From a checkout (tsx), the
// nearest package.json's, as the worker and the trigger read theirs.
import { packageVersion } from '../process/build-info';

// Replaced by a string literal in dist/kubectl-vmdc.cjs; undeclared (typeof → 'undefined') elsewhere.
declare const VMDC_PLUGIN_VERSION: string | undefined;

export const BAKED_VERSION_CONSTANT = 'VMDC_PLUGIN_VERSION';

export function pluginVersion(): string {
  return typeof VMDC_PLUGIN_VERSION === 'string' ? VMDC_PLUGIN_VERSION : packageVersion(__dirname);
}
