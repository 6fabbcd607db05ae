/**
 * Real VictoriaMetrics processes: single-node victoria-metrics, vmagent and vmauth on
 * loopback. restart() keeps the same port and data dir (to simulate a zone upgrade or an outage).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { freePort } from './ports';
import { harnessTempDir, httpGet, httpReady, httpRequest, startProcess, waitFor, type ManagedProcess } from './processes';
import { toolPath } from './tools';

export interface VmProcessHandle {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  readonly pid: number;
  readonly running: boolean;
  /** Working dir of this instance (data, config, logs). */
  dir: string;
  process: ManagedProcess;
  stop(): Promise<void>;
  /** Start again after stop() (same port, same data), waiting for /health. */
  start(): Promise<void>;
  /** stop() + start(). */
  restart(): Promise<void>;
  /** Text of GET <url>/metrics. */
  metricsText(): Promise<string>;
}

function handle(url: string, port: number, dir: string, proc: ManagedProcess): VmProcessHandle {
  return {
    url,
    port,
    dir,
    process: proc,
    get pid() {
      return proc.pid;
    },
    get running() {
      return proc.running;
    },
    stop: () => proc.stop(),
    start: () => proc.start(),
    restart: () => proc.restart(),
    metricsText: async () => {
      const r = await httpGet(`${url}/metrics`);
      if (r.status !== 200) throw new Error(`GET ${url}/metrics: ${r.status} ${r.body}`);
      return r.body;
    },
  };
}

/** Value of the first sample of `metric` (optionally with a label substring) in Prometheus text, or undefined. */
export function metricValue(text: string, metric: string, labelsContain?: string): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(metric)) continue;
    const rest = line.slice(metric.length);
    if (rest[0] !== ' ' && rest[0] !== '{') continue;
    if (labelsContain && !rest.includes(labelsContain)) continue;
    const v = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (!Number.isNaN(v)) return v;
  }
  return undefined;
}

export interface VictoriaMetricsOptions {
  port?: number;
  /** Default: <dir>/data */
  storageDataPath?: string;
  /** Default '1y' (the minimum that keeps samples from any test timestamp). */
  retentionPeriod?: string;
  extraArgs?: string[];
  name?: string;
}

/** victoria-metrics single node on 127.0.0.1; ready when /health answers 200. */
export async function startVictoriaMetrics(opts: VictoriaMetricsOptions = {}): Promise<VmProcessHandle> {
  const bin = toolPath('victoria-metrics');
  const name = opts.name ?? 'victoria-metrics';
  const port = opts.port ?? (await freePort());
  const dir = harnessTempDir(name);
  const url = `http://127.0.0.1:${port}`;
  const proc = await startProcess({
    name,
    command: bin,
    args: [
      `-storageDataPath=${opts.storageDataPath ?? path.join(dir, 'data')}`,
      `-httpListenAddr=127.0.0.1:${port}`,
      `-retentionPeriod=${opts.retentionPeriod ?? '1y'}`,
      '-search.latencyOffset=0s',
      '-loggerLevel=WARN',
      ...(opts.extraArgs ?? []),
    ],
    logDir: dir,
    ready: httpReady(`${url}/health`),
  });
  return handle(url, port, dir, proc);
}

export interface VmagentOptions {
  remoteWriteUrls: string[];
  port?: number;
  /** Default: <dir>/rw-tmp (keeps the pending-data queue across restart()). */
  tmpDataPath?: string;
  /** A promscrape config: a file path, or an object written as YAML. */
  promscrapeConfig?: string | object;
  extraArgs?: string[];
  name?: string;
}

export interface VmagentHandle extends VmProcessHandle {
  remoteWriteUrls: string[];
  /** Restarts it with its own flags and `extraArgs` instead of those it was started with (its queues kept). */
  restartWith(extraArgs: string[]): Promise<void>;
}

