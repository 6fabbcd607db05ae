// The Prometheus text exposition format, read strictly for the families a caller relies on: a line
// of one of them that is not exactly a text-format sample, a series that appears twice, or a value
// that is not a decimal float makes the whole page unreadable (MetricsPageError, with the line and
// the reason), never a silent 0; every other line is skipped unread. No npm parser does this:
// parse-prometheus-text-format (which this replaced) passes values on unchecked (`0x10` then read as
// 16, an empty value as 0), reads a broken label quote as "no labels" and keeps the last of two
// duplicate series; prom2javascript and @platformatic/promotel use parseFloat (`1_000` → 1, `0x10` →
// 0). A value the format allows but a reader cannot use (NaN, ±Inf, negative bytes) makes that
// reading unreadable too (badValue). Pure: vmagent's queues (../vmagent/match.ts), vmauth's config
// hash and reloads (../vmauth/switch.ts) and vmselect's requests (../reads/drain.ts) are read with it.

/** One series of a /metrics page. */
export interface MetricSeries {
  metric: string;
  labels: Record<string, string>;
  value: number;
}

/** The page cannot be trusted: a line of a family read is malformed, or a series repeats. */
export class MetricsPageError extends Error {
  override name = 'MetricsPageError';
}

const isBlank = (c: string | undefined) => c === ' ' || c === '\t';
function skipBlanks(line: string, i: number): number {
  while (isBlank(line[i])) i++;
  return i;
}
const METRIC_NAME = /[a-zA-Z_:][a-zA-Z0-9_:]*/y;
const LABEL_NAME = /[a-zA-Z_][a-zA-Z0-9_]*/y;
const NAME_CHAR = /[a-zA-Z0-9_:]/;
/** The characters of a label value up to the next quote, backslash or U+FFFD (invalid UTF-8). */
const PLAIN_RUN = /[^"\\\uFFFD]*/y;
/**
 * A float in decimal notation (what Go's ParseFloat reads, less hex, underscores and inf/nan
 * spellings). Written so that a failing match never backtracks (`\d+\.?\d*` would: quadratic time
 * on a long run of digits with a bad end).
 */
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * A sample value of the text format: a decimal float, or exactly `NaN`, `+Inf`, `-Inf` (the format's
 * special values; the caller decides what they mean). Anything else (`0x10`, `1_000`, ``, `inf`,
 * `Infinity`, `1,5`) is undefined.
 */
export function parseSampleValue(token: string): number | undefined {
  if (token === 'NaN') return NaN;
  if (token === '+Inf') return Infinity;
  if (token === '-Inf') return -Infinity;
  return DECIMAL.test(token) ? Number(token) : undefined;
}

export interface ParsedSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * One sample line of the Prometheus text exposition format (0.0.4), strictly:
 *   name [blanks] [ "{" label="value" { "," label="value" } [","] "}" ] blanks value [blanks timestamp] [blanks]
 * with blanks (space, tab) allowed between the tokens inside the braces, label values escaped only
 * with `\\`, `\"` and `\n`, no label name twice, a value as parseSampleValue reads it, and an int64
 * timestamp (ignored). Returns the sample, or why the line is not one.
 */
export function parseSampleLine(line: string): ParsedSample | { error: string } {
  let i = 0;
  const at = () => (i < line.length ? `${JSON.stringify(line[i])} at column ${i + 1}` : 'end of line');
  i = skipBlanks(line, i);
  METRIC_NAME.lastIndex = i;
  const name = METRIC_NAME.exec(line)?.[0];
  if (!name) return { error: `expected a metric name, found ${at()}` };
  i += name.length;
  const afterName = i;
  i = skipBlanks(line, i);
  if (line[i] !== '{') i = afterName; // the blanks were the ones before the value
  const labels: Record<string, string> = Object.create(null) as Record<string, string>;
  if (line[i] === '{') {
    i++;
    for (;;) {
      i = skipBlanks(line, i);
      if (line[i] === '}') break;
      LABEL_NAME.lastIndex = i;
      const label = LABEL_NAME.exec(line)?.[0];
      if (!label) return { error: `expected a label name or "}", found ${at()}` };
      i += label.length;
      i = skipBlanks(line, i);
      if (line[i] !== '=') return { error: `expected "=" after label ${label}, found ${at()}` };
      i++;
      i = skipBlanks(line, i);
      if (line[i] !== '"') return { error: `expected '"' to open the value of label ${label}, found ${at()}` };
      i++;
      let value = '';
      for (;;) {
        PLAIN_RUN.lastIndex = i;
        const run = PLAIN_RUN.exec(line)![0];
        value += run;
        i += run.length;
        if (i >= line.length) return { error: `unterminated value of label ${label}` };
        const c = line[i++]!;
        if (c === '"') break;
        if (c === '\uFFFD') return { error: `invalid UTF-8 in the value of label ${label}` };
        const e = line[i++];
        if (e === '\\' || e === '"') value += e;
        else if (e === 'n') value += '\n';
        else return { error: `invalid escape ${JSON.stringify(`\\${e ?? ''}`)} in the value of label ${label}` };
      }
      if (Object.prototype.hasOwnProperty.call(labels, label)) return { error: `label ${label} appears twice` };
      labels[label] = value;
      i = skipBlanks(line, i);
      if (line[i] === ',') {
        i++;
        continue;
      }
      if (line[i] !== '}') return { error: `expected "," or "}" after the value of label ${label}, found ${at()}` };
      break;
    }
    i++; // the "}"
  }
  if (!isBlank(line[i])) return { error: i < line.length ? `expected a blank before the value, found ${at()}` : 'no value' };
  i = skipBlanks(line, i);
  const valueStart = i;
  while (i < line.length && !isBlank(line[i])) i++;
  const token = line.slice(valueStart, i);
  if (token === '') return { error: 'no value' };
  const value = parseSampleValue(token);
  if (value === undefined) return { error: `value ${JSON.stringify(token)} is not a decimal number, NaN, +Inf or -Inf` };
  i = skipBlanks(line, i);
  if (i < line.length) {
    const tsStart = i;
    while (i < line.length && !isBlank(line[i])) i++;
    const ts = line.slice(tsStart, i);
    if (!/^[+-]?\d{1,19}$/.test(ts) || BigInt(ts) < INT64_MIN || BigInt(ts) > INT64_MAX) {
      return { error: `timestamp ${JSON.stringify(ts)} is not an int64 of milliseconds` };
    }
    i = skipBlanks(line, i);
    if (i < line.length) return { error: `unexpected ${at()} after the timestamp` };
  }
  return { name, labels, value };
}

/** A series as a message shows it: `name{label="value",…}`. */
const describeSeries = (s: MetricSeries): string =>
  `${s.metric}{${Object.entries(s.labels)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(',')}}`;

/**
 * The first of `series` whose value cannot be `what` (a count, a byte size, a time: NaN, ±Inf or
 * negative), described; undefined when all can. The format allows such values; the reader decides
 * what a sample means, and a sample that cannot mean it is unreadable, never believed.
 */
export function badValue(series: readonly MetricSeries[], what: string): string | undefined {
  const bad = series.find((s) => !Number.isFinite(s.value) || s.value < 0);
  return bad ? `${describeSeries(bad)} has value ${bad.value}: ${what} must be a finite number >= 0`.slice(0, 300) : undefined;
}

/** `series`, or MetricsPageError when one of them cannot be `what` (see badValue). */
export function nonNegative(series: MetricSeries[], what: string): MetricSeries[] {
  const bad = badValue(series, what);
  if (bad) throw new MetricsPageError(bad);
  return series;
}

/** The family of `families` a line belongs to: it starts (after blanks) with the family's name and no longer name. */
function familyOf(line: string, families: readonly string[]): string | undefined {
  let i = 0;
  while (isBlank(line[i])) i++;
  for (const f of families) {
    if (line.startsWith(f, i) && !NAME_CHAR.test(line[i + f.length] ?? '')) return f;
  }
  return undefined;
}

/** The line as shown in a message: at most 100 characters, control and invisible characters escaped. */
function snippet(line: string): string {
  const shown = line.length > 100 ? `${line.slice(0, 100)}…` : line;
  return `\`${shown.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}\``;
}

/** A series' identity: its name and its label set (in any order). */
function seriesKey(name: string, labels: Record<string, string>): string {
  // Names have no "{", "=", ",", ":" ambiguity left once each value carries its length.
  let key = `${name}{`;
  for (const k of Object.keys(labels).sort()) key += `${k}=${labels[k]!.length}:${labels[k]},`;
  return key;
}

/**
 * The series of `families` in a /metrics text. Only lines of those families are parsed, so an
 * unrelated exotic line elsewhere cannot make the scrape unreadable. Throws MetricsPageError, naming
 * the (1-based) line, when one of those lines is not a strict sample or a series appears twice.
 */
export function parseSeries(text: string, families: readonly string[]): MetricSeries[] {
  const firstChars = new Set(families.map((f) => f[0]));
  const out: MetricSeries[] = [];
  const seen = new Map<string, number>();
  let lineNo = 0;
  for (let start = 0; start < text.length;) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end);
    start = end + 1;
    lineNo++;
    // Most lines stop at their first character.
    let c = 0;
    while (isBlank(line[c])) c++;
    if (!firstChars.has(line[c])) continue;
    const family = familyOf(line, families);
    if (!family) continue;
    const parsed = parseSampleLine(line);
    if ('error' in parsed) throw new MetricsPageError(`malformed line ${lineNo} of ${family}: ${parsed.error}: ${snippet(line)}`);
    const key = seriesKey(parsed.name, parsed.labels);
    const first = seen.get(key);
    if (first !== undefined) throw new MetricsPageError(`duplicate series on lines ${first} and ${lineNo} of ${family}: ${snippet(line)}`);
    seen.set(key, lineNo);
    out.push({ metric: parsed.name, labels: parsed.labels, value: parsed.value });
  }
  return out;
}
