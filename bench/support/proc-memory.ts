// A process's resident memory as the kernel counts it (/proc/<pid>/status), for the benchmarks that
// measure a worker in its own process.
import * as fs from 'node:fs';

/** VmRSS (now) and VmHWM (its peak so far) of `pid`, in MB; NaN once the process is gone. */
export function procMemoryMB(pid: number): { rssMB: number; hwmMB: number } {
  let status: string;
  try {
    status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return { rssMB: NaN, hwmMB: NaN };
  }
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMB: kb('VmRSS') / 1024, hwmMB: kb('VmHWM') / 1024 };
}
