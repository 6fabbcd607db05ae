import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { STRICT_TRUST_POLICY } from '../../api/trust-policy';
import { ConfigError, loadConfig } from '../../trigger/config';

function errorOf(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('trigger config', () => {
  it('has defaults for everything', () => {
    expect(loadConfig({})).toEqual({
      temporal: { address: 'localhost:7233', namespace: 'default', tls: undefined, apiKey: undefined },
      taskQueue: 'vmrollout',
      watchNamespaces: [],
      policy: STRICT_TRUST_POLICY,
      metricsPort: 9464,
      logLevel: 'info',
      relistIntervalMs: 300_000,
      watchIdleTimeoutMs: 120_000,
      finalizerRecheckIntervalMs: 30_000,
      reconcileConcurrency: 32,
    });
  });

  it('parses every variable', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trigger-config-'));
    const f = (n: string) => {
      const p = path.join(dir, n);
      fs.writeFileSync(p, 'x');
      return p;
    };
    const cfg = loadConfig({
      TEMPORAL_ADDRESS: 'temporal-frontend.temporal:7233',
      TEMPORAL_NAMESPACE: 'prod',
      TEMPORAL_TLS_CERT: f('tls.crt'),
      TEMPORAL_TLS_KEY: f('tls.key'),
      TEMPORAL_TLS_CA: f('ca.crt'),
      TEMPORAL_API_KEY: 'secret',
      TASK_QUEUE: 'vmrollout-prod',
      WATCH_NAMESPACES: ' monitoring, vm ,monitoring,',
      METRICS_PORT: '0',
      LOG_LEVEL: 'DEBUG',
      RELIST_INTERVAL: '10m',
      WATCH_IDLE_TIMEOUT: '1m30s',
      FINALIZER_RECHECK_INTERVAL: '5s',
      RECONCILE_CONCURRENCY: ' 8 ',
      CREATE_NAMESPACES: 'monitoring,team-a',
      ALLOW_CROSS_NAMESPACE_TARGET_REFS: 'true',
      TRUST_ALLOWED_ROUTE_HOSTS: 'vmselect.shared.svc, *.example.com ,[::1],10.0.0.5',
      TRUST_ALLOWED_REMOTE_WRITE_HOSTS: 'vminsert.shared.svc',
      TRUST_ALLOWED_IMAGE_REPOSITORIES: 'registry.internal:5000/mirror/*,ghcr.io/acme/vmselect',
      TRUST_ALLOWED_SERVICE_ACCOUNT_NAMES: 'vmagent-scraper',
      TRUST_ALLOW_HOST_ACCESS: 'yes',
      TRUST_ALLOW_EXTRA_CONTAINERS: '1',
      TRUST_ALLOW_CROSS_NAMESPACE_SELECTORS: 'TRUE',
      TRUST_ALLOW_OTHER_DESTINATIONS: 'true',
    });
    expect(cfg).toEqual({
      temporal: {
        address: 'temporal-frontend.temporal:7233',
        namespace: 'prod',
        tls: { certPath: path.join(dir, 'tls.crt'), keyPath: path.join(dir, 'tls.key'), caPath: path.join(dir, 'ca.crt') },
        apiKey: 'secret',
      },
      taskQueue: 'vmrollout-prod',
      watchNamespaces: ['monitoring', 'vm'],
      policy: {
        createNamespaces: ['monitoring', 'team-a'],
        crossNamespaceTargetRefs: true,
        routeHosts: ['vmselect.shared.svc', '*.example.com', '[::1]', '10.0.0.5'],
        remoteWriteHosts: ['vminsert.shared.svc'],
        imageRepositories: ['registry.internal:5000/mirror/*', 'ghcr.io/acme/vmselect'],
        serviceAccountNames: ['vmagent-scraper'],
        hostAccess: true,
        extraContainers: true,
        crossNamespaceSelectors: true,
        otherDestinations: true,
      },
      metricsPort: 0,
      logLevel: 'debug',
      relistIntervalMs: 600_000,
      watchIdleTimeoutMs: 90_000,
      finalizerRecheckIntervalMs: 5_000,
      reconcileConcurrency: 8,
    });
  });

  it.each([
    [{ TEMPORAL_ADDRESS: 'http://temporal:7233' }, 'TEMPORAL_ADDRESS: must be host:port'],
    [{ TEMPORAL_ADDRESS: 'temporal' }, 'TEMPORAL_ADDRESS: must be host:port'],
    [{ METRICS_PORT: 'abc' }, 'METRICS_PORT: must be a port number'],
    [{ METRICS_PORT: '70000' }, 'METRICS_PORT: must be at most 65535'],
    [{ LOG_LEVEL: 'verbose' }, 'LOG_LEVEL: must be one of trace, debug, info, warn, error'],
    [{ WATCH_NAMESPACES: 'ok,Not_A_Namespace' }, 'WATCH_NAMESPACES.1: each namespace must be a DNS-1123 label'],
    [{ CREATE_NAMESPACES: 'ok,*' }, 'CREATE_NAMESPACES.1: each namespace must be a DNS-1123 label'],
    [{ ALLOW_CROSS_NAMESPACE_TARGET_REFS: 'maybe' }, 'ALLOW_CROSS_NAMESPACE_TARGET_REFS: must be true or false'],
    [{ TRUST_ALLOWED_ROUTE_HOSTS: 'ok.svc,http://evil.example.com' }, 'TRUST_ALLOWED_ROUTE_HOSTS: "http://evil.example.com" is not a host name'],
    [{ TRUST_ALLOWED_REMOTE_WRITE_HOSTS: '*' }, 'TRUST_ALLOWED_REMOTE_WRITE_HOSTS: "*" is not a host name'],
    [{ TRUST_ALLOWED_REMOTE_WRITE_HOSTS: '*.0.0.1' }, 'TRUST_ALLOWED_REMOTE_WRITE_HOSTS: "*.0.0.1" is not a host name'],
    [{ TRUST_ALLOWED_IMAGE_REPOSITORIES: '*' }, 'TRUST_ALLOWED_IMAGE_REPOSITORIES: "*" is not an image repository'],
    [{ TRUST_ALLOWED_IMAGE_REPOSITORIES: 'Evil/Repo' }, 'TRUST_ALLOWED_IMAGE_REPOSITORIES: "Evil/Repo" is not an image repository'],
    [{ TRUST_ALLOWED_SERVICE_ACCOUNT_NAMES: 'system:admin' }, 'TRUST_ALLOWED_SERVICE_ACCOUNT_NAMES: "system:admin" is not a ServiceAccount name'],
    [{ TRUST_ALLOW_HOST_ACCESS: 'maybe' }, 'TRUST_ALLOW_HOST_ACCESS: must be true or false'],
    [{ RELIST_INTERVAL: '5' }, 'RELIST_INTERVAL: "5" must be a duration'],
    [{ WATCH_IDLE_TIMEOUT: '10ms' }, 'WATCH_IDLE_TIMEOUT: "10ms" must be at least 1s'],
    [{ FINALIZER_RECHECK_INTERVAL: '500ms' }, 'FINALIZER_RECHECK_INTERVAL: "500ms" must be at least 1s'],
    [{ FINALIZER_RECHECK_INTERVAL: 'soon' }, 'FINALIZER_RECHECK_INTERVAL: "soon" must be a duration'],
    [{ RECONCILE_CONCURRENCY: '0' }, 'RECONCILE_CONCURRENCY: must be at least 1'],
    [{ RECONCILE_CONCURRENCY: '-4' }, 'RECONCILE_CONCURRENCY: must be a positive integer'],
    [{ RECONCILE_CONCURRENCY: '2.5' }, 'RECONCILE_CONCURRENCY: must be a positive integer'],
    [{ RECONCILE_CONCURRENCY: 'many' }, 'RECONCILE_CONCURRENCY: must be a positive integer'],
    [{ RECONCILE_CONCURRENCY: '100000' }, 'RECONCILE_CONCURRENCY: must be at most 1000'],
    [{ TEMPORAL_TLS_CA: '/does/not/exist.pem' }, 'TEMPORAL_TLS_CA: file does not exist or is not readable'],
    [{ TEMPORAL_TLS_CERT: __filename }, 'TEMPORAL_TLS_KEY: TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together'],
  ])('rejects %j with a clear message', (env, message) => {
    const err = errorOf(env);
    expect(err.message).toMatch(/^invalid trigger configuration:/);
    expect(err.issues.some((i) => i.startsWith(message))).toBe(true);
  });

  it('lists every problem at once and never echoes the API key', () => {
    const err = errorOf({ METRICS_PORT: 'x', LOG_LEVEL: 'loud', TEMPORAL_API_KEY: '   ' });
    expect(err.issues).toHaveLength(2);
    expect(loadConfig({ TEMPORAL_API_KEY: '   ' }).temporal.apiKey).toBeUndefined();
  });
});
