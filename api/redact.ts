// Secrets out of text that is shown to people: status messages, Events, logs. Text quoted from a
// config, a URL or an error can carry credentials (a vmauth config holds bearer tokens and
// passwords; a remote write URL may hold user:password@ or ?token=); status is readable by anyone
// who may read the VMDistributedCluster, far more people than may read the Secrets. Pure.
import { REDACTED, redactURLsIn } from './url';

// Query parameters that carry credentials (vmagent and vmauth accept `authKey`; cloud signatures).
const SECRET_PARAMS =
  /([?&](?:access_token|token|auth|authkey|authorization|password|passwd|pass|secret|api[_-]?key|key|sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token)=)[^&#\s"'<>`]*/gi;
// `key: value` or `key=value` of a credential, in YAML, JSON or a flag (query parameters: above).
const SECRET_FIELDS =
  /((?:^|[^A-Za-z0-9_?&])["']?(?:bearer_?token|password|passwd|client_secret|secret|token|api_?key|auth_?key|authorization)["']?\s*[:=]\s*["']?)(?:(?:Bearer|Basic)\s+)?[^\s"',}\]]+/gim;
// An HTTP Authorization value wherever it appears (a header quoted in a config or an error).
const AUTH_SCHEMES = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g;

// A URL cut short inside its user information (`https://user:pass…`: messages are truncated to fit)
// has no "@" left for redactURL to find. An authority whose "port" is not a number is such a cut, or
// malformed: either way it is redacted whole.
const CUT_AUTHORITY = /([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^\s"<>`/?#@[\]]*:[^\s"<>`/?#@]*)(?=$|[\s"<>`…])/g;
const HOST_PORT = /^[^:]*:[0-9]*$/;

/**
 * `text` with every credential it may quote replaced by `***`: the user information of URLs (as
 * redactURL), credential query parameters, credential fields (`bearer_token: …`, `password=…`) and
 * Authorization values (`Bearer …`, `Basic …`). What is not a credential is kept, so the message
 * still says what is wrong and where.
 */
export function redactSecrets(text: string): string {
  return redactURLsIn(text)
    .replace(CUT_AUTHORITY, (all, scheme: string, authority: string) => (HOST_PORT.test(authority) ? all : `${scheme}${REDACTED}`))
    .replace(SECRET_PARAMS, `$1${REDACTED}`)
    .replace(SECRET_FIELDS, `$1${REDACTED}`)
    .replace(AUTH_SCHEMES, `$1 ${REDACTED}`);
}
