// What the objects' pods run and may touch, wherever the operator's specs put it (every component
// of a VMCluster, its vmbackup and request load balancer, a VMAuth, a VMAgent: found by field name
// anywhere in the body, so no component is missed):
//   - `image` ({repository, tag}: the repository must be an official VictoriaMetrics one or in
//     trustPolicy.allowedImageRepositories; the tag is free: setting versions is what vmrollout is
//     for), image references (containers' `image`, configReloaderImage, configReloaderImageTag);
//   - serviceAccountName (trustPolicy.allowedServiceAccountNames);
//   - host access (trustPolicy.allowHostAccess): hostNetwork/hostPID/hostIPC, privileged, added
//     capabilities, an unmasked procMount, volumes other than SAFE_VOLUME_SOURCES (hostPath, nfs,
//     csi ...), hostAliases and DNS settings, which would make a host the URL rules accepted
//     resolve elsewhere;
//   - containers / initContainers (trustPolicy.allowExtraContainers): the operator adds them to the
//     pods, or patches its own containers (command, image, mounts) by name.
import { ownValue } from '../data-object';
import type { JsonObject } from '../types';
import type { ValidationIssue } from '../validate';
import { formatPath } from '../validate';
import type { ManagedBody } from './bodies';
import { allowedBy, type TrustPolicy } from './policy';
import { forEachObject, isObject, type Path } from './walk';

/** Allowed in every policy: where the operator's default images come from (internal/config/config.go). */
export const OFFICIAL_IMAGE_REPOSITORIES: readonly string[] = ['victoriametrics/*', 'docker.io/victoriametrics/*', 'quay.io/victoriametrics/*'];

const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
/** A repository as the OCI distribution spec writes it: an optional registry host[:port], then path components. */
const REPOSITORY = new RegExp(`^(?:[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?(?::[0-9]+)?/)?${COMPONENT}(?:/${COMPONENT})*$`);

/** Why `entry` cannot be an allowedImageRepositories entry (a repository, or one followed by "/*"), or undefined. */
export function repositoryEntryProblem(entry: string): string | undefined {
  return REPOSITORY.test(entry.endsWith('/*') ? entry.slice(0, -2) : entry)
    ? undefined
    : `${JSON.stringify(entry)} is not an image repository (or repository/*)`;
}

/** Whether `repository` is allowed: exactly an entry, or below an entry ending in "/*". Case-sensitive, as repositories are. */
export function repositoryAllowed(repository: string, extra: readonly string[]): boolean {
  if (!REPOSITORY.test(repository)) return false;
  return [...OFFICIAL_IMAGE_REPOSITORIES, ...extra].some((e) => (e.endsWith('/*') ? repository.startsWith(e.slice(0, -1)) : repository === e));
}

/** The repository of an image reference `repo[:tag][@digest]`. */
export function referenceRepository(ref: string): string {
  const noDigest = ref.split('@', 1)[0]!;
  const colon = noDigest.lastIndexOf(':');
  return colon > noDigest.lastIndexOf('/') ? noDigest.slice(0, colon) : noDigest;
}

/** Volume sources that stay inside the pod's namespace and node-independent. */
const SAFE_VOLUME_SOURCES = new Set(['name', 'configMap', 'secret', 'emptyDir', 'persistentVolumeClaim', 'projected', 'downwardAPI', 'ephemeral']);
const HOST_FLAGS = ['hostNetwork', 'hostPID', 'hostIPC'];
const HOST_LISTS = ['hostAliases', 'host_aliases'];
/** dnsPolicy values that keep cluster DNS first (None and Default resolve Service names elsewhere). */
const CLUSTER_DNS = new Set(['ClusterFirst', 'ClusterFirstWithHostNet']);

const nonEmptyList = (v: unknown) => Array.isArray(v) && v.length > 0;

