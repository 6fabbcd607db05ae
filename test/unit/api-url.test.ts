// api/url.ts: the remoteWriteURL grammar, its normalized form and its redaction.
import fc from 'fast-check';
import { checkHttpURL, HTTP_URL_MESSAGE, HTTP_URL_PATTERN, isHttpURL, normalizeURL, redactURL, redactURLsIn } from '../../api/url';
import { nearValidURL } from '../fixtures/bad-specs';
import { assertProperty } from '../support/property';

const VALID = [
  'http://lb',
  'http://lb/',
  'https://lb.example.com/insert/0/prometheus/api/v1/write',
  'http://vminsert-vm-az-a.monitoring.svc.cluster.local.:8480/insert/0/prometheus/api/v1/write',
  'http://LB.Example.COM:8480/Write',
  'http://1a.b/x',
  'http://a.1b/x',
  'http://10.0.0.1:1/x',
  'http://255.255.255.255:65535/x',
  'http://[::1]/x',
  'http://[2001:db8::8a2e:370:7334]:8480/x',
  'http://[::ffff:192.0.2.1]/x',
  'http://[FE80::1]/x',
  'https://user:secret@lb.example.com/write',
  'https://us%40er:p%3Ass:w@lb.example.com/write',
  "http://lb/a!$&'()*+,;=:@b/~c._-d/%2F",
  'http://lb/x?',
  'http://lb?extra_label=zone%3Da&x=/y?z',
];

const INVALID: [string, string][] = [
  ['', 'no http:// or https:// scheme'],
  ['lb.example.com/write', 'no http:// or https:// scheme'],
  ['http:lb/w', 'must be followed by "://"'],
  ['HTTP://lb/w', 'the scheme must be lowercase'],
  ['ftp://lb/w', 'scheme "ftp" is not http or https'],
  ['http://lb /w', 'contains whitespace'],
  ['http://lb/w\n', 'contains whitespace'],
  ['http://lb/wä', 'control or non-ASCII character'],
  ['http://lb/w#x', '#fragment'],
  ['http://lb/%zz', 'valid percent-escape'],
  ['http://lb/%2', 'valid percent-escape'],
  ['http://@lb/w', 'user information before "@" is empty'],
  ['http://a@b@lb/w', 'unescaped "@"'],
  ['http:///w', 'no host'],
  ['http://u:p@/w', 'no host'],
  ['http://lb:/w', 'the port is not a number'],
  ['http://lb:8a/w', 'the port is not a number'],
  ['http://lb:99999/w', 'the port is outside 1-65535'],
  ['http://lb:0/w', 'the port is outside 1-65535'],
  ['http://user:hun/ter2@lb/w', 'the port is not a number'],
  ['http://lb:08480/w', 'leading zero'],
  ['http://-lb/w', 'the host is not'],
  ['http://lb_1/w', 'the host is not'],
  ['http://999.1.1.1/w', 'the host is not'],
  ['http://10.0.0/w', 'the host is not'],
  ['http://[::1/w', 'the host is not'],
  ['http://[:::1]/w', 'the host is not'],
  ['http://u{}@lb/w', 'user information has a character'],
  ['http://lb/{w}', 'path or query has a character'],
  ['http://lb/w?a[]=1', 'path or query has a character'],
];

