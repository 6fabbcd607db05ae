import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConfigError, loadConfig } from '../../worker/config';
import { DEFAULT_TASK_QUEUE } from '../../api/rollout-contract';
import { STRICT_TRUST_POLICY } from '../../api/trust-policy';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'worker-config-'));
const file = (name: string) => {
  const p = path.join(tmp, name);
  fs.writeFileSync(p, 'x');
  return p;
};

function issues(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues;
  }
  throw new Error('expected a ConfigError');
}

describe('worker loadConfig', () => {
  it('has working defaults', () => {
    expect(loadConfig({})).toEqual({
      temporal: { address: 'localhost:7233', namespace: 'default', tls: undefined, apiKey: undefined },
      taskQueue: DEFAULT_TASK_QUEUE,
      policy: STRICT_TRUST_POLICY,
      kubeconfig: undefined,
      metrics: { host: '0.0.0.0', port: 9090, sdkBindAddress: '127.0.0.1:9091' },
      logLevel: 'info',
      workflowBundlePath: undefined,
      vmagentAuth: undefined,
      scrapeTimeoutMs: 5000,
      shutdownGraceTimeMs: 30_000,
      maxConcurrentActivities: undefined,
      maxCachedWorkflows: undefined,
    });
  });

  it('reads everything', () => {
    const bundle = file('bundle.js');
    const kc = file('kubeconfig');
    const [crt, key, ca] = [file('c.crt'), file('c.key'), file('ca.crt')];
    const c = loadConfig({
      TEMPORAL_ADDRESS: 'temporal-frontend.temporal:7233',
      TEMPORAL_NAMESPACE: 'prod',
      TEMPORAL_TLS_CERT: crt,
      TEMPORAL_TLS_KEY: key,
      TEMPORAL_TLS_CA: ca,
      TEMPORAL_TLS_SERVER_NAME: 'temporal.example',
      TEMPORAL_API_KEY: 'secret-key',
      TASK_QUEUE: 'q',
      KUBECONFIG: kc,
      METRICS_PORT: '0',
      METRICS_HOST: '127.0.0.1',
      TEMPORAL_METRICS_BIND: '',
      LOG_LEVEL: 'debug',
      WORKFLOW_BUNDLE: bundle,
      VMAGENT_METRICS_AUTH_SECRET: 'monitoring/vmagent-metrics',
      VMAGENT_AUTH_TOKEN_KEY: 'bearer',
      VMAGENT_SCRAPE_TIMEOUT: '2s',
      SHUTDOWN_GRACE_TIME: '1m',
      MAX_CONCURRENT_ACTIVITIES: '20',
      MAX_CACHED_WORKFLOWS: '150',
      WORKER_INSTANCE: 'vmrollout-worker-5d8c7-x2kq9',
    });
    expect(c).toEqual({
      temporal: {
        address: 'temporal-frontend.temporal:7233',
        namespace: 'prod',
        tls: { certPath: crt, keyPath: key, caPath: ca, serverName: 'temporal.example' },
        apiKey: 'secret-key',
      },
      taskQueue: 'q',
      policy: STRICT_TRUST_POLICY,
      kubeconfig: kc,
      metrics: { host: '127.0.0.1', port: 0, sdkBindAddress: undefined },
      logLevel: 'debug',
      workflowBundlePath: bundle,
      vmagentAuth: { secretName: 'vmagent-metrics', secretNamespace: 'monitoring', tokenKey: 'bearer', usernameKey: undefined, passwordKey: undefined },
      scrapeTimeoutMs: 2000,
      shutdownGraceTimeMs: 60_000,
      maxConcurrentActivities: 20,
      maxCachedWorkflows: 150,
      instance: 'vmrollout-worker-5d8c7-x2kq9',
    });
  });

  it('TEMPORAL_TLS=true alone means TLS with system roots', () => {
    expect(loadConfig({ TEMPORAL_TLS: 'true' }).temporal.tls).toEqual({ certPath: undefined, keyPath: undefined, caPath: undefined, serverName: undefined });
  });

  it('takes the vmagent credentials Secret as VMAGENT_METRICS_AUTH_SECRET=<ns>/<name> or <name>', () => {
    expect(loadConfig({ VMAGENT_METRICS_AUTH_SECRET: 'vmrollout/va-auth' }).vmagentAuth).toMatchObject({ secretName: 'va-auth', secretNamespace: 'vmrollout' });
    expect(loadConfig({ VMAGENT_METRICS_AUTH_SECRET: 'va-auth' }).vmagentAuth).toMatchObject({ secretName: 'va-auth', secretNamespace: undefined });
  });

  it('lists every problem at once, naming the variable and the value (never a secret)', () => {
    const got = issues({
      TEMPORAL_ADDRESS: 'http://temporal',
      METRICS_PORT: '70000',
      LOG_LEVEL: 'loud',
      WORKFLOW_BUNDLE: '/nope/bundle.js',
      KUBECONFIG: '/nope/kubeconfig',
      VMAGENT_SCRAPE_TIMEOUT: 'soon',
      TEMPORAL_API_KEY: 'k',
      TEMPORAL_TLS: 'maybe',
    });
    expect(got).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^TEMPORAL_ADDRESS: must be host:port.*"http:\/\/temporal"/),
        expect.stringMatching(/^METRICS_PORT: must be at most 65535/),
        expect.stringMatching(/^LOG_LEVEL: must be one of trace, debug, info, warn, error/),
        expect.stringMatching(/^WORKFLOW_BUNDLE: file does not exist/),
        expect.stringMatching(/^KUBECONFIG: file does not exist/),
        expect.stringMatching(/^VMAGENT_SCRAPE_TIMEOUT: "soon"/),
        expect.stringMatching(/^TEMPORAL_TLS: must be true or false/),
      ]),
    );
    expect(got).toHaveLength(7);
    expect(got.join('\n')).not.toContain('"k"'); // TEMPORAL_API_KEY's value never shows
    expect(() => loadConfig({ METRICS_PORT: 'x' })).toThrow(/invalid worker configuration:\n {2}- METRICS_PORT: must be a port number/);
  });

  it('checks combinations once the single values are valid', () => {
    expect(issues({ TEMPORAL_TLS_CERT: file('only.crt'), VMAGENT_AUTH_TOKEN_KEY: 'token' })).toEqual([
      expect.stringMatching(/^TEMPORAL_TLS_KEY: TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together/),
      expect.stringMatching(/^VMAGENT_AUTH_TOKEN_KEY: needs VMAGENT_METRICS_AUTH_SECRET/),
    ]);
  });

  it('rejects a scrape timeout under 100 ms and a bad concurrency', () => {
    expect(issues({ VMAGENT_SCRAPE_TIMEOUT: '10ms' })).toEqual([expect.stringMatching(/^VMAGENT_SCRAPE_TIMEOUT: "10ms" must be at least 100 ms/)]);
    expect(issues({ MAX_CONCURRENT_ACTIVITIES: '0' })).toHaveLength(1);
    expect(issues({ MAX_CACHED_WORKFLOWS: '-1' })).toHaveLength(1);
  });

  it("takes a pod name as WORKER_INSTANCE, not something that would break its boots' identities", () => {
    expect(loadConfig({}).instance).toBeUndefined();
    expect(issues({ WORKER_INSTANCE: 'pod/1' })).toEqual([expect.stringMatching(/^WORKER_INSTANCE: .*must be a pod name/)]);
  });

  it('is versioned with both TEMPORAL_WORKER_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID, unversioned with neither', () => {
    expect(loadConfig({}).deploymentVersion).toBeUndefined();
    expect(loadConfig({ TEMPORAL_WORKER_DEPLOYMENT_NAME: ' rel-vmrollout ', TEMPORAL_WORKER_BUILD_ID: '1.0.0-rc.1' }).deploymentVersion).toEqual({
      deploymentName: 'rel-vmrollout',
      buildId: '1.0.0-rc.1',
    });
    expect(issues({ TEMPORAL_WORKER_BUILD_ID: '1.0.0' })).toEqual([
      expect.stringMatching(/^TEMPORAL_WORKER_DEPLOYMENT_NAME: TEMPORAL_WORKER_DEPLOYMENT_NAME and TEMPORAL_WORKER_BUILD_ID must be set together/),
    ]);
    expect(issues({ TEMPORAL_WORKER_DEPLOYMENT_NAME: 'rel-vmrollout', TEMPORAL_WORKER_BUILD_ID: ' ' })).toEqual([
      expect.stringMatching(/^TEMPORAL_WORKER_BUILD_ID: .*set together/),
    ]);
    // The server ignores a deployment name with a dot.
    expect(issues({ TEMPORAL_WORKER_DEPLOYMENT_NAME: 'rel.vmrollout', TEMPORAL_WORKER_BUILD_ID: '1' })).toEqual([
      expect.stringMatching(/^TEMPORAL_WORKER_DEPLOYMENT_NAME: must not contain dots or spaces \(got "rel.vmrollout"\)/),
    ]);
  });
});
