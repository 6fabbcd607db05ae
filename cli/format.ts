// Short human forms of durations, byte counts, times and gates, sized for fixed-width columns.
import type { Gate } from '../api/types';

/** 5s, 1m05s, 2h03m: two units at most, so a column stays narrow however long a step runs. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, '0')}h`;
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** 0 B, 512 B, 12.3 KiB: vmagent's pending bytes, binary units as vmagent's own dashboards use. */
export function formatBytes(bytes: number): string {
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${Math.round(v)} B` : `${v.toFixed(1)} ${UNITS[u]}`;
}

/** `2026-01-02 03:04:05Z`: second precision is what a person compares with logs. */
export function formatTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 19).replace('T', ' ')}Z`;
}

/** A bar of `width` cells, `fraction` of them filled (clamped to 0..1). */
export function bar(fraction: number, width: number): string {
  const f = Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 0));
  const full = Math.round(f * width);
  return '█'.repeat(full) + '░'.repeat(width - full);
}

/** `gate AfterFirstZone`, `gates BeforeFirstZone + BeforeEachZone` (the workflow's own join). */
export function gatesText(gates: readonly Gate[]): string {
  return `${gates.length === 1 ? 'gate' : 'gates'} ${gates.join(' + ')}`;
}
