// The remoteWriteURL grammar, its normalized form (for uniqueness) and its redaction (for display).
// Pure functions; the API server enforces the same grammar (the CRD's CEL rules are built here too),
// so a URL one side accepts is a URL the other side accepts.
//
// Grammar (RFC 3986, narrowed; ASCII only, case-sensitive where not said otherwise):
//
//   url       = scheme "://" [ userinfo "@" ] host [ ":" port ] [ path ] [ "?" query ]
//   scheme    = "http" | "https"                       (lowercase)
//   userinfo  = 1*( unreserved | sub-delims | ":" | pct-encoded )
//   host      = dns-name | IPv4address | "[" IPv6address "]"
//   dns-name  = *( label "." ) top-label [ "." ]        (letters in either case)
//   label     = alphanumerics and "-", not starting or ending with "-"
//   top-label = a label with at least one non-digit     (an all-digit last label must be an IPv4 address)
//   port      = 1..65535, no leading zero
//   path      = *( "/" *pchar )
//   query     = *( pchar | "/" | "?" )
//   pchar     = unreserved | sub-delims | ":" | "@" | pct-encoded
//   pct-encoded = "%" HEXDIG HEXDIG
//
// No whitespace, no fragment, no empty port, no percent sign that does not start a valid escape.
//
// The pattern below is written for both RE2 (the API server's CEL `matches()`) and JavaScript, using
// only constructs the two read the same way: ASCII character classes (no negated classes, no \d \s \w),
// groups, alternation, bounded repetition and ^ $ anchors.

const UNRESERVED = '-A-Za-z0-9._~'; // "-" first: a literal, not a range
const SUB_DELIMS = "!$&'()*+,;=";
const PCT = '%[0-9A-Fa-f]{2}';
const USERINFO = `(?:[${UNRESERVED}${SUB_DELIMS}:]|${PCT})+`;
const PCHAR = `(?:[${UNRESERVED}${SUB_DELIMS}:@]|${PCT})`;
const QCHAR = `(?:[${UNRESERVED}${SUB_DELIMS}:@/?]|${PCT})`;
const LABEL = '[A-Za-z0-9](?:[-A-Za-z0-9]*[A-Za-z0-9])?';
// A label with at least one letter or '-': digits, then '-' or a letter, then the rest.
const TOP_LABEL = '(?:[0-9]+-[-A-Za-z0-9]*[A-Za-z0-9]|[0-9]*[A-Za-z](?:[-A-Za-z0-9]*[A-Za-z0-9])?)';
const DNS_NAME = `(?:${LABEL}\\.)*${TOP_LABEL}\\.?`;
const DEC_OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const IPV4 = `${DEC_OCTET}\\.${DEC_OCTET}\\.${DEC_OCTET}\\.${DEC_OCTET}`;
const H16 = '[0-9A-Fa-f]{1,4}';
const LS32 = `(?:${H16}:${H16}|${IPV4})`;
const IPV6 = [
  `(?:${H16}:){6}${LS32}`,
  `::(?:${H16}:){5}${LS32}`,
  `(?:${H16})?::(?:${H16}:){4}${LS32}`,
  `(?:(?:${H16}:){0,1}${H16})?::(?:${H16}:){3}${LS32}`,
  `(?:(?:${H16}:){0,2}${H16})?::(?:${H16}:){2}${LS32}`,
  `(?:(?:${H16}:){0,3}${H16})?::${H16}:${LS32}`,
  `(?:(?:${H16}:){0,4}${H16})?::${LS32}`,
  `(?:(?:${H16}:){0,5}${H16})?::${H16}`,
  `(?:(?:${H16}:){0,6}${H16})?::`,
].join('|');
const HOST = `(?:${DNS_NAME}|${IPV4}|\\[(?:${IPV6})\\])`;
const PORT = '(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})';

