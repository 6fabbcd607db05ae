// Writes the VMDistributedCluster CRD generated from api/spec-schema.ts and api/status-schema.ts into the Helm chart.
// Usage: npm run gen:crd   (add --check to fail instead of writing when the file is out of date)
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { CRD_PATH, renderCrdYaml } from '../api/crd';

const root = resolve(__dirname, '..');
const file = resolve(root, CRD_PATH);
const text = renderCrdYaml();

if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    // missing: out of date
  }
  if (current !== text) {
    console.error(`${CRD_PATH} is out of date: run npm run gen:crd`);
    process.exit(1);
  }
  console.log(`${CRD_PATH} is up to date`);
} else {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  console.log(`wrote ${CRD_PATH}`);
}
