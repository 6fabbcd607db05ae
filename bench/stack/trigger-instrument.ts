// Instrumentation of the real trigger for bench/stack/trigger.ts, from the outside: nothing in
// trigger/ changes. Every reconciliation runs in an AsyncLocalStorage context, and every Temporal
// RPC (a gRPC interceptor on the trigger's Connection) and every Kubernetes call of its KubeOps
// (a wrapper) is recorded as a span of the reconciliation that made it (or of none: the watch's
// orphan sweep, the drift reporter). Used in-process (part 1) and by the child (trigger-child.ts).
import { AsyncLocalStorage } from 'node:async_hooks';
import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import type { KubeOps } from '../../trigger/kube';
import { Reconciler } from '../../trigger/execute';
import { objectKey, type WatchEventType } from '../../trigger/watch';
import type { VmdcObject } from '../../kube/vmdc-object';

export interface Span {
  /** `temporal:StartWorkflowExecution`, `kube:patchStatus`, … */
  op: string;
  start: number;
  end: number;
  ok: boolean;
}

export interface ReconcileRecord {
  key: string;
  type: WatchEventType;
  generation?: number;
  /** status.observedGeneration of the object reconciled. */
  observedGeneration?: number;
  begin: number;
  end: number;
  ok: boolean;
  spans: Span[];
}

const als = new AsyncLocalStorage<ReconcileRecord>();

/** Calls by operation, outside and inside reconciliations; reset between phases. */
export class CallCounter {
  counts: Record<string, number> = {};
  failures: Record<string, number> = {};
  /** Failed calls by `op reason` (error code, HTTP status or error name). */
  reasons: Record<string, number> = {};
  inFlight = 0;
  add(op: string, ok: boolean, reason?: string): void {
    this.counts[op] = (this.counts[op] ?? 0) + 1;
    if (!ok) {
      this.failures[op] = (this.failures[op] ?? 0) + 1;
      const r = `${op} ${reason ?? 'error'}`;
      this.reasons[r] = (this.reasons[r] ?? 0) + 1;
    }
  }
  reset(): void {
    this.counts = {};
    this.failures = {};
    this.reasons = {};
  }
  snapshot(): { counts: Record<string, number>; failures: Record<string, number>; reasons: Record<string, number> } {
    return { counts: { ...this.counts }, failures: { ...this.failures }, reasons: { ...this.reasons } };
  }
}

function record(counter: CallCounter, op: string, start: number, ok: boolean, rec: ReconcileRecord | undefined, reason?: string): void {
  counter.add(op, ok, reason);
  rec?.spans.push({ op, start, end: Date.now(), ok });
}

/**
 * A gRPC interceptor recording each Temporal RPC once (put it first: outside the SDK's retry
 * interceptor, so a retried call is one call with its whole duration).
 */
export function temporalRecorder(counter: CallCounter): Interceptor {
  return (options, nextCall) => {
    const op = `temporal:${options.method_definition.path.split('/').pop()}`;
    const start = Date.now();
    const rec = als.getStore();
    counter.inFlight++;
    let done = false;
    const finish = (ok: boolean, reason: string) => {
      if (done) return;
      done = true;
      counter.inFlight--;
      record(counter, op, start, ok, rec, reason);
    };
    return new InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        next(metadata, {
          onReceiveStatus(status, nxt) {
            finish(status.code === 0, `grpc-${status.code}`);
            nxt(status);
          },
        });
      },
    });
  };
}

/** KubeOps whose every call is counted (and recorded as a span of the current reconciliation). */
export function recordedKubeOps(kube: KubeOps, counter: CallCounter): KubeOps {
  const wrap =
    <A extends unknown[], R>(name: string, f: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      const start = Date.now();
      const rec = als.getStore();
      counter.inFlight++;
      try {
        const r = await f(...a);
        record(counter, `kube:${name}`, start, true, rec);
        return r;
      } catch (err) {
        const e = err as { code?: unknown; name?: string; message?: string };
        // client-node: ApiException carries the HTTP status as `code`; node-fetch errors a socket code; a timeout is an AbortError.
        record(counter, `kube:${name}`, start, false, rec, String(e?.code ?? e?.name ?? 'error'));
        throw err;
      } finally {
        counter.inFlight--;
      }
    };
  return {
    list: wrap('list', kube.list.bind(kube)),
    get: wrap('get', kube.get.bind(kube)),
    patchStatus: wrap('patchStatus', kube.patchStatus.bind(kube)),
    addFinalizer: wrap('addFinalizer', kube.addFinalizer.bind(kube)),
    removeFinalizer: wrap('removeFinalizer', kube.removeFinalizer.bind(kube)),
    listRouteRecords: wrap('listRouteRecords', kube.listRouteRecords.bind(kube)),
    createEvent: wrap('createEvent', kube.createEvent.bind(kube)),
  };
}

export interface ReconcilerHooks {
  onReconcile(r: ReconcileRecord): void;
  /** The orphan sweep of each list (Reconciler.orphans): begun / ended. */
  onOrphans?(phase: 'begin' | 'end'): void;
}

/**
 * Wraps Reconciler.prototype.reconcile and .orphans (every Reconciler of this process) until the
 * returned function is called.
 */
export function instrumentReconciler(hooks: ReconcilerHooks): () => void {
  const proto = Reconciler.prototype;
  const reconcile = proto.reconcile;
  const orphans = proto.orphans;
  proto.reconcile = function (this: Reconciler, type: WatchEventType, obj: VmdcObject) {
    const rec: ReconcileRecord = {
      key: objectKey(obj),
      type,
      generation: obj.metadata?.generation,
      observedGeneration: obj.status?.observedGeneration,
      begin: Date.now(),
      end: 0,
      ok: false,
      spans: [],
    };
    return als
      .run(rec, () => reconcile.call(this, type, obj))
      .then(
        (r) => {
          rec.end = Date.now();
          rec.ok = true;
          hooks.onReconcile(rec);
          return r;
        },
        (err: unknown) => {
          rec.end = Date.now();
          hooks.onReconcile(rec);
          throw err;
        },
      );
  };
  proto.orphans = function (this: Reconciler, ...args: Parameters<Reconciler['orphans']>) {
    hooks.onOrphans?.('begin');
    return orphans.apply(this, args).finally(() => hooks.onOrphans?.('end'));
  };
  return () => {
    proto.reconcile = reconcile;
    proto.orphans = orphans;
  };
}