/** The whole grammar, anchored. RE2- and JavaScript-compatible (see above). */
export const HTTP_URL_PATTERN = `^https?://(?:${USERINFO}@)?${HOST}(?::${PORT})?(?:/${PCHAR}*)*(?:\\?${QCHAR}*)?$`;
const HTTP_URL_RE = new RegExp(HTTP_URL_PATTERN);

/** The one message both sides give for a URL outside the grammar. */
export const HTTP_URL_MESSAGE =
  'must be an http:// or https:// URL: lowercase scheme, a host name or IP address, an optional port 1-65535, then an optional path and query of ASCII characters (percent-encode others); no whitespace, no #fragment';

export function isHttpURL(s: string): boolean {
  return HTTP_URL_RE.test(s);
}

const SCHEME_RE = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;

/**
 * Why `s` is not a URL of the grammar (HTTP_URL_MESSAGE plus the first specific reason found), or
 * undefined when it is one. Never echoes credentials.
 */
export function checkHttpURL(s: string): string | undefined {
  if (isHttpURL(s)) return undefined;
  return `${HTTP_URL_MESSAGE} (${whyNotHttpURL(s)})`;
}

function whyNotHttpURL(s: string): string {
  if (/\s/.test(s)) return 'it contains whitespace';
  const scheme = SCHEME_RE.exec(s);
  if (!scheme) return /^[A-Za-z][A-Za-z0-9+.-]*:/.test(s) ? 'the scheme must be followed by "://"' : 'it has no http:// or https:// scheme';
  const name = scheme[1] ?? '';
  if (name !== 'http' && name !== 'https') {
    return /^https?$/i.test(name) ? 'the scheme must be lowercase' : `scheme ${JSON.stringify(name.slice(0, 20))} is not http or https`;
  }
  if (/[^\x21-\x7e]/.test(s)) return 'it contains a control or non-ASCII character';
  if (s.includes('#')) return 'it has a #fragment';
  if (/%(?![0-9A-Fa-f]{2})/.test(s)) return 'a "%" does not start a valid percent-escape (%XX)';
  const rest = s.slice(scheme[0].length);
  const authority = rest.split(/[/?]/, 1)[0] ?? '';
  const hostport = authority.slice(authority.lastIndexOf('@') + 1);
  if (authority.includes('@') && authority.lastIndexOf('@') === 0) return 'the user information before "@" is empty';
  if (authority.indexOf('@') !== authority.lastIndexOf('@')) return 'the user information contains an unescaped "@"';
  if (hostport === '') return 'it has no host';
  if (hostport.startsWith('[') && !/^\[[^\]]*\](?::|$)/.test(hostport)) return 'the host is not a valid DNS name, IPv4 address or [IPv6] address';
  const port = /^(?:\[[^\]]*\]|[^:[]*):(.*)$/.exec(hostport);
  if (port) {
    const p = port[1] ?? '';
    // The port is not quoted: in a malformed URL it may be part of a password.
    if (!/^[0-9]+$/.test(p)) return 'the port is not a number';
    if (!new RegExp(`^${PORT}$`).test(p)) return 'the port is outside 1-65535 or has a leading zero';
  }
  const host = port ? hostport.slice(0, hostport.length - (port[1] ?? '').length - 1) : hostport;
  if (!new RegExp(`^${HOST}$`).test(host)) return 'the host is not a valid DNS name, IPv4 address or [IPv6] address';
  if (!new RegExp(`^(?:${USERINFO}@)?$`).test(authority.slice(0, authority.length - hostport.length))) {
    return 'the user information has a character that must be percent-encoded';
  }
  return 'the path or query has a character that must be percent-encoded';
}

// ---------------------------------------------------------------------------------------------
// Normalized form: what remoteWriteURL uniqueness compares.

const PREFIX_RE = /^https?:\/\/(?:[^/?@]*@)?[^/?]*/;
const USERINFO_PREFIX_RE = /^https?:\/\/[^/?@]*@/;

