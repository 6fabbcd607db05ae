// Optional credentials for vmagent /metrics (-metricsAuthKey is a query arg and not supported;
// a proxy or -httpAuth.* in front of /metrics is): bearer token or basic auth from a Secret.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { REQUEST_TIMEOUT_MS, withRequestTimeout } from '../../kube/request-timeout';
import { secretText } from '../../kube/secret-text';

export interface VmagentAuthConfig {
  secretName: string;
  /** Default: the namespace of the VMDistributedCluster being rolled out. */
  secretNamespace?: string;
  /** Key of a bearer token (default `token`). */
  tokenKey?: string;
  /** Keys of basic auth credentials (defaults `username`, `password`). */
  usernameKey?: string;
  passwordKey?: string;
}

/** Pure: the Authorization header from a Secret's (base64) data, or undefined when it holds none of the keys. */
export function authorizationFromSecretData(data: Record<string, string> | undefined, cfg: VmagentAuthConfig): string | undefined {
  const token = secretText(data, cfg.tokenKey ?? 'token');
  if (token) return `Bearer ${token}`;
  const user = secretText(data, cfg.usernameKey ?? 'username');
  if (user !== undefined) {
    const pass = secretText(data, cfg.passwordKey ?? 'password') ?? '';
    return `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
  }
  return undefined;
}

export class VmagentAuth {
  private readonly core: CoreV1Api;
  constructor(
    kc: KubeConfig,
    private readonly cfg: VmagentAuthConfig,
  ) {
    this.core = kc.makeApiClient(CoreV1Api);
  }

  /** Headers for a scrape; throws when the Secret cannot be read or holds no credentials. */
  async headers(defaultNamespace: string): Promise<Record<string, string>> {
    const namespace = this.cfg.secretNamespace ?? defaultNamespace;
    const secret = await this.core.readNamespacedSecret({ name: this.cfg.secretName, namespace }, withRequestTimeout(REQUEST_TIMEOUT_MS));
    const auth = authorizationFromSecretData(secret.data, this.cfg);
    if (!auth)
      throw new Error(`Secret ${namespace}/${this.cfg.secretName} has none of the keys ${this.cfg.tokenKey ?? 'token'}, ${this.cfg.usernameKey ?? 'username'}`);
    return { authorization: auth };
  }
}
