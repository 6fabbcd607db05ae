// The release's artefacts (scripts/release.sh) as the tests use them: `make test` builds them for
// the checkout's version into .tmp/release (VMROLLOUT_RELEASE_DIR elsewhere). Missing artefacts fail
// the test that needs them, saying how to build them.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from './tools';

export const RELEASE_DIR = process.env.VMROLLOUT_RELEASE_DIR ?? path.join(REPO_ROOT, '.tmp', 'release');
export const CHECKOUT_VERSION = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

export interface ReleaseArtefacts {
  dir: string;
  chart: string;
  imageArchive: string;
  digest: string;
  sbom: string;
  plugin: string;
  pluginArchive: string;
  krewManifest: string;
  sums: string;
}

export function releaseArtefacts(version = CHECKOUT_VERSION): ReleaseArtefacts {
  const dir = path.join(RELEASE_DIR, version);
  const a: ReleaseArtefacts = {
    dir,
    chart: path.join(dir, `vmrollout-${version}.tgz`),
    imageArchive: path.join(dir, `vmrollout-${version}.oci.tar`),
    digest: path.join(dir, `vmrollout-${version}.oci.digest`),
    sbom: path.join(dir, `vmrollout-${version}.spdx.json`),
    plugin: path.join(dir, 'kubectl-vmdc'),
    pluginArchive: path.join(dir, `kubectl-vmdc-${version}.tar.gz`),
    krewManifest: path.join(dir, 'vmdc.yaml'),
    sums: path.join(dir, 'SHA256SUMS'),
  };
  const missing = Object.entries(a).filter(([, p]) => !fs.existsSync(p));
  if (missing.length > 0) {
    throw new Error(
      `release artefacts of ${version} missing in ${dir}: ${missing.map(([k]) => k).join(', ')}; ` +
        `build them with RELEASE_DIR=${RELEASE_DIR} scripts/release.sh ${version} (make test does)`,
    );
  }
  return a;
}

/** The OCI archive's one image: its reference name (`org.opencontainers.image.ref.name`) and manifest digest. */
export function archivedImage(archive: string): { refName: string | undefined; digest: string } {
  const index = JSON.parse(execFileSync('tar', ['-xOf', archive, 'index.json'], { encoding: 'utf8' })) as {
    manifests: Array<{ digest: string; annotations?: Record<string, string> }>;
  };
  if (index.manifests.length !== 1) throw new Error(`${archive}: index.json lists ${index.manifests.length} manifests, not 1`);
  const m = index.manifests[0]!;
  return { refName: m.annotations?.['org.opencontainers.image.ref.name'], digest: m.digest };
}