describe('the remoteWriteURL grammar', () => {
  it.each(VALID)('accepts %s', (url) => {
    expect(isHttpURL(url)).toBe(true);
    expect(checkHttpURL(url)).toBeUndefined();
    // Every URL of the grammar is a URL to WHATWG (Node) too, with the same host.
    const parsed = new URL(url);
    expect(['http:', 'https:']).toContain(parsed.protocol);
    expect(parsed.hostname.length).toBeGreaterThan(0);
  });

  it.each(INVALID)('rejects %j: %s', (url, why) => {
    expect(isHttpURL(url)).toBe(false);
    const message = checkHttpURL(url);
    expect(message).toContain(HTTP_URL_MESSAGE);
    expect(message).toContain(why);
  });

  it('the pattern uses only what RE2 and JavaScript read alike', () => {
    // No lookaround, backreferences, lazy quantifiers, negated classes or \d \s \w classes.
    expect(HTTP_URL_PATTERN).not.toMatch(/\(\?[=!<]|\\[1-9]|[*+?}]\?|\[\^|\\[dswDSW]/);
    expect(HTTP_URL_PATTERN).not.toContain('"'); // it is embedded in a CEL raw string r"..."
    // Bounded repetitions stay far below RE2's limit of 1000.
    for (const m of HTTP_URL_PATTERN.matchAll(/\{(\d+)(?:,(\d+))?\}/g)) expect(Number(m[2] ?? m[1])).toBeLessThan(1000);
  });

  it('never echoes credentials in its reasons', () => {
    const password = fc.stringMatching(/^[A-Za-z0-9/?#@:% ]{1,12}$/);
    assertProperty(
      fc.property(nearValidURL, password, (url, pw) => {
        const withCreds = url.replace(/^([A-Za-z]*:?\/*)/, `$1user:S3${pw}@`);
        const message = checkHttpURL(withCreds) ?? '';
        expect(message).not.toContain(`S3${pw}`);
      }),
      { numRuns: 300 },
    );
  });
});

describe('normalizeURL', () => {
  it.each([
    ['http://LB.Example.COM/x', 'http://lb.example.com/x'],
    ['http://lb:80/x', 'http://lb/x'],
    ['https://lb:443/x', 'https://lb/x'],
    ['http://lb:443/x', 'http://lb:443/x'],
    ['https://lb:80/x', 'https://lb:80/x'],
    ['http://lb:8080/x', 'http://lb:8080/x'],
    ['http://lb', 'http://lb/'],
    ['http://lb?q=1', 'http://lb/?q=1'],
    ['http://lb/X/Y?Q=A', 'http://lb/X/Y?Q=A'],
    ['http://lb/x/', 'http://lb/x/'],
    ['http://User:PW@LB:80/x', 'http://User:PW@lb/x'],
    ['http://[FE80::1]:80/x', 'http://[fe80::1]/x'],
    ['http://[::80]/x', 'http://[::80]/x'],
    ['ftp://LB/x', 'ftp://LB/x'],
    ['not a url', 'not a url'],
  ])('%s → %s', (url, normalized) => {
    expect(normalizeURL(url)).toBe(normalized);
  });

  it('is idempotent and keeps a valid URL valid', () => {
    assertProperty(
      fc.property(nearValidURL, (url) => {
        const n = normalizeURL(url);
        expect(normalizeURL(n)).toBe(n);
        if (isHttpURL(url)) expect(isHttpURL(n)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('equal normalized forms are the same endpoint for WHATWG URL too', () => {
    assertProperty(
      fc.property(nearValidURL, nearValidURL, (a, b) => {
        if (!isHttpURL(a) || !isHttpURL(b) || normalizeURL(a) !== normalizeURL(b)) return;
        const [x, y] = [new URL(a), new URL(b)];
        expect([y.protocol, y.host, y.username, y.password]).toEqual([x.protocol, x.host, x.username, x.password]);
      }),
      { numRuns: 300, examples: [['http://LB:80/x', 'http://lb/x']] },
    );
  });
});

describe('redactURL', () => {
  it.each([
    ['https://user:hunter2@lb.example.com/write', 'https://***@lb.example.com/write'],
    ['https://hunter2@lb.example.com/write', 'https://***@lb.example.com/write'],
    ['http://lb.example.com/a@b', 'http://lb.example.com/a@b'],
    ['http://lb.example.com/write', 'http://lb.example.com/write'],
    // Outside the grammar: everything up to the last "@" goes.
    ['http://user:hun/ter2@lb/write', 'http://***@lb/write'],
    ['http://user:hunter2 @lb/write', 'http://***@lb/write'],
    ['HTTPS://user:hunter2@lb/write', 'HTTPS://***@lb/write'],
    ['user:hunter2@lb:8480', '***@lb:8480'],
    ['', ''],
  ])('%s → %s', (url, redacted) => {
    expect(redactURL(url)).toBe(redacted);
  });

  it('never shows what was between "://" and the "@" before the host', () => {
    const secret = fc.stringMatching(/^[A-Za-z0-9._~!$&'()*+,;=:%-]{1,20}$/).filter((x) => !/%(?![0-9A-Fa-f]{2})/.test(x));
    assertProperty(
      fc.property(secret, nearValidURL, (userinfo, url) => {
        const withCreds = url.replace(/^(https?:\/\/)/, `$1${userinfo}X@`);
        const out = redactURL(withCreds);
        expect(out).not.toContain(`${userinfo}X@`);
        expect(redactURLsIn(`failed to write to ${withCreds}: timeout`)).not.toContain(`${userinfo}X@`);
      }),
      { numRuns: 300 },
    );
  });

  it('redacts every URL in a text and leaves the rest alone', () => {
    expect(redactURLsIn('remote write https://a:b@lb/x and "http://c:d@lb2:80/y" failed (mail me@example.com)')).toBe(
      'remote write https://***@lb/x and "http://***@lb2:80/y" failed (mail me@example.com)',
    );
    expect(redactURLsIn('no URL here')).toBe('no URL here');
  });
});
