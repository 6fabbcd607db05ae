import { DURATION_PATTERN, durationMs, formatDuration, parseDuration } from '../../api/duration';

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

  it.each([
    '',
    '0',
    '30',
    '-1s',
    '+1s',
    '1d',
    '1w',
    '1us',
    '1ns',
    '1 s',
    ' 1s',
    '1s ',
    '.5s',
    '1.s',
    '1H',
    's',
    '1h30',
    'PT1H',
    '1e3ms',
    'Infinity',
  ])('rejects %j', (text) => {
    const r = parseDuration(text);
    expect(r.ok).toBe(false);
    expect(new RegExp(DURATION_PATTERN).test(text)).toBe(false);
  });

  it('rejects sub-millisecond precision, over-long strings and non-strings', () => {
    expect(parseDuration('1.0001s')).toEqual({ ok: false, message: 'must be a whole number of milliseconds' });
    expect(parseDuration('1'.repeat(40) + 's').ok).toBe(false);
    expect(parseDuration(30).ok).toBe(false);
    expect(parseDuration(null).ok).toBe(false);
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
