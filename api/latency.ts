// What "slower" means wherever vmrollout compares read latencies (the canary against its baseline
// zone, the reads while a zone is out against before it left): over a ratio AND an absolute floor,
// so that a few milliseconds becoming a few more is never a regression. Pure.

/** The largest latency ratio a spec may ask for (strategy.canary.analysis, strategy.capacityGuard). */
export const MAX_LATENCY_RATIO = 100;

/** Latency differences below this are noise, whatever the ratio. */
export const LATENCY_FLOOR_MS = 100;

/** Whether `ms` is more than `ratio` times `baselineMs`, and LATENCY_FLOOR_MS more. */
export const slower = (ms: number, baselineMs: number, ratio: number): boolean => ms > ratio * baselineMs && ms - baselineMs > LATENCY_FLOOR_MS;
