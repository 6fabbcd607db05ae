/**
 * The bed's kubelet: kwok makes the operator's pods Running and Ready with an IP; this runs, for
 * each such pod, what its containers would run, on that IP, and stops it when the pod goes.
 *
 *  - vmauth and vmagent pods: the containers the operator rendered, AS RENDERED: the init container
 *    (`config-reloader --only-init-config …`) to completion, then every container, each image's
 *    binary (vmauth, vmagent, the operator's config-reloader) with the pod's args. What a pod gives
 *    a container is translated, nothing else: a listen address `:<port>` binds `<pod IP>:<port>`
 *    (every pod shares this namespace's loopback), `127.0.0.1` in a URL is the pod's IP (its own
 *    network namespace in a cluster), an absolute path lies in the pod's own directory (its
 *    volumes, shared by its containers), the config-reloader listens on its container port at the
 *    pod IP (its default `:8435` would collide) and reads the API server as the pod's
 *    ServiceAccount (a TokenRequest token, as a projected token in a cluster).
 *  - vmselect pods: a front with vmselect's request counters (../../simulator/vmselect-front.ts) on
 *    `<pod IP>:8481`, forwarding to the zone's VictoriaMetrics (./zones.ts).
 *  - vmstorage pods: the zone's storage. A vmstorage pod being replaced takes the zone's process
 *    down; it starts again (same data) once the StatefulSet's pods are all back.
 *  - vminsert pods: nothing (vmagent writes to each zone's process straight).
 *  - vmsingle pods: the container the operator rendered, as rendered (single-node
 *    victoria-metrics, its data in the pod's own directory: an emptyDir, as the operator mounts
 *    one without spec.storage, so a replaced pod starts empty).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { serviceAccountToken, tokenKubeConfig } from '../chart-identities';
import { harnessTempDir, startProcess, waitFor, type ManagedProcess } from '../processes';
import { toolPath, type ToolName } from '../tools';
import { startVmselectFront, type VmselectFront } from '../../simulator/vmselect-front';
import type { Zones } from './zones';

const NAME_LABEL = 'app.kubernetes.io/name';
const INSTANCE_LABEL = 'app.kubernetes.io/instance';

/** The binary behind an image the operator renders (repository, without the tag). */
const BINARIES: Record<string, ToolName> = {
  'victoriametrics/vmauth': 'vmauth',
  'victoriametrics/vmagent': 'vmagent',
  'victoriametrics/victoria-metrics': 'victoria-metrics',
  'victoriametrics/operator': 'config-reloader',
};

/** A pod the kubelet runs something for. */
interface RunningPod {
  uid: string;
  name: string;
  component: string;
  instance: string;
  ip: string;
  stop(): Promise<void>;
}

export interface KubeletEvent {
  at: number;
  pod: string;
  component: string;
  instance: string;
  ip: string;
  event: 'started' | 'stopped' | 'failed';
  error?: string;
}

export class Kubelet {
  readonly events: KubeletEvent[] = [];
  readonly errors: string[] = [];
  private readonly running = new Map<string, RunningPod>();
  private readonly starting = new Set<string>();
  private readonly core: k8s.CoreV1Api;
  private readonly dir = harnessTempDir('kubelet');
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private loop?: Promise<void>;

  constructor(private readonly opts: { kc: k8s.KubeConfig; namespace: string; zones: Zones; log?: (m: string) => void }) {
    this.core = opts.kc.makeApiClient(k8s.CoreV1Api);
  }

  start(): void {
    const tick = async () => {
      if (this.stopped) return;
      try {
        await this.sync();
      } catch (err) {
        this.errors.push(`${new Date().toISOString()} sync: ${String(err)}`);
      }
      if (!this.stopped) this.timer = setTimeout(() => (this.loop = tick()), 100);
    };
    this.loop = tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.loop;
    await Promise.all([...this.running.values()].map((p) => p.stop()));
    this.running.clear();
  }

  /** The pods running now, by component (vmauth, vmagent, vmselect, vmsingle). */
  pods(component?: string): Array<Pick<RunningPod, 'name' | 'component' | 'instance' | 'ip'>> {
    return [...this.running.values()]
      .filter((p) => !component || p.component === component)
      .map(({ name, component: c, instance, ip }) => ({ name, component: c, instance, ip }));
  }

  /** Until a pod of `component` (and `instance`) runs, n of them. */
  async waitPods(component: string, n: number, timeoutMs = 60_000): Promise<void> {
    await waitFor(() => this.pods(component).length >= n, {
      timeoutMs,
      description: `${n} ${component} pod(s) running in the bed's kubelet`,
      diagnostics: () => this.errors.slice(-5).join('\n'),
    });
  }

  private async sync(): Promise<void> {
    const list = await this.core.listNamespacedPod({ namespace: this.opts.namespace });
    const live = new Map<string, k8s.V1Pod>();
    for (const pod of list.items) {
      const uid = pod.metadata?.uid;
      if (!uid || pod.metadata?.deletionTimestamp || pod.status?.phase !== 'Running' || !pod.status.podIP) continue;
      live.set(uid, pod);
    }
    for (const [uid, p] of this.running) {
      if (live.has(uid)) continue;
      this.running.delete(uid);
      await p.stop();
      this.record(p, 'stopped');
    }
    for (const [uid, pod] of live) {
      if (this.running.has(uid) || this.starting.has(uid)) continue;
      this.starting.add(uid);
      void this.run(pod).finally(() => this.starting.delete(uid));
    }
    await this.opts.zones.reconcileStorage(list.items.filter((p) => p.metadata?.labels?.[NAME_LABEL] === 'vmstorage'));
  }

