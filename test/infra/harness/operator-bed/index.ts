/**
 * The REAL-OPERATOR BED: the VictoriaMetrics operator (its own binary and CRDs) on a real control
 * plane (./control-plane.ts), and for its pods real processes on the pods' IPs (./kubelet.ts):
 * vmauth with the operator's config-reloader, vmagent, vmselect fronts to real VictoriaMetrics
 * zones (./zones.ts), their Service names in the namespace's DNS (./dns.ts), and what happened, for
 * the assertions (./observer.ts). Runs only inside the network namespace of ./in-netns.sh.
 *
 * The simulated bed (test/infra/simulator/, test/integration/operator-bed.ts) stays for what the real
 * operator cannot be made to do on demand (slow, failing, hanging reconciles).
 */
import type * as k8s from '@kubernetes/client-node';
import { startOperatorControlPlane, type OperatorControlPlane } from './control-plane';
import { ClusterDns } from './dns';
import { Kubelet } from './kubelet';
import { assertInBedNamespace } from './netns';
import { Observer } from './observer';
import { Zones } from './zones';

export interface RealOperatorBed {
  cp: OperatorControlPlane;
  kc: k8s.KubeConfig;
  zones: Zones;
  kubelet: Kubelet;
  dns: ClusterDns;
  observer: Observer;
  /** ms from the call to each part being ready (the bed's start-up benchmark). */
  timings: Record<string, number>;
  stop(): Promise<void>;
}

export async function startRealOperatorBed(opts: { namespace: string; zones: string[]; vmauth: string; log?: (m: string) => void }): Promise<RealOperatorBed> {
  assertInBedNamespace();
  const t0 = Date.now();
  const cp = await startOperatorControlPlane({ namespace: opts.namespace, log: opts.log });
  const kc = cp.kc;
  const parts: { zones?: Zones; kubelet?: Kubelet; dns?: ClusterDns; observer?: Observer } = {};
  const stop = async () => {
    await parts.observer?.stop();
    await parts.dns?.stop();
    await parts.kubelet?.stop();
    await parts.zones?.stop();
    await cp.stop();
  };
  try {
    const zones = (parts.zones = await Zones.start(kc, opts.namespace, opts.zones));
    const kubelet = (parts.kubelet = new Kubelet({ kc, namespace: opts.namespace, zones, log: opts.log }));
    kubelet.start();
    const dns = (parts.dns = new ClusterDns({ kc, namespace: opts.namespace }));
    dns.start();
    const observer = (parts.observer = new Observer({ kc, namespace: opts.namespace, vmauth: opts.vmauth, kubelet }));
    observer.start();
    return { cp, kc, zones, kubelet, dns, observer, timings: { ...cp.timings, 'zones, kubelet, dns': Date.now() - t0 }, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
