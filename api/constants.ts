// API groups and names of every Kubernetes kind vmrollout reads or writes.

export const GROUP = 'vmrollout.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'VMDistributedCluster';
export const PLURAL = 'vmdistributedclusters';
export const SINGULAR = 'vmdistributedcluster';
export const SHORT_NAME = 'vmdc';

export const VM_GROUP = 'operator.victoriametrics.com';
export const VM_VERSION = 'v1beta1';

/** The VM operator kinds vmrollout manages, with their plural resource names. */
export const VM_KINDS = {
  VMCluster: 'vmclusters',
  VMSingle: 'vmsingles',
  VMAuth: 'vmauths',
  VMUser: 'vmusers',
  VMAgent: 'vmagents',
} as const;
export type VMKind = keyof typeof VM_KINDS;

/** The operator's value of `status.updateStatus` once an object's pods match its spec. */
export const OPERATIONAL = 'operational';
export const FAILED = 'failed';

/**
 * The trigger's finalizer on every VMDistributedCluster it rolls out: a deleted object stays until
 * no rollout workflow of it runs and no route record (`vmrollout.io/out-of-rotation` on its
 * VMAuth / VMUsers) names it, so deleting it never strands a zone out of read rotation.
 */
export const ROUTE_RECORDS_FINALIZER = 'vmrollout.io/route-records';
