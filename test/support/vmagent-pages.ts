// The real vmagent v1.150.0 /metrics pages of test/fixtures/vmagent, read once for every test that
// needs one. They were captured with both backends unreachable, so each remote write still holds
// blocks in a send-retry backoff (errors_total above retries_count_total): `settled` is the same page
// as it reads once every failed send has been re-sent, for tests about something else than backoff.
import * as fs from 'node:fs';
import * as path from 'node:path';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'vmagent');

/** Remote writes U1 and U2 with masked URLs, -remoteWrite.queues=1: 210 pending bytes each, 1 block in backoff each. */
export const SECRET_PAGE = fs.readFileSync(path.join(FIXTURES, 'vmagent-v1.150.0-metrics.txt'), 'utf8');
/** The same with -remoteWrite.showURL and the default queues: 0 pending bytes, 4 and 3 blocks in backoff. */
export const SHOWURL_PAGE = fs.readFileSync(path.join(FIXTURES, 'vmagent-v1.150.0-showurl-metrics.txt'), 'utf8');

/** Remote writes U1 and U2 with -remoteWrite.maxDiskUsagePerURL=600MB,1GiB and -remoteWrite.disableOnDiskQueue=false,true. */
export const LIMITS_PAGE = fs.readFileSync(path.join(FIXTURES, 'vmagent-v1.150.0-limits-metrics.txt'), 'utf8');

/** Two unreachable URLs, the second in memory only (-remoteWrite.disableOnDiskQueue=false,true) and full: 19 samples dropped for it. */
export const DROPS_PAGE = fs.readFileSync(path.join(FIXTURES, 'vmagent-v1.150.0-drops-metrics.txt'), 'utf8');

/** `page` with every errors_total value lowered to its remote write's retries_count_total value. */
export function settled(page: string): string {
  const retries = new Map<string, string>();
  for (const m of page.matchAll(/^vmagent_remotewrite_retries_count_total\{url="([^"]*)"\} (\S+)$/gm)) retries.set(m[1]!, m[2]!);
  return page.replace(/^(vmagent_remotewrite_errors_total\{url="([^"]*)"\}) \S+$/gm, (line, series: string, url: string) => {
    const value = retries.get(url);
    if (value === undefined) throw new Error(`fixture: no retries_count_total for ${url}`);
    return `${series} ${value}`;
  });
}