/** vmagent on 127.0.0.1 remote-writing to each URL; ready when /health answers 200. */
export async function startVmagent(opts: VmagentOptions): Promise<VmagentHandle> {
  const bin = toolPath('vmagent');
  const name = opts.name ?? 'vmagent';
  const port = opts.port ?? (await freePort());
  const dir = harnessTempDir(name);
  const url = `http://127.0.0.1:${port}`;
  let scrapeArgs: string[] = [];
  if (opts.promscrapeConfig !== undefined) {
    let file = opts.promscrapeConfig;
    if (typeof file !== 'string') {
      file = path.join(dir, 'scrape.yaml');
      fs.writeFileSync(file, stringify(opts.promscrapeConfig));
    }
    scrapeArgs = [`-promscrape.config=${file}`];
  }
  const own = [
    ...opts.remoteWriteUrls.map((u) => `-remoteWrite.url=${u}`),
    `-remoteWrite.tmpDataPath=${opts.tmpDataPath ?? path.join(dir, 'rw-tmp')}`,
    `-httpListenAddr=127.0.0.1:${port}`,
    '-loggerLevel=WARN',
    ...scrapeArgs,
  ];
  const proc = await startProcess({ name, command: bin, args: [...own, ...(opts.extraArgs ?? [])], logDir: dir, ready: httpReady(`${url}/health`) });
  return { ...handle(url, port, dir, proc), remoteWriteUrls: opts.remoteWriteUrls, restartWith: (extraArgs) => proc.restart([...own, ...extraArgs]) };
}

export interface VmauthOptions {
  /** vmauth -auth.config content: YAML text or an object. */
  config: string | object;
  port?: number;
  extraArgs?: string[];
  name?: string;
}

export interface VmauthHandle extends VmProcessHandle {
  configPath: string;
  /** Writes a new config and reloads vmauth (SIGHUP); resolves once vmauth reports a successful reload, throws if it rejected the config. */
  updateConfig(config: string | object): Promise<void>;
}

const toYaml = (c: string | object) => (typeof c === 'string' ? c : stringify(c));

/** vmauth on 127.0.0.1 with the given -auth.config; ready when /health answers 200. */
export async function startVmauth(opts: VmauthOptions): Promise<VmauthHandle> {
  const bin = toolPath('vmauth');
  const name = opts.name ?? 'vmauth';
  const port = opts.port ?? (await freePort());
  const dir = harnessTempDir(name);
  const url = `http://127.0.0.1:${port}`;
  const configPath = path.join(dir, 'auth.yaml');
  fs.writeFileSync(configPath, toYaml(opts.config));
  const proc = await startProcess({
    name,
    command: bin,
    args: [`-auth.config=${configPath}`, `-httpListenAddr=127.0.0.1:${port}`, '-loggerLevel=WARN', ...(opts.extraArgs ?? [])],
    logDir: dir,
    ready: httpReady(`${url}/health`),
  });
  const h = handle(url, port, dir, proc);
  return {
    ...h,
    configPath,
    async updateConfig(config) {
      const before = metricValue(await h.metricsText(), 'vmauth_config_last_reload_total') ?? 0;
      fs.writeFileSync(configPath, toYaml(config));
      proc.signal('SIGHUP');
      await waitFor(async () => (metricValue(await h.metricsText(), 'vmauth_config_last_reload_total') ?? 0) > before, {
        timeoutMs: 10_000,
        description: 'vmauth to reload its config',
        diagnostics: () => proc.logTail(),
      });
      const ok = metricValue(await h.metricsText(), 'vmauth_config_last_reload_successful');
      if (ok !== 1) throw new Error(`vmauth rejected the new config (vmauth_config_last_reload_successful=${ok})\n${proc.logTail()}`);
    },
  };
}

/** Instant query against a VictoriaMetrics (or vmauth) base URL; returns the parsed `data.result`. */
export async function vmQuery(baseUrl: string, query: string, pathPrefix = ''): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> {
  const r = await httpGet(`${baseUrl}${pathPrefix}/api/v1/query?query=${encodeURIComponent(query)}`);
  if (r.status !== 200) throw new Error(`query ${query} at ${baseUrl}${pathPrefix}: HTTP ${r.status}: ${r.body}`);
  const body = JSON.parse(r.body) as { status: string; data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> } };
  return body.data.result;
}

/** POST a body (e.g. Prometheus text to /api/v1/import/prometheus). */
export function httpPost(url: string, body: string, contentType = 'text/plain'): Promise<{ status: number; body: string }> {
  return httpRequest('POST', url, { body, headers: { 'content-type': contentType } });
}