function lowerAscii(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/**
 * The normalized form of a URL: scheme and user information as written, host (and IPv6 hex digits)
 * lowercased, the scheme's default port (http :80, https :443) dropped, an empty path written "/",
 * the rest as written. Two remoteWriteURLs with the same normalized form are the same endpoint.
 *
 * Defined on every string starting with http:// or https:// (others are returned unchanged), as the
 * CRD's CEL rule `remoteWriteURLKeyCel` computes it: the two must agree character for character.
 */
export function normalizeURL(s: string): string {
  if (!s.startsWith('http://') && !s.startsWith('https://')) return s;
  const p = PREFIX_RE.exec(s)?.[0] ?? '';
  const u = USERINFO_PREFIX_RE.exec(s)?.[0] ?? '';
  const h = u === '' ? (s.startsWith('https:') ? 'https://' : 'http://') : u;
  const hp = lowerAscii(p.slice(h.length));
  const dp = s.startsWith('https:') ? ':443' : ':80';
  const r = s.slice(p.length);
  return h + (hp.endsWith(dp) ? hp.slice(0, hp.length - dp.length) : hp) + (r === '' || r.startsWith('?') ? `/${r}` : r);
}

/**
 * CEL for normalizeURL(`s`), for the CRD. CEL in CRD rules has no `cel.bind`; a one-element list's
 * `map` binds a name instead (cheap for the cost estimator, unlike `url()`).
 */
export function remoteWriteURLKeyCel(s: string): string {
  return (
    `[${s}.find('^https?://([^/?@]*@)?[^/?]*')].map(p, [${s}.find('^https?://[^/?@]*@')].map(u, ` +
    `[u == '' ? (${s}.startsWith('https:') ? 'https://' : 'http://') : u].map(h, [p.substring(h.size()).lowerAscii()].map(hp, ` +
    `[${s}.startsWith('https:') ? ':443' : ':80'].map(dp, [${s}.substring(p.size())].map(r, ` +
    `h + (hp.endsWith(dp) ? hp.substring(0, hp.size() - dp.size()) : hp) + (r == '' || r.startsWith('?') ? '/' + r : r))[0])[0])[0])[0])[0])[0]`
  );
}

// ---------------------------------------------------------------------------------------------
// Redaction: a remoteWriteURL may carry credentials (user:password@); they are never displayed.

export const REDACTED = '***';

/**
 * `s` with its user information (everything between "://" and the "@" before the host) replaced by
 * `***`: `https://user:secret@lb.example/write` → `https://***@lb.example/write`. Safe on any string:
 * a URL outside the grammar has everything between "://" and its last "@" redacted (a password with
 * an unescaped "/" or "?" would otherwise end the authority early); a string without "://" has
 * everything before its last "@" redacted. Strings without "@" are returned unchanged.
 */
export function redactURL(s: string): string {
  if (!s.includes('@')) return s;
  const scheme = SCHEME_RE.exec(s);
  if (!scheme) return `${REDACTED}${s.slice(s.lastIndexOf('@'))}`;
  const start = scheme[0].length;
  if (isHttpURL(s)) {
    const authorityEnd = s.slice(start).search(/[/?]/);
    const authority = authorityEnd < 0 ? s.slice(start) : s.slice(start, start + authorityEnd);
    const at = authority.lastIndexOf('@');
    return at < 0 ? s : `${s.slice(0, start)}${REDACTED}${s.slice(start + at)}`;
  }
  return `${s.slice(0, start)}${REDACTED}${s.slice(s.lastIndexOf('@'))}`;
}

/**
 * Every URL inside a free text (a message, an error) with its credentials redacted, as redactURL
 * does; a URL ends at whitespace, a double quote, `<`, `>` or a backtick (not at `'`: user
 * information may contain one).
 */
export function redactURLsIn(text: string): string {
  if (!text.includes('@')) return text;
  return text.replace(/[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s"<>`]*/g, (url) => redactURL(url));
}
