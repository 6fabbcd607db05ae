// vmrollout_build_info (process/build-info.ts) on both processes: the version is read from
// vmrollout's own package.json, found upwards from where the code runs (the checkout's root from
// sources, /app from dist/<process>/ in the image), never from another package's.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { packageVersion, vmrolloutVersionOf } from '../../process/build-info';
import { createMetrics } from '../../trigger/metrics';

const ROOT = path.resolve(__dirname, '..', '..');
const OWN_VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

function tree(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vmrollout-build-info-'));
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.join(dir, path.dirname(file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

describe('the version', () => {
  it("is vmrollout's package.json version, and nothing else's", () => {
    expect(vmrolloutVersionOf(JSON.stringify({ name: 'vmrollout', version: '1.2.3' }))).toBe('1.2.3');
    expect(vmrolloutVersionOf(JSON.stringify({ name: 'prom-client', version: '15.0.0' }))).toBeUndefined();
    expect(vmrolloutVersionOf(JSON.stringify({ name: 'vmrollout', version: 7 }))).toBeUndefined();
    expect(vmrolloutVersionOf(JSON.stringify({ name: 'vmrollout' }))).toBeUndefined();
    expect(vmrolloutVersionOf('not json')).toBeUndefined();
    expect(vmrolloutVersionOf('null')).toBeUndefined();
  });

  it('from the sources: the checkout root', () => {
    expect(packageVersion(path.join(ROOT, 'process'))).toBe(OWN_VERSION);
  });

  it("from the image's layout: dist/<process>/ finds /app/package.json, past another package's", () => {
    const app = tree({
      'package.json': JSON.stringify({ name: 'vmrollout', version: '2.0.0' }),
      'dist/process/package.json': JSON.stringify({ name: 'something-else', version: '0.0.1' }),
    });
    expect(packageVersion(path.join(app, 'dist', 'process'))).toBe('2.0.0');
  });

  it('negative control: no vmrollout package.json above: "unknown", not a guess', () => {
    const elsewhere = tree({ 'a/package.json': JSON.stringify({ name: 'other', version: '1.0.0' }) });
    expect(packageVersion(path.join(elsewhere, 'a'))).toBe('unknown');
  });
});

describe('vmrollout_build_info of the trigger', () => {
  it('1, with the version and no build id (the trigger runs no Temporal worker)', async () => {
    expect(await createMetrics().registry.metrics()).toContain(`vmrollout_build_info{version="${OWN_VERSION}",build_id=""} 1`);
    expect(await createMetrics({ version: '3.1.4' }).registry.metrics()).toContain('vmrollout_build_info{version="3.1.4",build_id=""} 1');
  });
});
