/**
 * Reads through vmauth that see holes, not only age (check g of the oracle): a zone back in reads
 * before its backlog was delivered can answer with fresh samples after a hole in the series, which a
 * read of the newest sample's age cannot see. Every `intervalMs`, on every route, the raw samples of
 * the writer's series over the last `windowMs` (an instant query of a range selector); the read's
 * `gapMs` is the longest time between two consecutive samples.
 */
import { READ_PATH } from '../../e2e/support';
import { httpRequest } from '../harness/processes';
import type { ReadSample } from './oracle';

/** Pure: the longest time between two consecutive sample timestamps (seconds, as the query API gives them), ms. */
export function longestGapMs(timestampsSec: readonly number[]): number {
  const ms = timestampsSec.map((t) => t * 1000).sort((a, b) => a - b);
  let gap = 0;
  for (let i = 1; i < ms.length; i++) gap = Math.max(gap, ms[i]! - ms[i - 1]!);
  return Math.round(gap);
}

export function startGapReader(opts: { vmauthURLs: string[]; bearerTokens: string[]; series: string; windowMs: number; intervalMs?: number }) {
  const reads: ReadSample[] = [];
  const routes = [{ name: 'unauthorized', headers: undefined }, ...opts.bearerTokens.map((t) => ({ name: t, headers: { authorization: `Bearer ${t}` } }))];
  const query = encodeURIComponent(`${opts.series}[${Math.round(opts.windowMs / 1000)}s]`);
  let stopped = false;
  let nextPod = 0;
  const loop = (async () => {
    while (!stopped) {
      const started = Date.now();
      for (const route of routes) {
        const at = Date.now();
        const base = opts.vmauthURLs[nextPod++ % opts.vmauthURLs.length]!;
        try {
          const r = await httpRequest('GET', `${base}${READ_PATH}?query=${query}`, { headers: route.headers, timeoutMs: 3_000 });
          const values =
            r.status === 200
              ? (JSON.parse(r.body) as { data?: { result?: Array<{ values?: Array<[number, string]> }> } }).data?.result?.[0]?.values
              : undefined;
          if (r.status !== 200) reads.push({ at, route: route.name, error: `HTTP ${r.status}: ${r.body.slice(0, 200)}` });
          else if (!values?.length) reads.push({ at, route: route.name, error: 'empty result' });
          else reads.push({ at, route: route.name, gapMs: longestGapMs(values.map(([t]) => t)) });
        } catch (err) {
          reads.push({ at, route: route.name, error: String(err) });
        }
      }
      await new Promise((r) => setTimeout(r, Math.max(0, started + (opts.intervalMs ?? 1_000) - Date.now())));
    }
  })();
  return {
    reads,
    async stop(): Promise<void> {
      stopped = true;
      await loop;
    },
  };
}
