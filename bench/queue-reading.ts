// How the cost of reading one zone's backlog from a vmagent /metrics page grows with the
// number of remote writes (and so the page size), and what the `url`-label fallback costs
// against `path` matching. Prints JSON; compares ratios within one run, never absolute times.
// Run: npx tsx bench/queue-reading.ts [--quick]
import { queueDirName, type RemoteWriteQueue } from '../activities/vmagent/url';
import { readZoneQueues } from '../activities/vmagent/match';
import { provenance } from './support/provenance';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 9;
const MIN_ROUND_MS = quick ? 20 : 200;

/** A vmagent page: `unrelated` ordinary series plus the queue series of `remoteWrites` entries. */
async function vmagentPage(remoteWrites: number, showURL: boolean, withPath: boolean): Promise<{ text: string; queues: RemoteWriteQueue[] }> {
  const lines: string[] = [];
  for (let i = 0; i < 1500; i++) lines.push(`vm_http_requests_total{path="/p${i}"} ${i}`);
  const queues: RemoteWriteQueue[] = [];
  lines.push('# TYPE vmagent_remotewrite_pending_data_bytes gauge');
  for (let i = 0; i < remoteWrites; i++) {
    const url = `http://vminsert-zone${i}.vm.svc:8480/insert/0/prometheus/api/v1/write`;
    const dirName = await queueDirName(i, url);
    queues.push({ index: i, url, dirName });
    const urlLabel = showURL ? `${i + 1}:${url}` : `${i + 1}:secret-url`;
    const pathLabel = withPath ? `path="/vmagent-remotewrite-data/persistent-queue/${dirName}",` : '';
    lines.push(`vmagent_remotewrite_pending_data_bytes{${pathLabel}url="${urlLabel}"} ${i * 1024}`);
    for (const suffix of ['blocks_sent_total', 'bytes_sent_total', 'send_duration_seconds_total', 'retries_count_total']) {
      lines.push(`vmagent_remotewrite_${suffix}{url="${urlLabel}"} ${i}`);
    }
  }
  return { text: lines.join('\n') + '\n', queues };
}

/** Median nanoseconds per call of fn over ROUNDS rounds of at least MIN_ROUND_MS each. */
function measure(fn: () => unknown): number {
  for (let i = 0; i < 20; i++) fn();
  const perCall: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    let calls = 0;
    const start = process.hrtime.bigint();
    let elapsed = 0n;
    while (elapsed < BigInt(MIN_ROUND_MS) * 1_000_000n) {
      fn();
      calls++;
      elapsed = process.hrtime.bigint() - start;
    }
    perCall.push(Number(elapsed) / calls);
  }
  perCall.sort((a, b) => a - b);
  return perCall[Math.floor(perCall.length / 2)]!;
}

async function main(): Promise<void> {
  const runInfo = provenance();
  const sizes = [3, 12, 48];
  const byPath: Record<string, number> = {};
  for (const n of sizes) {
    const { text, queues } = await vmagentPage(n, false, true);
    const last = queues[n - 1]!;
    byPath[n] = measure(() => {
      const r = readZoneQueues(text, [last]);
      if (!r.ok) throw new Error(r.message);
    });
  }
  const noPath = await vmagentPage(12, false, false);
  const urlFallbackNs = measure(() => {
    const r = readZoneQueues(noPath.text, [noPath.queues[11]!]);
    if (!r.ok || r.matchedBy !== 'url') throw new Error('expected a url-label match');
  });
  const result = {
    benchmark: 'queue-reading',
    ...runInfo,
    rounds: ROUNDS,
    nsPerRead: byPath,
    ratios: {
      remoteWrites48vs3: byPath[48]! / byPath[3]!,
      remoteWrites12vs3: byPath[12]! / byPath[3]!,
      urlFallbackVsPath12: urlFallbackNs / byPath[12]!,
    },
  };
  console.log(JSON.stringify(result, null, 2));
}

void main();