  private record(p: Pick<RunningPod, 'name' | 'component' | 'instance' | 'ip'>, event: KubeletEvent['event'], error?: string): void {
    this.events.push({ at: Date.now(), pod: p.name, component: p.component, instance: p.instance, ip: p.ip, event, ...(error ? { error } : {}) });
    this.opts.log?.(`kubelet: ${p.component} pod ${p.name} (${p.ip}) ${event}${error ? `: ${error}` : ''}`);
  }

  private async run(pod: k8s.V1Pod): Promise<void> {
    const meta = pod.metadata!;
    const base = {
      uid: meta.uid!,
      name: meta.name!,
      component: meta.labels?.[NAME_LABEL] ?? '',
      instance: meta.labels?.[INSTANCE_LABEL] ?? '',
      ip: pod.status!.podIP!,
    };
    try {
      let stop: () => Promise<void>;
      switch (base.component) {
        case 'vmauth':
        case 'vmagent':
        case 'vmsingle':
          stop = await this.runContainers(pod, base.ip);
          break;
        case 'vmselect':
          stop = await this.runVmselect(pod, base.instance, base.ip);
          break;
        default:
          return;
      }
      if (this.stopped) return void (await stop());
      this.running.set(base.uid, { ...base, stop });
      this.record(base, 'started');
    } catch (err) {
      this.errors.push(`${meta.name}: ${String(err)}`);
      this.record(base, 'failed', String(err));
    }
  }

  private async runVmselect(pod: k8s.V1Pod, instance: string, ip: string): Promise<() => Promise<void>> {
    const zone = this.opts.zones.get(instance);
    const port = Number(pod.spec?.containers[0]?.ports?.find((p) => p.name === 'http')?.containerPort ?? 8481);
    const front: VmselectFront = await startVmselectFront({ backendURL: zone.url, port, host: ip, name: instance });
    this.opts.zones.addFront(instance, pod.metadata!.name!, front);
    return async () => {
      this.opts.zones.removeFront(instance, pod.metadata!.name!);
      await front.stop();
    };
  }

  /** The pod's init containers to completion, then its containers, as rendered (see the header). */
  private async runContainers(pod: k8s.V1Pod, ip: string): Promise<() => Promise<void>> {
    const name = pod.metadata!.name!;
    const podDir = path.join(this.dir, name);
    fs.mkdirSync(podDir, { recursive: true });
    // The pod's volumes: one directory per mount path (shared by the containers that mount it).
    for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])])
      for (const m of c.volumeMounts ?? []) fs.mkdirSync(path.join(podDir, m.mountPath), { recursive: true });
    const kubeconfig = await this.serviceAccountKubeconfig(pod, podDir);
    const started: ManagedProcess[] = [];
    const stop = async () => {
      for (const p of started.reverse()) await p.stop();
    };
    try {
      for (const c of pod.spec?.initContainers ?? []) {
        const proc = await startProcess({ ...this.command(c, ip, podDir, kubeconfig), name: `${name}-${c.name}`, logDir: podDir });
        const exit = await proc.exited();
        if (exit.code !== 0) throw new Error(`init container ${c.name} exited with ${exit.code ?? exit.signal}\n${proc.logTail()}`);
      }
      for (const c of pod.spec?.containers ?? []) {
        started.push(await startProcess({ ...this.command(c, ip, podDir, kubeconfig), name: `${name}-${c.name}`, logDir: podDir }));
      }
      return stop;
    } catch (err) {
      await stop();
      throw err;
    }
  }

  private command(c: k8s.V1Container, ip: string, podDir: string, kubeconfig: string): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
    const repo = c.image?.replace(/:[^/]*$/, '') ?? '';
    const tool = BINARIES[repo];
    if (!tool) throw new Error(`container ${c.name}: no binary for image ${c.image} in the bed's kubelet`);
    const args = (c.args ?? []).map((a) => translateArg(a, ip, podDir));
    if (tool === 'config-reloader' && !args.some((a) => a.startsWith('--only-init-config'))) {
      const port = c.ports?.[0]?.containerPort ?? 8435;
      args.push(`--http.listenAddr=${ip}:${port}`);
    }
    return { command: toolPath(tool), args, env: { ...process.env, KUBECONFIG: kubeconfig } };
  }

  /** A kubeconfig with a token of the pod's ServiceAccount (what its projected token volume gives it). */
  private async serviceAccountKubeconfig(pod: k8s.V1Pod, podDir: string): Promise<string> {
    const sa = pod.spec?.serviceAccountName ?? 'default';
    const token = await serviceAccountToken(this.opts.kc, this.opts.namespace, sa);
    const file = path.join(podDir, 'kubeconfig');
    fs.writeFileSync(file, tokenKubeConfig(this.opts.kc, `system:serviceaccount:${this.opts.namespace}:${sa}`, token, this.opts.namespace).exportConfig());
    return file;
  }
}

/** One container arg as the pod gives it (see the header). Pure. */
export function translateArg(arg: string, ip: string, podDir: string): string {
  const m = /^(-{1,2}[\w.-]+)=(.*)$/.exec(arg);
  if (!m) return arg;
  const [, flag, value] = m as unknown as [string, string, string];
  if (/^:\d+$/.test(value)) return `${flag}=${ip}${value}`;
  if (/^https?:\/\/127\.0\.0\.1[:/]/.test(value)) return `${flag}=${value.replace('127.0.0.1', ip)}`;
  if (value.startsWith('/')) return `${flag}=${path.join(podDir, value)}`;
  return arg;
}
