/**
 * docker-compose.yml, checked without a Docker engine (none runs here: no test starts the file):
 *  - it is valid against the Compose Specification's JSON schema (compose-spec's
 *    schema/compose-spec.json, as the pinned devDependency dclint ships it), and copies with a
 *    misspelt key or an unknown depends_on condition are not (negative controls);
 *  - the Temporal image is the CLI version the tests' dev server runs (TEMPORAL_CLI_VERSION), and it
 *    registers exactly the search attributes the processes require at start;
 *  - the server's data volume is handed to the image's uid 1000 by a root service that must have
 *    finished before the server starts (a new named volume is root-owned);
 *  - the worker's and the trigger's environments pass their own config parsers, every variable in
 *    them is one the process reads, every file they name is mounted or in the image, both reach the
 *    compose Temporal on one namespace and task queue, and each one's metrics port is published.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TypedSearchAttributes } from '@temporalio/common';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { SEARCH_ATTRIBUTE_KEYS } from '../../api/rollout-contract';
import { loadConfig as loadTriggerConfig } from '../../trigger/config';
import { loadConfig as loadWorkerConfig } from '../../worker/config';
import { REPO_ROOT, toolVersions } from '../infra/harness/tools';

interface Service {
  image?: string;
  user?: string;
  entrypoint?: string[];
  command?: string[];
  environment?: Record<string, string | number | boolean>;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

// Merge keys (`<<: *common-env`) as Compose reads them.
const compose = parse(fs.readFileSync(path.join(REPO_ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as Compose;
const { services } = compose;

const schemaFile = path.join(path.dirname(require.resolve('dclint/package.json')), 'schemas', 'compose.schema.json');
const schema = JSON.parse(fs.readFileSync(schemaFile, 'utf8')) as { $schema?: string };
// The schema declares draft-07 under its https URL, which Ajv does not know by that name: compiled as
// the draft-07 it is. Not strict: strict mode judges how a schema is written, and this one is not ours.
const validate = new Ajv({ allErrors: true, strict: false }).compile({ ...schema, $schema: undefined });

function specErrors(doc: unknown): string[] {
  if (validate(doc)) return [];
  return (validate.errors ?? []).map(
    (e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}${'additionalProperty' in e.params ? `: ${String(e.params.additionalProperty)}` : ''}`,
  );
}

/** A copy of the file's document with `edit` applied. */
const edited = (edit: (doc: Compose) => void): Compose => {
  const copy = structuredClone(compose);
  edit(copy);
  return copy;
};

describe('the Compose Specification', () => {
  it('accepts docker-compose.yml', () => {
    expect(schema.$schema).toBe('https://json-schema.org/draft-07/schema');
    expect(specErrors(compose)).toEqual([]);
  });

  it('refuses a copy with a misspelt service key, and one with an unknown depends_on condition', () => {
    const misspelt = edited((doc) => {
      doc.services.worker = { ...doc.services.worker, enviroment: doc.services.worker!.environment } as Service;
    });
    expect(specErrors(misspelt)).toContain('/services/worker must NOT have additional properties: enviroment');
    const condition = edited((doc) => {
      doc.services.temporal!.depends_on = { 'temporal-data-owner': { condition: 'service_completed' } };
    });
    expect(specErrors(condition)).toContain('/services/temporal/depends_on/temporal-data-owner/condition must be equal to one of the allowed values');
  });
});

describe('the Temporal server', () => {
  const temporal = services.temporal!;
  const owner = services['temporal-data-owner']!;

  it("is the tests' Temporal CLI version, in every service that runs its image", () => {
    const image = `temporalio/temporal:${toolVersions().TEMPORAL_CLI_VERSION}`;
    expect(temporal.image).toBe(image);
    const cliImages = Object.values(services).flatMap((s) => (s.image?.startsWith('temporalio/temporal:') ? [s.image] : []));
    expect(new Set(cliImages)).toEqual(new Set([image]));
  });

  it('registers exactly the search attributes the worker and the trigger require at start', () => {
    expect(temporal.command!.filter((a) => a.startsWith('--search-attribute='))).toEqual(
      SEARCH_ATTRIBUTE_KEYS.map((k) => `--search-attribute=${k.name}=${TypedSearchAttributes.toMetadataType(k.type)}`),
    );
  });

  it('keeps its database on a named volume that a root service hands to uid 1000 before it starts', () => {
    const dbFile = temporal.command!.find((a) => a.startsWith('--db-filename='))!.slice('--db-filename='.length);
    const mount = temporal.volumes!.map((v) => v.split(':')).find(([, target]) => dbFile.startsWith(`${target}/`));
    expect(mount).toBeDefined();
    const [volume, target] = mount!;
    expect(Object.keys(compose.volumes ?? {})).toContain(volume);
    // The image runs as uid 1000 (its USER): no `user` here, and that is whom the volume is given to.
    expect(temporal.user).toBeUndefined();
    expect(owner).toMatchObject({ image: temporal.image, user: '0:0', entrypoint: ['chown', '-R', '1000:1000', target], volumes: [`${volume}:${target}`] });
    expect(temporal.depends_on).toEqual({ 'temporal-data-owner': { condition: 'service_completed_successfully' } });
  });
});

