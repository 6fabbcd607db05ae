// Shared fixtures for the api-* unit tests.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { validateSpec } from '../../api/validate';
import type { NormalizedSpec } from '../../api/types';

export const ROOT = resolve(__dirname, '..', '..');
export const EXAMPLES_DIR = join(ROOT, 'examples');

/** The smallest valid spec: two bare zone references, everything else defaulted. */
export function minimalRawSpec(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    clusterVersion: 'v1',
    zones: [
      { name: 'a', vmcluster: { name: 'a' } },
      { name: 'b', vmcluster: { name: 'b' } },
    ],
    vmauth: { name: 'x' },
    vmagent: { name: 'x' },
    ...extra,
  };
}

/** A valid spec in raw (custom resource) form, a fresh copy per call; tests mutate it. */
export function validRawSpec(): Record<string, unknown> {
  return {
    paused: false,
    clusterVersion: 'v1.150.0-cluster',
    overrideSpec: { retentionPeriod: '30d' },
    zones: [
      { name: 'az-a', vmcluster: { name: 'vm-az-a', overrideSpec: { vmstorage: { replicaCount: 3 } } }, vmuser: { name: 'reads-az-a' } },
      { name: 'az-b', vmcluster: { name: 'vm-az-b' }, vmuser: { name: 'reads-az-b' } },
      {
        name: 'az-c',
        vmcluster: { name: 'vm-az-c', spec: { replicationFactor: 1, vmstorage: { replicaCount: 2 } } },
        remoteWriteURL: 'http://lb.az-c.local:8480/insert/0/prometheus/api/v1/write',
      },
    ],
    vmauth: { name: 'vm-global' },
    vmagent: { name: 'vm-global' },
    strategy: { order: 'Declared', readDrainDelay: '10s', queueDrainedFor: '30s', pollInterval: '1s', zoneTimeout: '10m' },
  };
}

/** validateSpec's normalized spec of `raw`, which must be valid. */
export function normalizedSpec(raw: unknown): NormalizedSpec {
  const v = validateSpec(raw);
  if (!v.success) throw new Error(`expected a valid spec: ${JSON.stringify(v.issues)}`);
  return v.spec;
}

/** Every `examples/*.yaml` document: [file, object]. */
export function exampleObjects(): [string, Record<string, unknown>][] {
  const out: [string, Record<string, unknown>][] = [];
  for (const file of readdirSync(EXAMPLES_DIR)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()) {
    for (const doc of parseAllDocuments(readFileSync(join(EXAMPLES_DIR, file), 'utf8'))) {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
      out.push([file, doc.toJS() as Record<string, unknown>]);
    }
  }
  return out;
}

/** The ```yaml blocks of a Markdown file, parsed. */
export function markdownYamlBlocks(markdown: string): unknown[] {
  const blocks: unknown[] = [];
  const re = /```ya?ml\n([\s\S]*?)```/g;
  for (let m = re.exec(markdown); m; m = re.exec(markdown)) blocks.push(parse(m[1] ?? ''));
  return blocks;
}
