// What the installer of vmrollout allows a VMDistributedCluster to ask for, and the chart value that
// allows each thing (every denial names it). Read from the environment by process/env.ts; both the
// trigger and the worker enforce the same policy.

export interface TrustPolicy {
  /** Namespaces whose VMDistributedClusters may use full specs (create objects). */
  createNamespaces: readonly string[];
  /** Whether targetRefs (VMUser, VMAuth) may name objects of another namespace. */
  crossNamespaceTargetRefs: boolean;
  /** Hosts, besides the Services of the VMDistributedCluster's namespace, VMUser/VMAuth URLs may send reads to. */
  routeHosts: readonly string[];
  /** Hosts, besides the Services of the VMDistributedCluster's namespace, VMAgent remoteWrite URLs may send samples to. */
  remoteWriteHosts: readonly string[];
  /** Image repositories besides the official VictoriaMetrics ones (OFFICIAL_IMAGE_REPOSITORIES). */
  imageRepositories: readonly string[];
  /** ServiceAccounts the objects' pods may run as (by name, in the object's namespace). */
  serviceAccountNames: readonly string[];
  /** hostNetwork, hostPath and other node or network volumes, hostAliases, DNS settings of the pods. */
  hostAccess: boolean;
  /** containers / initContainers added to (or patched into) the objects' pods. */
  extraContainers: boolean;
  /** VMAuth user and VMAgent scrape-object selection beyond the object's own namespace. */
  crossNamespaceSelectors: boolean;
  /** extraArgs flags naming addresses or configuration sources, vmBackup destinations (./other-destinations.ts). */
  otherDestinations: boolean;
}

/** Nothing enabled: overlays on existing objects, routes, writes and selection within the namespace, official images. */
export const STRICT_TRUST_POLICY: TrustPolicy = {
  createNamespaces: [],
  crossNamespaceTargetRefs: false,
  routeHosts: [],
  remoteWriteHosts: [],
  imageRepositories: [],
  serviceAccountNames: [],
  hostAccess: false,
  extraContainers: false,
  crossNamespaceSelectors: false,
  otherDestinations: false,
};

/** The chart value that allows each part of the policy (charts/vmrollout/values.yaml). */
export const CHART_VALUE: Readonly<Record<keyof TrustPolicy, string>> = {
  createNamespaces: 'createNamespaces',
  crossNamespaceTargetRefs: 'allowCrossNamespaceTargetRefs',
  routeHosts: 'trustPolicy.allowedRouteHosts',
  remoteWriteHosts: 'trustPolicy.allowedRemoteWriteHosts',
  imageRepositories: 'trustPolicy.allowedImageRepositories',
  serviceAccountNames: 'trustPolicy.allowedServiceAccountNames',
  hostAccess: 'trustPolicy.allowHostAccess',
  extraContainers: 'trustPolicy.allowExtraContainers',
  crossNamespaceSelectors: 'trustPolicy.allowCrossNamespaceSelectors',
  otherDestinations: 'trustPolicy.allowOtherDestinations',
};

/** The end of every denial: which chart value allows it. */
export const allowedBy = (part: keyof TrustPolicy) => `(vmrollout's chart value ${CHART_VALUE[part]})`;
