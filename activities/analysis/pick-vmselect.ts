// The vmselect pod a zone is asked through (the canary analysis, the sample parity count): one
// verified, ready pod, the same one each time (the first by name).
import { vmselectServiceName, vmselectWorkloads } from '../vmauth/config';
import type { ServicePod, ServicePods } from '../pods/service-pods';

/** One verified, ready vmselect pod of the zone's VMCluster (the first by name), or why there is none. */
export async function pickVmselect(pods: ServicePods, namespace: string, vmcluster: string, signal: AbortSignal): Promise<ServicePod | string> {
  const service = vmselectServiceName(vmcluster);
  try {
    const list = (await pods.list(namespace, service, vmselectWorkloads(vmcluster))).filter((p) => !p.problem);
    list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return list[0] ?? `no ready, verified vmselect pod (EndpointSlices of service ${service})`;
  } catch (err) {
    if (signal.aborted) throw err;
    return `cannot list the pods of service ${service}: ${pods.describeScrapeError(err)}`;
  }
}
