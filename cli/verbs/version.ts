// `kubectl vmdc version [-o json|yaml]`: the plugin's version and, when the cluster answers, the
// versions of the VMDistributedCluster API it serves (API discovery, which every authenticated
// user may read: no RBAC on CustomResourceDefinitions needed).
import * as k8s from '@kubernetes/client-node';
import { GROUP, PLURAL } from '../../api/constants';
import { describeError } from '../../kube/errors';
import { REQUEST_TIMEOUT_MS, withRequestTimeout } from '../../kube/request-timeout';
import type { Command } from '../args';
import { EXIT } from '../exit-codes';
import type { Io } from '../io';
import { loadKube } from '../kube';
import { isDocument, renderDocument } from '../output';
import { pluginVersion } from '../plugin-version';

type VersionCommand = Extract<Command, { verb: 'version' }>;

export interface ServedApi {
  /** Unset: the cluster could not be asked (`error` says why). */
  servedVersions?: string[];
  preferredVersion?: string;
  error?: string;
}

export function versionDocument(plugin: string, server: string, api: ServedApi) {
  return {
    plugin: { version: plugin },
    cluster: {
      server,
      crd: `${PLURAL}.${GROUP}`,
      servedVersions: api.servedVersions ?? null,
      preferredVersion: api.preferredVersion ?? null,
      error: api.error ?? null,
    },
  };
}

export function versionLines(doc: ReturnType<typeof versionDocument>): string[] {
  const c = doc.cluster;
  const served =
    c.error !== null
      ? `not asked: ${c.error}`
      : c.servedVersions?.length
        ? `served ${c.servedVersions.join(', ')} (preferred ${c.preferredVersion ?? '-'})`
        : 'not installed (the API group is not served)';
  return [`Plugin:   kubectl-vmdc ${doc.plugin.version}`, `Cluster:  ${c.server}`, `CRD:      ${c.crd}: ${served}`];
}

async function servedApi(kc: k8s.KubeConfig): Promise<ServedApi> {
  try {
    const groups = await kc.makeApiClient(k8s.ApisApi).getAPIVersions(withRequestTimeout(REQUEST_TIMEOUT_MS));
    const group = groups.groups.find((g) => g.name === GROUP);
    return group
      ? { servedVersions: group.versions.map((v) => v.version), ...(group.preferredVersion ? { preferredVersion: group.preferredVersion.version } : {}) }
      : { servedVersions: [] };
  } catch (err) {
    return { error: describeError(err) };
  }
}

export async function version(cmd: VersionCommand, io: Io): Promise<number> {
  const kube = loadKube(cmd.kube, cmd.verb);
  const doc = versionDocument(pluginVersion(), kube.kc.getCurrentCluster()?.server ?? '-', await servedApi(kube.kc));
  if (isDocument(cmd.output)) io.print(renderDocument(doc, cmd.output));
  else for (const line of versionLines(doc)) io.print(line);
  return EXIT.ok;
}
