// How the rollout workflow is bundled, declared once: the image's prebuilt bundle
// (scripts/bundle-workflows.ts), a worker that bundles at start, the tests and the benchmarks.
import type { BundleOptions, WorkerOptions } from '@temporalio/worker';

export const WORKFLOWS_PATH = require.resolve('../workflows');

/**
 * Modules evaluated once per worker thread and shared, frozen, by every workflow in it (the SDK's
 * reusable V8 context). Any other module of the bundle is evaluated again for each workflow the
 * worker caches: about 1 MB each, most of a 200-rollout worker's memory. Only modules that keep no
 * state between calls and never import @temporalio/workflow belong here (test/unit/workflow-bundle.test.ts).
 */
export const PRELOAD_MODULES: readonly string[] = [
  '@temporalio/common',
  '../api/conditions',
  '../api/constants',
  '../api/data-object',
  '../api/json-value',
  '../api/rollout-contract',
  '../api/route-edits',
  '../api/route-records',
  '../api/route-targets',
  '../api/storage',
  '../api/traffic-mode',
  '../api/types',
  '../api/url',
  '../workflows/activity-types',
  '../workflows/failure-converter',
  '../workflows/failures',
  '../workflows/merge',
  '../workflows/plan',
  '../workflows/routes',
  '../workflows/state',
  '../workflows/status',
].map((m) => require.resolve(m));

export type WorkflowBundleOptions = Pick<BundleOptions, 'workflowsPath' | 'preloadModules' | 'failureConverterPath'>;

/** The bundle's options; the image's bundle always carries the failure converter (scripts/bundle-workflows.ts says why). */
export function workflowBundleOptions(failureConverterPath?: string): WorkflowBundleOptions {
  return { workflowsPath: WORKFLOWS_PATH, preloadModules: [...PRELOAD_MODULES], failureConverterPath };
}

/** For a worker that bundles the workflows at its start (no prebuilt bundle): the same modules shared. */
export function bundleAtStart(): Pick<WorkerOptions, 'workflowsPath' | 'bundlerOptions'> {
  return { workflowsPath: WORKFLOWS_PATH, bundlerOptions: { preloadModules: [...PRELOAD_MODULES] } };
}
