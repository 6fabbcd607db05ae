// Structured JSON logs, one object per line: {"time","level","msg",...fields}.
import type { LogLevel } from './config';
import { redactURLsIn } from '../api/url';

// `trace` (the worker's most verbose level) logs what `debug` does: the trigger has nothing finer.
const ORDER: Record<LogLevel, number> = { trace: 0, debug: 10, info: 20, warn: 30, error: 40 };

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

function serializable(v: unknown): unknown {
  if (v instanceof Error) {
    const out: Record<string, unknown> = { name: v.name, message: v.message };
    const code = (v as { code?: unknown }).code;
    if (code !== undefined) out.code = code;
    if (v.stack) out.stack = v.stack;
    if (v.cause !== undefined) out.cause = serializable(v.cause);
    return out;
  }
  return v;
}

/** A JSON logger writing to `sink` (default stdout). */
export function createLogger(level: LogLevel = 'info', sink: (line: string) => void = (l) => process.stdout.write(l + '\n'), base: LogFields = {}): Logger {
  const min = ORDER[level];
  const write = (lvl: LogLevel, msg: string, fields?: LogFields) => {
    if (ORDER[lvl] < min) return;
    // Spread, not rec[k] =: a field named `__proto__` stays a field (JSON.stringify writes it).
    const given = Object.fromEntries(Object.entries(fields ?? {}).map(([k, v]) => [k, serializable(v)]));
    const rec: LogFields = { time: new Date().toISOString(), level: lvl, msg, ...base, ...given };
    let line: string;
    try {
      line = JSON.stringify(rec);
    } catch {
      line = JSON.stringify({ time: rec.time, level: lvl, msg, note: 'fields not serializable' });
    }
    sink(redactURLsIn(line));
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (f) => createLogger(level, sink, { ...base, ...f }),
  };
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = createLogger('error', () => {});
