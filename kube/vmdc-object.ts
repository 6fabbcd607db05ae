// The VMDistributedCluster object as the trigger and the CLI read it from the API server (list,
// watch, GET): the spec is unvalidated until validateSpec has seen it.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { VMDistributedClusterStatus } from '../api/types';

export interface VmdcObject extends KubernetesObject {
  spec?: unknown;
  status?: VMDistributedClusterStatus;
}

export interface VmdcList {
  items: VmdcObject[];
  metadata?: { resourceVersion?: string };
}
