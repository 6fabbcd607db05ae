// Work over many items with a bound on how much runs at once (the benchmarks' set-up: thousands of
// objects created against one API server).

/** Runs `fn` on every item, at most `limit` at a time, in the items' order of start. */
export async function forEachLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}
