// Independent calls made at once, reported as if made one after another.
//
// Why every call is waited for, even after one failed: a failed route edit is followed by the
// workflow reading the records on the route objects (resyncRecorded) to learn what landed. A write
// still in flight at that moment could land after that read, and the workflow would believe a zone
// is in reads that a route no longer sends to it. So nothing is reported, result or failure,
// before every call has settled.

/** `f()` as a promise, a synchronous throw included (it then rejects like any other failure). */
export const later = <T>(f: () => Promise<T>): Promise<T> => Promise.resolve().then(f);

/** The value of a settled promise, or its rejection thrown. */
export function settled<T>(r: PromiseSettledResult<T>): T {
  if (r.status === 'rejected') throw r.reason;
  return r.value;
}

/**
 * Runs `call` for every item at once and waits until all have settled. Returns the results in the
 * items' order; when some failed, throws the failure of the first item in `failureOrder` (default:
 * the items' order, i.e. what a loop over the items would have thrown first).
 */
export async function settleAll<T, R>(
  items: readonly T[],
  call: (item: T, index: number) => Promise<R>,
  opts: { failureOrder?: (index: number) => number } = {},
): Promise<R[]> {
  const outcomes = await Promise.allSettled(items.map((item, i) => later(() => call(item, i))));
  const rank = opts.failureOrder ?? ((i: number) => i);
  let first: { rank: number; reason: unknown } | undefined;
  outcomes.forEach((o, i) => {
    if (o.status === 'rejected' && (!first || rank(i) < first.rank)) first = { rank: rank(i), reason: o.reason };
  });
  if (first) throw first.reason;
  return outcomes.map(settled);
}
