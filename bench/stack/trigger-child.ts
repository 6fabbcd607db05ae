// The trigger as its own process for bench/stack/trigger.ts (part 2: memory and resync): what
// trigger/main.ts main() does — config from the environment, startTrigger — with its Temporal
// Connection and KubeOps recorded (trigger-instrument.ts), driven over the fork IPC channel:
//   parent → { cmd: 'stats', gc?: boolean } | { cmd: 'relist' } | { cmd: 'stop' }
//   child  → { type: 'ready' | 'synced' | 'idle' | 'stats' | 'relisted' | 'stopped' | 'error', ... }
// The parent reads this process's VmRSS from /proc. Run compiled (node, as in the image) or with tsx.
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { temporalConnectionOptions } from '../../process/env';
import { payloadDataConverter } from '../../process/payload-codec';
import { loadConfig } from '../../trigger/config';
import { defaultKubeConfig } from '../../kube/keep-alive';
import { createKubeOps } from '../../trigger/kube';
import { createLogger } from '../../trigger/log';
import { startTrigger, type TriggerHandle } from '../../trigger/main';
import { CallCounter, instrumentReconciler, recordedKubeOps, temporalRecorder } from './trigger-instrument';

type Msg = { cmd: 'stats'; gc?: boolean } | { cmd: 'relist' } | { cmd: 'stop' };

const send = (m: Record<string, unknown>): void => {
  process.send?.(m);
};
const tick = () => new Promise<void>((r) => setImmediate(r));

async function main(): Promise<void> {
  const t0 = Date.now();
  const config = loadConfig();
  const counter = new CallCounter();
  const reconciles = { ok: 0, failed: 0, ms: 0, maxMs: 0, handled: new Set<string>() };
  let sweeping = 0;
  let sweeps = 0;
  instrumentReconciler({
    onReconcile(r) {
      if (r.ok) reconciles.ok++;
      else reconciles.failed++;
      reconciles.ms += r.end - r.begin;
      reconciles.maxMs = Math.max(reconciles.maxMs, r.end - r.begin);
      // A generation not yet observed, reconciled without error: its workflow was started and recorded.
      if (r.ok && r.type !== 'delete' && r.generation !== undefined && r.observedGeneration !== r.generation) reconciles.handled.add(r.key);
    },
    onOrphans(phase) {
      if (phase === 'begin') sweeping++;
      else {
        sweeping--;
        sweeps++;
      }
    },
  });
  const connection = await Connection.connect({
    ...temporalConnectionOptions(config.temporal),
    interceptors: [temporalRecorder(counter), makeGrpcRetryInterceptor(defaultGrpcRetryOptions())],
  });
  const temporalClient = new Client({ connection, namespace: config.temporal.namespace, dataConverter: payloadDataConverter(config.temporal.payloadKeys) });
  // As main() gets it (startTrigger's default): keep-alive agents; the reconciliation cap is the
  // config's (RECONCILE_CONCURRENCY, default 32).
  const kubeConfig = defaultKubeConfig();
  let listDone: (() => void) | undefined;
  let listedAt = 0;
  const kubeOps = recordedKubeOps(createKubeOps(kubeConfig), counter);
  const kube = {
    ...kubeOps,
    list: async (namespace?: string) => {
      const l = await kubeOps.list(namespace);
      listedAt = Date.now();
      const d = listDone;
      listDone = undefined;
      // The informer emits its add events right after the list returns.
      if (d) setImmediate(d);
      return l;
    },
  };
  counter.reset();
  const log = createLogger(config.logLevel).child({ component: 'trigger' });
  const listed = new Promise<void>((r) => (listDone = r));
  const trigger: TriggerHandle = await startTrigger(config, { kubeConfig, temporalClient, kube, log });
  send({ type: 'ready', ms: Date.now() - t0 });

  /** Until no reconciliation is queued or running, no orphan sweep runs and no recorded call is in flight. */
  const settle = async (): Promise<void> => {
    for (;;) {
      await trigger.idle();
      await tick();
      if (sweeping === 0 && counter.inFlight === 0) {
        await new Promise((r) => setTimeout(r, 50));
        if (sweeping === 0 && counter.inFlight === 0) return;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const stats = () => ({
    calls: counter.snapshot(),
    reconciles: {
      ok: reconciles.ok,
      failed: reconciles.failed,
      meanMs: Math.round(reconciles.ms / Math.max(1, reconciles.ok + reconciles.failed)),
      maxMs: reconciles.maxMs,
      handled: reconciles.handled.size,
    },
    sweeps,
    watchRestarts: trigger.watch.restarts,
    mem: process.memoryUsage(),
  });

  void (async () => {
    await trigger.synced;
    await listed;
    // `ms`: once the list's add events were emitted and the event loop got to this (the
    // reconciliations they started ran their synchronous part first); `listedMs`: the list answered.
    send({ type: 'synced', ms: Date.now() - t0, listedMs: listedAt - t0 });
    await settle();
    send({ type: 'idle', ms: Date.now() - t0, ...stats() });
  })();

  process.on('message', (m: Msg) => {
    void (async () => {
      try {
        if (m.cmd === 'stats') {
          if (m.gc && typeof global.gc === 'function') {
            global.gc();
            global.gc();
          }
          send({ type: 'stats', ...stats() });
        } else if (m.cmd === 'relist') {
          await settle();
          counter.reset();
          reconciles.ok = reconciles.failed = reconciles.ms = reconciles.maxMs = 0;
          const before = sweeps;
          const start = Date.now();
          const relisted = new Promise<void>((r) => (listDone = r));
          trigger.watch.restartAll('relist');
          await relisted;
          const listMs = Date.now() - start;
          // The orphan sweep runs after the list's add events: wait until it has run and ended.
          while (sweeps === before) await new Promise((r) => setTimeout(r, 10));
          await settle();
          send({ type: 'relisted', listMs, ms: Date.now() - start, ...stats() });
        } else if (m.cmd === 'stop') {
          await trigger.stop();
          await connection.close();
          send({ type: 'stopped' });
          process.exit(0);
        }
      } catch (err) {
        send({ type: 'error', message: String((err as Error)?.stack ?? err) });
      }
    })();
  });
  // The parent went away: nothing is left to drive this process.
  process.on('disconnect', () => process.exit(1));
}

main().catch((err: unknown) => {
  send({ type: 'error', message: String((err as Error)?.stack ?? err) });
  process.exit(1);
});
