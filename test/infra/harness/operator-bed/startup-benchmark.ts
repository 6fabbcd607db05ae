/**
 * The real-operator bed's start-up time: from nothing to the demo's VM objects served by the
 * operator's pods (every vmauth pod loaded the config with every zone), each part's time, as JSON
 * (stdout and `--out <file>`). Run inside the bed's namespace:
 *   test/infra/harness/operator-bed/in-netns.sh npx tsx test/infra/harness/operator-bed/startup-benchmark.ts --out docs/results/operator-bed-startup.json
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { DEMO_CLUSTERS, V1 } from '../../../e2e/support';
import { stopAll } from '../processes';
import { applyDemo } from './demo';
import { startRealOperatorBed } from '.';

async function main(): Promise<void> {
  const out = process.argv.includes('--out') ? process.argv[process.argv.indexOf('--out') + 1] : undefined;
  const runs = Number(process.argv.includes('--runs') ? process.argv[process.argv.indexOf('--runs') + 1] : 1);
  const results: Array<Record<string, number>> = [];
  for (let i = 0; i < runs; i++) {
    const t0 = Date.now();
    const bed = await startRealOperatorBed({ namespace: 'default', zones: DEMO_CLUSTERS, vmauth: 'vm-global' });
    await applyDemo(bed, { namespace: 'default', initialVersion: V1, vmauthPods: 2, vmdcName: 'bench' });
    results.push({ ...bed.timings, 'demo objects served by the operator pods': Date.now() - t0 });
    await bed.stop();
  }
  const doc = {
    benchmark: 'operator-bed-startup',
    what: "test/infra/harness/operator-bed: etcd + kube-apiserver, kube-controller-manager, kube-scheduler, kwok, the operator's CRDs and manager, zones, kubelet and DNS stand-ins, then the demo's VM objects until every vmauth pod (2) loaded the operator's config with every zone (3); ms from the start",
    commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim(),
    date: new Date().toISOString(),
    machine: { nproc: os.cpus().length, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version },
    command:
      'test/infra/harness/operator-bed/in-netns.sh npx tsx test/infra/harness/operator-bed/startup-benchmark.ts --runs 3 --out docs/results/operator-bed-startup.json',
    runs: results,
    medianMs: Object.fromEntries(Object.keys(results[0]!).map((k) => [k, results.map((r) => r[k]!).sort((a, b) => a - b)[Math.floor(results.length / 2)]])),
  };
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  process.stdout.write(text);
  if (out) fs.writeFileSync(out, text);
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => void stopAll().then(() => process.exit()));
