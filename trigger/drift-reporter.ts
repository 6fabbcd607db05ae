// The trigger's drift reporting (what to report: drift.ts). It keeps what the watches last saw of
// each VM object (as an ObjectDrift) and of each VMDistributedCluster, and after every change,
// serially per VMDistributedCluster on the trigger's queue, writes that VMDistributedCluster's
// Drifted condition and emits Events when they change. The trigger owns the condition: the
// workflow's status writes carry over the conditions they do not own (activities/status/write-status.ts).
// Nothing is retried on a timer: a failed write is tried again at the next event of the
// VMDistributedCluster or of one of its objects, at the latest at the next relist.
import type { KubernetesObject } from '@kubernetes/client-node';
import { mergeConditions } from '../api/conditions';
import type { VMKind } from '../api/constants';
import { conditionChanges, driftedFieldCount, driftReport, objectDrift, ObjectDriftIndex, planDrift, type DriftEvent, type ObjectLabel } from './drift';
import { tryCreateEvent, type KubeOps } from './kube';
import type { Logger } from './log';
import type { TriggerMetrics } from './metrics';
import type { KeyedSerialQueue } from './queue';
import { objectGeneration } from './decide';
import { objectKey, type WatchEventType } from './watch';
import type { VmdcObject } from '../kube/vmdc-object';

export interface DriftReporterDeps {
  kube: Pick<KubeOps, 'patchStatus' | 'createEvent'>;
  /** The trigger's queue: a report runs under key `drift:<namespace>/<name>`, so `idle()` and stop wait for it. */
  queue: KeyedSerialQueue;
  log: Logger;
  metrics: TriggerMetrics;
  now?: () => Date;
}

const vmObjectKey = (kind: VMKind, namespace: string, name: string): string => `${kind}/${namespace}/${name}`;

export class DriftReporter {
  /** What the object watches last saw, indexed by the VMDistributedCluster each record names. */
  private readonly objects = new ObjectDriftIndex();
  private readonly vmdcs = new Map<string, VmdcObject>();
  /** What Events reported, per VMDistributedCluster uid (planDrift's memory). */
  private readonly reported = new Map<string, Map<ObjectLabel, string[]>>();
  private readonly scheduled = new Set<string>();
  private listed = false;
  private stopped = false;
  private readonly now: () => Date;

  constructor(private readonly deps: DriftReporterDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** A VMDistributedCluster watch event: every event reports again (a status write may have dropped the condition, a new uid has other records). */
  vmdcChanged(type: WatchEventType, obj: VmdcObject): void {
    const key = objectKey(obj);
    if (type === 'delete') {
      this.vmdcs.delete(key);
      if (obj.metadata?.uid) this.reported.delete(obj.metadata.uid);
      this.deps.metrics.driftedFields.remove({ namespace: obj.metadata?.namespace ?? '', name: obj.metadata?.name ?? '' });
      return;
    }
    this.vmdcs.set(key, obj);
    this.schedule(key);
  }

  /** A VM object watch event: the VMDistributedClusters its record named before and names now report again. */
  objectChanged(kind: VMKind, type: WatchEventType, obj: KubernetesObject): void {
    const now = objectDrift(kind, obj);
    if (!now) return;
    const key = vmObjectKey(kind, now.namespace, now.name);
    const before = this.objects.get(key);
    if (type === 'delete') this.objects.delete(key);
    else this.objects.set(key, now);
    for (const o of [before, now]) if (o?.applied) this.schedule(ObjectDriftIndex.vmdcKey(o.namespace, o.applied.vmdc.name));
  }

  /**
   * The object watches have each listed once. Until then nothing is reported: an object not seen
   * yet would read as no drift, and a trigger's start would turn every Drifted=True to False and
   * back (with a new Event).
   */
  objectsListed(): void {
    this.listed = true;
    for (const key of this.vmdcs.keys()) this.schedule(key);
  }

  /** The resourceVersion of the latest state of an object the reporter took in (tests, diagnostics). */
  observed(kind: VMKind, namespace: string, name: string): string | undefined {
    return this.objects.get(vmObjectKey(kind, namespace, name))?.resourceVersion;
  }

  /** No report is started after this (those queued return at once). */
  stop(): void {
    this.stopped = true;
  }

  /** Coalesces: a report already queued for the key reads the latest state when it runs. */
  private schedule(key: string): void {
    if (this.stopped || !this.listed || this.scheduled.has(key)) return;
    this.scheduled.add(key);
    void this.deps.queue.push(`drift:${key}`, async () => {
      this.scheduled.delete(key);
      if (this.stopped) return;
      try {
        await this.report(key);
      } catch (err) {
        this.deps.log.warn('could not report drift; trying again at the next event', { object: key, err });
      }
    });
  }

  private async report(key: string): Promise<void> {
    const vmdc = this.vmdcs.get(key);
    const og = vmdc && objectGeneration(vmdc);
    // Being deleted: its objects go (owned) or stay as they are (retained); no rollout will take anything back.
    if (!og || vmdc.metadata?.deletionTimestamp) return;
    const report = driftReport(og, this.objects.of(og.namespace, og.name));
    const plan = planDrift(report, driftedCondition(vmdc), this.reported.get(og.uid));
    const condition = plan.condition;
    if (!condition) return;
    const log = this.deps.log.child({ object: key });
    if (plan.write) {
      // The watched status may lag behind (e.g. this trigger's previous write): decided again on the fresh object.
      const written = await this.deps.kube.patchStatus(og, (fresh) => {
        const st = fresh.status ?? {};
        if (!conditionChanges(driftedCondition(fresh), condition)) return undefined;
        return { conditions: mergeConditions(st.conditions, [condition], { now: this.now().toISOString() }) };
      });
      log.info('Drifted condition', { written, status: condition.status, message: condition.message });
    }
    this.deps.metrics.driftedFields.set({ namespace: og.namespace, name: og.name }, driftedFieldCount(report));
    this.reported.set(og.uid, plan.reported);
    for (const e of plan.events) await this.event(vmdc, e, log);
  }

  private async event(vmdc: VmdcObject, e: DriftEvent, log: Logger): Promise<void> {
    if (e.type === 'Warning') log.warn('drift', { message: e.message });
    else log.info('drift resolved', { message: e.message });
    await tryCreateEvent(this.deps.kube, vmdc, e.type, e.reason, e.message, log);
  }
}

const driftedCondition = (obj: VmdcObject) => obj.status?.conditions?.find((c) => c.type === 'Drifted');
