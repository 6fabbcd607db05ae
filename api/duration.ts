// Go-style durations (`30s`, `1m`, `1h30m`, `500ms`, `1.5h`) as used in the VMDistributedCluster
// spec. We accept a strict subset of Go's time.ParseDuration (which is also what Kubernetes CEL's
// `duration()` parses), so a value the API server accepts is a value we accept and vice versa:
//
//   * one or more `<number><unit>` components, unit one of h, m, s, ms;
//   * numbers are unsigned decimals with digits on both sides of an optional dot;
//   * no sign, no spaces, no bare numbers (`0` and `30` are rejected: say `0s`, `30s`);
//   * the total must be a whole number of milliseconds (`1.0005s` is rejected).

/** RE2-compatible (used as the CRD `pattern` too). */
export const DURATION_PATTERN = '^([0-9]+(\\.[0-9]+)?(h|ms|m|s))+$';
const DURATION_RE = new RegExp(DURATION_PATTERN);
const COMPONENT_RE = /([0-9]+)(?:\.([0-9]+))?(h|ms|m|s)/g;
/** Longer strings are rejected outright (also the CRD `maxLength`, which bounds CEL cost). */
export const DURATION_MAX_LENGTH = 32;

const NS_PER_UNIT: Record<string, bigint> = {
  h: 3_600_000_000_000n,
  m: 60_000_000_000n,
  s: 1_000_000_000n,
  ms: 1_000_000n,
};
const NS_PER_MS = 1_000_000n;

export type DurationParseResult = { ok: true; ms: number } | { ok: false; message: string };

export const DURATION_FORMAT_MESSAGE = 'must be a duration like 30s, 1m, 500ms or 1h30m (units h, m, s, ms)';

/** Parses a Go-style duration into milliseconds. Never throws. */
export function parseDuration(value: unknown): DurationParseResult {
  if (typeof value !== 'string') {
    return { ok: false, message: `${DURATION_FORMAT_MESSAGE}, as a string` };
  }
  if (value.length > DURATION_MAX_LENGTH) {
    return { ok: false, message: `${DURATION_FORMAT_MESSAGE} (at most ${DURATION_MAX_LENGTH} characters)` };
  }
  if (!DURATION_RE.test(value)) {
    return { ok: false, message: DURATION_FORMAT_MESSAGE };
  }
  let ns = 0n;
  for (const m of value.matchAll(COMPONENT_RE)) {
    const [, whole = '0', frac = '', unit = 's'] = m;
    const per = NS_PER_UNIT[unit] ?? 0n;
    ns += BigInt(whole) * per;
    if (frac) ns += (BigInt(frac) * per) / 10n ** BigInt(frac.length);
  }
  if (ns % NS_PER_MS !== 0n) {
    return { ok: false, message: 'must be a whole number of milliseconds' };
  }
  const ms = ns / NS_PER_MS;
  if (ms > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false, message: 'is far too long' };
  return { ok: true, ms: Number(ms) };
}

/** Parses or throws; for constants and tests. */
export function durationMs(value: string): number {
  const r = parseDuration(value);
  if (!r.ok) throw new Error(`invalid duration ${JSON.stringify(value)}: ${r.message}`);
  return r.ms;
}

/** Formats milliseconds in the Go style: 5400000 → `1h30m`, 500 → `500ms`, 0 → `0s`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return String(ms);
  if (ms === 0) return '0s';
  let rest = Math.round(ms);
  let out = '';
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
    ['ms', 1],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) {
      out += `${n}${unit}`;
      rest -= n * size;
    }
  }
  return out;
}
