// The worker's resource settings as the chart runs it: charts/vmrollout/values.yaml worker.*, turned
// into the variables its template sets (charts/vmrollout/templates/_pod.tpl), so that a benchmark's
// worker runs with what a default install gets.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';

const VALUES = path.resolve(__dirname, '..', '..', 'charts', 'vmrollout', 'values.yaml');

interface WorkerValues {
  maxConcurrentActivities?: number | string;
  maxCachedWorkflows?: number | string;
  malloc: { arenaMax: number; trimThreshold: number; mmapThreshold: number };
}

function workerValues(): WorkerValues {
  return (parseYaml(fs.readFileSync(VALUES, 'utf8')) as { worker: WorkerValues }).worker;
}

/** glibc malloc of the worker process (worker.malloc). */
export const CHART_MALLOC: Readonly<Record<'MALLOC_ARENA_MAX' | 'MALLOC_TRIM_THRESHOLD_' | 'MALLOC_MMAP_THRESHOLD_', string>> = (() => {
  const m = workerValues().malloc;
  return { MALLOC_ARENA_MAX: String(m.arenaMax), MALLOC_TRIM_THRESHOLD_: String(m.trimThreshold), MALLOC_MMAP_THRESHOLD_: String(m.mmapThreshold) };
})();

/**
 * Every variable the chart derives from worker.malloc, worker.maxConcurrentActivities and
 * worker.maxCachedWorkflows; an empty value is not set (the template's `with`), so the worker's
 * own default applies.
 */
export function chartWorkerEnv(): Record<string, string> {
  const w = workerValues();
  const set = (v: number | string | undefined) => (v === undefined || v === '' ? undefined : String(v));
  const slots = set(w.maxConcurrentActivities);
  const cached = set(w.maxCachedWorkflows);
  return { ...CHART_MALLOC, ...(slots ? { MAX_CONCURRENT_ACTIVITIES: slots } : {}), ...(cached ? { MAX_CACHED_WORKFLOWS: cached } : {}) };
}
