// The pod a zone is asked through (the canary analysis, the sample parity count): one verified,
// ready pod of its read service (a VMCluster's vmselect, a VMSingle), the same one each time (the
// first by name).
import { readServiceName, refOf, STORAGE, kindOf, type NamedStorage } from '../../api/storage';
import { readWorkloads } from '../vmauth/config';
import type { ServicePod, ServicePods } from '../pods/service-pods';

/** One verified, ready pod serving the zone's reads (the first by name), or why there is none. */
export async function pickReadPod(pods: ServicePods, namespace: string, storage: NamedStorage, signal: AbortSignal): Promise<ServicePod | string> {
  const ref = refOf(namespace, storage);
  const service = readServiceName(ref);
  try {
    const list = (await pods.list(namespace, service, readWorkloads(ref))).filter((p) => !p.problem);
    list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return list[0] ?? `no ready, verified ${STORAGE[kindOf(ref)].readPodName} pod (EndpointSlices of service ${service})`;
  } catch (err) {
    if (signal.aborted) throw err;
    return `cannot list the pods of service ${service}: ${pods.describeScrapeError(err)}`;
  }
}

/** The Prometheus API prefix of a tenant on the zone's read pods (`/select/<tenant>/prometheus/api/v1`, a VMSingle's `/prometheus/api/v1`). */
export const apiPrefix = (storage: NamedStorage, tenant: string): string => `${STORAGE[kindOf({ kind: storage.storageKind })].queryPrefix(tenant)}/api/v1`;
