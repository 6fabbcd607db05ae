// Go-style durations (`30s`, `1m`, `1h30m`, `500ms`, `1.5h`) as used in the VMDistributedCluster
// spec. We accept a strict subset of Go's time.ParseDuration (which is what Kubernetes CEL's
// `duration()` parses), so a value the API server accepts is a value we accept and vice versa:
//
//   * one or more `<number><unit>` components, unit one of h, m, s, ms;
//   * numbers are unsigned decimals with digits on both sides of an optional dot;
//   * no sign, no spaces, no bare numbers (`0` and `30` are rejected: say `0s`, `30s`);
//   * the value, computed exactly as Go computes it, must be a whole number of milliseconds
//     (`100.5ms` and `1m0.0000001s` are rejected). Go computes a fraction in float64 and truncates
//     to nanoseconds, so digits below a nanosecond are dropped (`1.0000000001s` is 1s) and a few
//     long fractions land a nanosecond short (`0.500000000000000000h`): parseDuration does the
//     same arithmetic, and the CRD checks `int(duration(self)) % 1000000 == 0` on Go's value.

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
const TWO_63 = 1n << 63n;

export type DurationParseResult = { ok: true; ms: number } | { ok: false; message: string };

export const DURATION_FORMAT_MESSAGE = 'must be a duration like 30s, 1m, 500ms or 1h30m (units h, m, s, ms)';
export const DURATION_WHOLE_MS_MESSAGE = 'must be a whole number of milliseconds';
const TOO_LONG_MESSAGE = 'is far too long (Go durations end at about 292 years)';

/** CEL (Kubernetes) for "a whole number of milliseconds": `int(duration)` is Go's nanosecond count. */
export const DURATION_WHOLE_MS_CEL = 'int(duration(self)) % 1000000 == 0';

/**
 * Go's time.ParseDuration on a string already known to match DURATION_PATTERN: nanoseconds, or
 * undefined where Go reports an overflow. Mirrors Go's leadingInt / leadingFraction / float64 math.
 */
export function goDurationNanos(value: string): bigint | undefined {
  let d = 0n;
  for (const m of value.matchAll(COMPONENT_RE)) {
    const [, whole = '0', frac = '', unit = 's'] = m;
    let v = 0n;
    for (const c of whole) {
      if (v > TWO_63 / 10n) return undefined;
      v = v * 10n + BigInt(c.charCodeAt(0) - 48);
      if (v > TWO_63) return undefined;
    }
    let f = 0n;
    let scale = 1;
    let overflow = false;
    for (const c of frac) {
      if (overflow) continue;
      if (f > (TWO_63 - 1n) / 10n) {
        overflow = true;
        continue;
      }
      const y = f * 10n + BigInt(c.charCodeAt(0) - 48);
      if (y > TWO_63) {
        overflow = true;
        continue;
      }
      f = y;
      scale *= 10;
    }
    const per = NS_PER_UNIT[unit] ?? 0n;
    if (v > TWO_63 / per) return undefined;
    v *= per;
    if (f > 0n) {
      // Go: v += uint64(float64(f) * (float64(unit) / scale)); the conversion truncates.
      v += BigInt(Math.trunc(Number(f) * (Number(per) / scale)));
      if (v > TWO_63) return undefined;
    }
    d += v;
    if (d > TWO_63) return undefined;
  }
  if (d > TWO_63 - 1n) return undefined;
  return d;
}

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
  const ns = goDurationNanos(value);
  if (ns === undefined) return { ok: false, message: TOO_LONG_MESSAGE };
  if (ns % NS_PER_MS !== 0n) {
    return { ok: false, message: DURATION_WHOLE_MS_MESSAGE };
  }
  return { ok: true, ms: Number(ns / NS_PER_MS) };
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