export function podFieldIssues(_namespace: string, b: ManagedBody, policy: TrustPolicy): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const deny = (at: Path, message: string) => issues.push({ path: formatPath([...b.path, ...at]), message });
  const checkRepository = (repository: string, at: Path) => {
    if (repository !== '' && !repositoryAllowed(repository, policy.imageRepositories)) {
      deny(
        at,
        `image repository ${JSON.stringify(repository)} is not an official VictoriaMetrics repository nor an allowed one ${allowedBy('imageRepositories')}`,
      );
    }
  };
  forEachObject(b.body, (obj: JsonObject, at) => {
    const image = ownValue(obj, 'image');
    if (isObject(image)) {
      const repository = ownValue(image, 'repository');
      if (typeof repository === 'string') checkRepository(repository, [...at(), 'image', 'repository']);
    } else if (typeof image === 'string') checkRepository(referenceRepository(image), [...at(), 'image']);
    for (const field of ['configReloaderImage', 'configReloaderImageTag']) {
      const ref = ownValue(obj, field);
      if (typeof ref === 'string') checkRepository(referenceRepository(ref), [...at(), field]);
    }

    const sa = ownValue(obj, 'serviceAccountName');
    if (typeof sa === 'string' && sa !== '' && !policy.serviceAccountNames.includes(sa)) {
      deny([...at(), 'serviceAccountName'], `pods running as ServiceAccount ${JSON.stringify(sa)} are not allowed ${allowedBy('serviceAccountNames')}`);
    }

    if (!policy.hostAccess) {
      const hostAccess = (field: Path, what: string) => deny([...at(), ...field], `${what} reaches the node or its network ${allowedBy('hostAccess')}`);
      for (const f of HOST_FLAGS) if (ownValue(obj, f) === true) hostAccess([f], f);
      for (const f of HOST_LISTS) if (nonEmptyList(ownValue(obj, f))) hostAccess([f], `${f} (names resolved to addresses of the spec's choosing)`);
      const dnsPolicy = ownValue(obj, 'dnsPolicy');
      if (typeof dnsPolicy === 'string' && !CLUSTER_DNS.has(dnsPolicy))
        hostAccess(['dnsPolicy'], `dnsPolicy ${JSON.stringify(dnsPolicy)} (Service names resolved outside cluster DNS)`);
      const dnsConfig = ownValue(obj, 'dnsConfig');
      if (isObject(dnsConfig)) {
        for (const f of ['nameservers', 'searches'])
          if (nonEmptyList(ownValue(dnsConfig, f))) hostAccess(['dnsConfig', f], `dnsConfig.${f} (names resolved elsewhere)`);
      }
      // The operator's securityContext inlines a container's: privileged and added capabilities
      // reach the node from the operator's own containers, not only from extra ones.
      if (ownValue(obj, 'privileged') === true) hostAccess(['privileged'], 'a privileged container');
      const capabilities = ownValue(obj, 'capabilities');
      if (isObject(capabilities) && nonEmptyList(ownValue(capabilities, 'add'))) hostAccess(['capabilities', 'add'], 'added capabilities');
      const procMount = ownValue(obj, 'procMount');
      if (typeof procMount === 'string' && procMount !== 'Default') hostAccess(['procMount'], `procMount ${JSON.stringify(procMount)}`);
      const volumes = ownValue(obj, 'volumes');
      if (Array.isArray(volumes)) {
        volumes.forEach((v, i) => {
          if (!isObject(v)) return;
          for (const source of Object.keys(v)) {
            if (!SAFE_VOLUME_SOURCES.has(source)) hostAccess(['volumes', i, source], `a ${source} volume`);
          }
        });
      }
    }

    if (!policy.extraContainers) {
      for (const f of ['containers', 'initContainers']) {
        if (nonEmptyList(ownValue(obj, f))) deny([...at(), f], `${f} add to or patch the containers the operator runs ${allowedBy('extraContainers')}`);
      }
    }
  });
  return issues;
}
