// Which endpoints of an EndpointSlice listing are really a Service's own pods. Anyone allowed to
// write EndpointSlices in a namespace can label one `kubernetes.io/service-name=<service>` and list
// any address in it; only the slices the EndpointSlice controller derives from the Service's
// selector name the pods the Service selects. Credentials go only to those. Pure.
//
// What the EndpointSlice controller writes (k8s.io/endpointslice utils.go: newEndpointSlice,
// setEndpointSliceLabels, podToEndpoint): labels kubernetes.io/service-name=<service> and
// endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io, a controller
// ownerReference {apiVersion: v1, kind: Service, name: <service>}, and per endpoint a targetRef
// {kind: Pod, namespace: <the Service's namespace>, name, uid}. Mirrored slices (of a selectorless
// Service's Endpoints) are owned by the Endpoints object and managed by another controller. The
// owner is matched by the Service's uid, not only its name: labels and ownerReferences are written
// by whoever writes the slice, and only the uid names this Service (not a deleted namesake).
import type { V1Endpoint, V1EndpointSlice } from '@kubernetes/client-node';

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
export const ENDPOINTSLICE_CONTROLLER = 'endpointslice-controller.k8s.io';

export interface ServiceRef {
  namespace: string;
  service: string;
  /** The Service's metadata.uid, as read. */
  uid: string;
}

/** Why the slice is not one the EndpointSlice controller wrote for `ref`'s Service (undefined: it is). */
export function sliceOwnerProblem(slice: V1EndpointSlice, ref: ServiceRef): string | undefined {
  const meta = slice.metadata ?? {};
  const name = `EndpointSlice ${meta.namespace ?? '?'}/${meta.name ?? '?'}`;
  if (meta.namespace !== ref.namespace) return `${name} is not in namespace ${ref.namespace}`;
  if (meta.labels?.[SERVICE_NAME_LABEL] !== ref.service) return `${name} is not labelled ${SERVICE_NAME_LABEL}=${ref.service}`;
  const managedBy = meta.labels?.[MANAGED_BY_LABEL];
  if (managedBy !== ENDPOINTSLICE_CONTROLLER)
    return `${name} is managed by ${managedBy === undefined ? 'no controller' : JSON.stringify(managedBy)}, not ${ENDPOINTSLICE_CONTROLLER}`;
  // The API server allows at most one controller reference per object.
  const owner = meta.ownerReferences?.find((o) => o.controller === true);
  if (!owner || owner.apiVersion !== 'v1' || owner.kind !== 'Service' || owner.name !== ref.service || owner.uid !== ref.uid) {
    const was = owner ? `${owner.kind} ${owner.name} (${owner.apiVersion}, uid ${owner.uid})` : 'nothing';
    return `${name} is controlled by ${was}, not Service ${ref.service} (uid ${ref.uid})`;
  }
  return undefined;
}

/** Why the endpoint is not a Pod of `namespace` (undefined: it is). */
export function targetRefProblem(endpoint: V1Endpoint, namespace: string): string | undefined {
  const t = endpoint.targetRef;
  if (!t) return 'endpoint names no pod (no targetRef)';
  if (t.kind !== 'Pod' || t.namespace !== namespace || !t.name) {
    return `endpoint's targetRef is ${t.kind ?? '?'} ${t.namespace ?? '?'}/${t.name ?? '?'}, not a Pod in namespace ${namespace}`;
  }
  return undefined;
}
