// vmrollout_build_info of both processes: which vmrollout runs (package.json's version, read where
// the process runs from, so it is the code's own and not what a chart value claims) and, for a
// versioned worker, the Worker Versioning build id its rollouts are pinned to.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Gauge, type Registry } from 'prom-client';

export const BUILD_INFO = 'vmrollout_build_info';
const PACKAGE_NAME = 'vmrollout';

/** Pure: the version of package.json text when it is vmrollout's own, else undefined. */
export function vmrolloutVersionOf(packageJson: string): string | undefined {
  try {
    const pkg = JSON.parse(packageJson) as unknown;
    if (typeof pkg !== 'object' || pkg === null) return undefined;
    const { name, version } = pkg as { name?: unknown; version?: unknown };
    return name === PACKAGE_NAME && typeof version === 'string' && version !== '' ? version : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The version of the nearest vmrollout package.json at or above `dir`: the checkout's root when run
 * from sources, /app in the image (dist/<process>/ has none of its own). "unknown" when none is found.
 */
export function packageVersion(dir: string = __dirname): string {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    let text: string | undefined;
    try {
      text = fs.readFileSync(path.join(d, 'package.json'), 'utf8');
    } catch {
      text = undefined;
    }
    const version = text === undefined ? undefined : vmrolloutVersionOf(text);
    if (version) return version;
    if (path.dirname(d) === d) return 'unknown';
  }
}

/** Registers the gauge, 1 with `version` and `build_id` ("" for the trigger and an unversioned worker). */
export function registerBuildInfo(registry: Registry, info: { version: string; buildId?: string }): void {
  const gauge = new Gauge({
    name: BUILD_INFO,
    help: 'Always 1: the vmrollout version (package.json) this process runs and, for a versioned worker, its Worker Versioning build id',
    labelNames: ['version', 'build_id'],
    registers: [registry],
  });
  gauge.set({ version: info.version, build_id: info.buildId ?? '' }, 1);
}
