import fc from 'fast-check';
import { DURATION_PATTERN, durationMs, formatDuration, goDurationNanos, parseDuration } from '../../api/duration';
import { assertProperty } from '../support/property';

describe('parseDuration', () => {
  it.each([
    ['0s', 0],
    ['1ms', 1],
    ['500ms', 500],
    ['1s', 1000],
    ['30s', 30_000],
    ['1m', 60_000],
    ['1h', 3_600_000],
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['1h30m15s250ms', 5_415_250],
    ['90m', 5_400_000],
    ['0.5s', 500],
    ['1m1m', 120_000],
    ['168h', 604_800_000],
  ])('%s = %d ms', (text, ms) => {
    expect(parseDuration(text)).toEqual({ ok: true, ms });
    expect(new RegExp(DURATION_PATTERN).test(text)).toBe(true);
  });

  it.each(['', '0', '30', '-1s', '+1s', '1d', '1w', '1us', '1ns', '1 s', ' 1s', '1s ', '.5s', '1.s', '1H', 's', '1h30', 'PT1H', '1e3ms', 'Infinity'])(
    'rejects %j',
    (text) => {
      const r = parseDuration(text);
      expect(r.ok).toBe(false);
      expect(new RegExp(DURATION_PATTERN).test(text)).toBe(false);
    },
  );

  it('rejects sub-millisecond precision, over-long strings and non-strings', () => {
    expect(parseDuration('1.0001s')).toEqual({ ok: false, message: 'must be a whole number of milliseconds' });
    expect(parseDuration('100.5ms')).toEqual({ ok: false, message: 'must be a whole number of milliseconds' });
    expect(parseDuration('1m0.0000001s')).toEqual({ ok: false, message: 'must be a whole number of milliseconds' });
    expect(parseDuration('1'.repeat(40) + 's').ok).toBe(false);
    expect(parseDuration(30).ok).toBe(false);
    expect(parseDuration(null).ok).toBe(false);
  });

  it("computes as Go's time.ParseDuration does (float64 fractions, truncated to nanoseconds)", () => {
    // Go drops digits below a nanosecond ...
    expect(goDurationNanos('1.0000000001s')).toBe(1_000_000_000n);
    expect(parseDuration('1.0000000001s')).toEqual({ ok: true, ms: 1000 });
    // ... and a long fraction of an hour can land a nanosecond short of a whole millisecond: 99 ms
    // written as 0.00002750000000h is 98.999999 ms to Go (and to the API server's CEL duration()).
    expect(goDurationNanos('0.0000275h')).toBe(99_000_000n);
    expect(goDurationNanos('0.00002750000000h')).toBe(98_999_999n);
    expect(parseDuration('0.00002750000000h')).toEqual({ ok: false, message: 'must be a whole number of milliseconds' });
    // Go's overflow limits (2^63-1 ns, about 292 years).
    expect(goDurationNanos('2562047h')).toBe(2_562_047n * 3_600_000_000_000n);
    expect(goDurationNanos('2562048h')).toBeUndefined();
    expect(goDurationNanos('9223372036854775807ms')).toBeUndefined();
    expect(parseDuration('99999999999999999999h').ok).toBe(false);
  });

  it('agrees with exact arithmetic wherever float64 is exact (up to 9 fraction digits of s and ms)', () => {
    assertProperty(
      fc.property(fc.nat(100_000), fc.stringMatching(/^[0-9]{1,9}$/), fc.constantFrom('s', 'ms'), (whole, frac, unit) => {
        const per = unit === 's' ? 1_000_000_000n : 1_000_000n;
        const exact = BigInt(whole) * per + (BigInt(frac) * per) / 10n ** BigInt(frac.length);
        expect(goDurationNanos(`${whole}.${frac}${unit}`)).toBe(exact);
      }),
      { numRuns: 300 },
    );
  });

  it('durationMs throws on bad input', () => {
    expect(durationMs('2m')).toBe(120_000);
    expect(() => durationMs('2')).toThrow(/invalid duration/);
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0s'],
    [500, '500ms'],
    [30_000, '30s'],
    [5_400_000, '1h30m'],
    [5_415_250, '1h30m15s250ms'],
    [90_000_000, '25h'],
  ])('%d ms = %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(parseDuration(text)).toEqual({ ok: true, ms });
  });
});