describe('the worker and the trigger', () => {
  // Files the image has: the Dockerfile's `npm run bundle:workflows` writes dist/workflow-bundle.js under WORKDIR /app.
  const IN_IMAGE = new Set(['/app/dist/workflow-bundle.js']);
  const standIn = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vmrollout-compose-')), 'stand-in');
  fs.writeFileSync(standIn, '');
  afterAll(() => fs.rmSync(path.dirname(standIn), { recursive: true, force: true }));

  /**
   * The service's environment through its config parser (named files replaced by a readable one): the
   * config, the variables neither it nor `readElsewhere` reads, and the files neither mounted nor in the image.
   */
  function load<C>(
    name: string,
    loadConfig: (env: NodeJS.ProcessEnv) => C,
    readElsewhere: string[] = [],
  ): { config: C; unread: string[]; unprovided: string[] } {
    const service = services[name]!;
    const env = Object.fromEntries(Object.entries(service.environment ?? {}).map(([k, v]) => [k, String(v)]));
    const mounts = (service.volumes ?? []).map((v) => v.split(':')[1]!);
    const files = Object.entries(env).filter(([, v]) => v.startsWith('/'));
    const unprovided = files.filter(([, v]) => !IN_IMAGE.has(v) && !mounts.some((m) => v.startsWith(`${m}/`))).map(([k, v]) => `${k}=${v}`);
    const local = { ...env, ...Object.fromEntries(files.map(([k]) => [k, standIn])) };
    const read = new Set(readElsewhere);
    const config = loadConfig(
      new Proxy(local, {
        get(target, key) {
          if (typeof key === 'string') read.add(key);
          return target[key as string];
        },
      }),
    );
    return { config, unread: Object.keys(env).filter((k) => !read.has(k)), unprovided };
  }

  const worker = load('worker', loadWorkerConfig);
  // The trigger's Kubernetes client reads KUBECONFIG itself (KubeConfig.loadFromDefault, kube/keep-alive.ts).
  const trigger = load('trigger', loadTriggerConfig, ['KUBECONFIG']);

  it('each environment passes its config parser, with no variable the process does not read and no file it lacks', () => {
    expect({ unread: worker.unread, unprovided: worker.unprovided }).toEqual({ unread: [], unprovided: [] });
    expect({ unread: trigger.unread, unprovided: trigger.unprovided }).toEqual({ unread: [], unprovided: [] });
    expect(worker.config.workflowBundlePath).toBe(standIn);
  });

  it("both reach the compose Temporal's frontend, once it is healthy, on one namespace and task queue", () => {
    // start-dev's frontend port is 7233 unless --port says otherwise
    expect(services.temporal!.command!.some((a) => a.startsWith('--port'))).toBe(false);
    const target = (c: { temporal: { address: string; namespace: string }; taskQueue: string }) => ({
      address: c.temporal.address,
      namespace: c.temporal.namespace,
      taskQueue: c.taskQueue,
    });
    expect(target(worker.config)).toEqual({ address: 'temporal:7233', namespace: 'default', taskQueue: 'vmrollout' });
    expect(target(trigger.config)).toEqual(target(worker.config));
    for (const name of ['worker', 'trigger']) expect(services[name]!.depends_on).toEqual({ temporal: { condition: 'service_healthy' } });
  });

  it('each serves its metrics on every interface of its container, on a port published on loopback', () => {
    const published = (name: string, port: number) => services[name]!.ports!.includes(`127.0.0.1:${port}:${port}`);
    expect(worker.config.metrics.host).toBe('0.0.0.0');
    expect(published('worker', worker.config.metrics.port)).toBe(true);
    expect(trigger.config.metricsHost ?? '0.0.0.0').toBe('0.0.0.0');
    expect(published('trigger', trigger.config.metricsPort)).toBe(true);
  });
});
