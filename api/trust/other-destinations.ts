// Where data can go, or configuration come from, that the URL rules (./route-urls.ts,
// ./remote-write.ts) cannot judge host by host:
//   - extraArgs flags of any component that name an address or a configuration source: vmagent
//     -remoteWrite.url and -promscrape.config (a file or a URL), vminsert/vmselect -storageNode and
//     -selectNode (the cluster's members: every write or read), vmauth -auth.config (all of its
//     routes), relabeling and stream aggregation configs, -envflag.enable (then extraEnvs set any
//     flag), vmbackup -dst and -customS3Endpoint;
//   - a VMCluster's vmBackup destination, customS3Endpoint and snapshot URLs (every sample of the
//     storage node, copied out);
//   - a VMAgent's apiServerConfig, inlineScrapeConfig and additionalScrapeConfigs: discovery and
//     scrape configs written by hand may send credentials, the pod's ServiceAccount token file
//     included, to any host.
// All need trustPolicy.allowOtherDestinations.
import { ownValue } from '../data-object';
import type { ValidationIssue } from '../validate';
import { formatPath } from '../validate';
import type { ManagedBody } from './bodies';
import { allowedBy, type TrustPolicy } from './policy';
import { forEachObject, objectAt } from './walk';

/** Flags by their last dot-separated part, lowercase, leading dashes dropped (remoteWrite.url → "url"). */
const FLAG_ENDINGS = new Set([
  'url',
  'urls',
  'proxyurl',
  'config',
  'relabelconfig',
  'urlrelabelconfig',
  'storagenode',
  'selectnode',
  'dst',
  'customs3endpoint',
]);
/** Whole flag names (lowercase) that are not found by their ending. */
const FLAGS = new Set(['envflag.enable']);
const BACKUP_FIELDS = ['destination', 'customS3Endpoint', 'snapshotCreateURL', 'snapshotDeleteURL'];
const VMAGENT_FIELDS = ['apiServerConfig', 'inlineScrapeConfig', 'additionalScrapeConfigs'];

/** Whether extraArgs key `flag` names an address or a configuration source. */
export function isDestinationFlag(flag: string): boolean {
  const name = flag.replace(/^-+/, '').toLowerCase();
  return FLAGS.has(name) || FLAG_ENDINGS.has(name.slice(name.lastIndexOf('.') + 1));
}

export function otherDestinationIssues(_namespace: string, b: ManagedBody, policy: TrustPolicy): ValidationIssue[] {
  if (policy.otherDestinations) return [];
  const issues: ValidationIssue[] = [];
  for (const field of b.kind === 'VMAgent' ? VMAGENT_FIELDS : []) {
    const v = ownValue(b.body, field);
    if (v !== undefined && v !== null && v !== '') {
      issues.push({ path: formatPath([...b.path, field]), message: `${field} may send credentials to any host ${allowedBy('otherDestinations')}` });
    }
  }
  forEachObject(b.body, (obj, at) => {
    const args = objectAt(obj, 'extraArgs');
    for (const flag of args ? Object.keys(args) : []) {
      if (isDestinationFlag(flag)) {
        issues.push({
          path: formatPath([...b.path, ...at(), 'extraArgs', flag]),
          message: `extraArgs flag ${JSON.stringify(flag)} names where data goes or where configuration comes from ${allowedBy('otherDestinations')}`,
        });
      }
    }
    const backup = objectAt(obj, 'vmBackup');
    for (const field of backup ? BACKUP_FIELDS : []) {
      const v = ownValue(backup!, field);
      if (typeof v === 'string' && v !== '') {
        issues.push({
          path: formatPath([...b.path, ...at(), 'vmBackup', field]),
          message: `vmBackup ${field} copies the storage out ${allowedBy('otherDestinations')}`,
        });
      }
    }
  });
  return issues;
}
