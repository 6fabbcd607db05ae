/**
 * Payload encryption end to end on a real Temporal dev server: the worker process (worker/main.ts,
 * TEMPORAL_PAYLOAD_KEYS_FILE set) runs workflows whose input, memo, activity input, heartbeat,
 * activity failure, result and workflow failure carry a fixture secret. What the server stores and
 * returns without a codec (the raw history events, the raw describe: what the Web UI shows without
 * a codec endpoint) must not contain it anywhere; clients with the codec, and the CLI through the
 * codec server, read it back. Negative control: the same run without keys has the secret in each
 * of those places, so the check looks where the secret would be.
 */
import { execFile } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Context } from '@temporalio/activity';
import { Client, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { decodeFromPayloadsAtIndex, loadDataConverter } from '@temporalio/common/lib/internal-non-workflow';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { loadCodecServerConfig, startCodecServer } from '../../process/codec-server';
import { payloadDataConverter } from '../../process/payload-codec';
import { loadConfig } from '../../worker/config';
import { startWorker } from '../../worker/main';
import { activityTaskQueue, carrySecret, failWithSecret, type SecretActivities, type SecretInput } from '../fixtures/workflows/secret-carrier';
import { harnessTempDir, waitFor } from '../infra/harness/processes';
import { useTemporalDevEnv } from '../infra/harness/temporal';
import { toolPath } from '../infra/harness/tools';
import { unreachableKubeConfig } from '../infra/harness/kube';

jest.setTimeout(240_000);

const SECRET = `fixture-secret-${crypto.randomUUID()}`;
const INPUT: SecretInput = {
  vmuser: { name: 'reads', password: SECRET },
  remoteWriteURL: `https://writer:${SECRET}@vminsert.example:8480/insert/0/prometheus`,
};

const env = useTemporalDevEnv();
const keysFile = path.join(harnessTempDir('payload-encryption'), 'payload-keys');
fs.writeFileSync(keysFile, `test-key:${crypto.randomBytes(32).toString('base64')}\n`);

// No activity of worker/main.ts runs here: a kubeconfig pointing nowhere is enough.
const nowhere = unreachableKubeConfig();

const EventType = temporal.api.enums.v1.EventType;
type Describe = temporal.api.workflowservice.v1.IDescribeWorkflowExecutionResponse;

interface Run {
  carryId: string;
  failId: string;
  /** Where the raw server data holds the secret: history event types and parts of the describe taken while the activity heartbeated. */
  leaks: string[];
  /** Read by a client with the run's data converter. */
  result: unknown;
  failure: unknown;
  heartbeat: unknown;
  memo: unknown;
}

function leaksOf(histories: temporal.api.history.v1.IHistory[], described: Describe): string[] {
  const has = (bytes: Uint8Array) => Buffer.from(bytes).includes(SECRET);
  const leaks = new Set<string>();
  for (const event of histories.flatMap((h) => h.events ?? [])) {
    if (has(temporal.api.history.v1.HistoryEvent.encode(event).finish())) leaks.add(EventType[event.eventType ?? 0]!);
  }
  for (const a of described.pendingActivities ?? [])
    if (has(temporal.api.workflow.v1.PendingActivityInfo.encode(a).finish())) leaks.add('describe: pending activity');
  if (has(temporal.api.workflow.v1.WorkflowExecutionInfo.encode(described.workflowExecutionInfo ?? {}).finish())) leaks.add('describe: execution info');
  return [...leaks].sort();
}

/** Both workflows through worker/main.ts with `extraEnv`, plus an activity worker and a client with the same data converter. */
async function run(extraEnv: Record<string, string>): Promise<Run> {
  const e = env();
  const taskQueue = `secrets-${crypto.randomUUID()}`;
  const config = loadConfig({
    TEMPORAL_ADDRESS: e.address,
    TASK_QUEUE: taskQueue,
    METRICS_HOST: '127.0.0.1',
    METRICS_PORT: '0',
    TEMPORAL_METRICS_BIND: '',
    SHUTDOWN_GRACE_TIME: '1s',
    ...extraEnv,
  });
  const dataConverter = payloadDataConverter(config.temporal.payloadKeys);
  const running = await startWorker(config, {
    installRuntime: false,
    kubeConfig: nowhere,
    workflowsPath: require.resolve('../fixtures/workflows/secret-carrier'),
  });
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const activities: SecretActivities = {
    async echo(input) {
      Context.current().heartbeat({ progress: input });
      await released;
      return input;
    },
    async refuse(secret) {
      throw ApplicationFailure.nonRetryable(`cannot use ${secret}`, 'Refused');
    },
  };
  try {
    const activityWorker = await Worker.create({ connection: e.nativeConnection, taskQueue: activityTaskQueue(taskQueue), activities, dataConverter });
    const client = new Client({ connection: e.connection, namespace: config.temporal.namespace, dataConverter });
    const [carryId, failId] = [`carry-${crypto.randomUUID()}`, `fail-${crypto.randomUUID()}`];
    return await activityWorker.runUntil(async () => {
      const carry = await client.workflow.start(carrySecret, { taskQueue, workflowId: carryId, args: [INPUT], memo: { note: SECRET } });
      // A successful activity's heartbeats are in no history event: the describe shows them while it runs.
      const described = await waitFor(
        async () => {
          const d = await e.client.workflowService.describeWorkflowExecution({ namespace: config.temporal.namespace, execution: { workflowId: carryId } });
          return d.pendingActivities?.[0]?.heartbeatDetails?.payloads?.length ? d : undefined;
        },
        { timeoutMs: 30_000, description: 'heartbeat details in the describe' },
      );
      const heartbeat = await decodeFromPayloadsAtIndex(loadDataConverter(dataConverter), 0, described.pendingActivities![0]!.heartbeatDetails!.payloads);
      release();
      const result = await carry.result();
      const failure = await client.workflow.execute(failWithSecret, { taskQueue, workflowId: failId, args: [SECRET] }).catch((err: unknown) => err);
      // Fetched with the test environment's client, which has no codec: the bytes as stored.
      const histories = await Promise.all([carryId, failId].map((id) => e.client.workflow.getHandle(id).fetchHistory()));
      return { carryId, failId, leaks: leaksOf(histories, described), result, failure, heartbeat, memo: (await carry.describe()).memo };
    });
  } finally {
    await running.shutdown();
  }
}

/** `temporal workflow show -o json`, each payload's data (base64 in that output) decoded to text. */
async function cliShow(workflowId: string, extraArgs: string[] = []): Promise<string> {
  const { stdout } = await promisify(execFile)(toolPath('temporal'), [
    'workflow',
    'show',
    '-w',
    workflowId,
    '-o',
    'json',
    '--address',
    env().address,
    ...extraArgs,
  ]);
  return stdout.replace(/"data":\s*"([A-Za-z0-9+/=]*)"/g, (_, b64: string) => `"data": ${JSON.stringify(Buffer.from(b64, 'base64').toString('utf8'))}`);
}

describe('payload encryption (TEMPORAL_PAYLOAD_KEYS_FILE)', () => {
  let encrypted: Run;
  beforeAll(async () => {
    encrypted = await run({ TEMPORAL_PAYLOAD_KEYS_FILE: keysFile });
  });

  it('keeps the secret out of every history event and the describe', () => {
    expect(encrypted.leaks).toEqual([]);
  });

  it('clients with the codec read everything back', () => {
    expect(encrypted.result).toEqual({ echoed: INPUT, refusal: `cannot use ${SECRET}` });
    expect(encrypted.heartbeat).toEqual({ progress: INPUT });
    expect(encrypted.memo).toEqual({ note: SECRET });
    expect(encrypted.failure).toBeInstanceOf(WorkflowFailedError);
    expect((encrypted.failure as WorkflowFailedError).cause?.message).toBe(`refused ${SECRET}`);
  });

  it('the CLI shows the secret only through the codec server', async () => {
    expect(await cliShow(encrypted.carryId)).not.toContain(SECRET);
    const server = await startCodecServer({ ...loadCodecServerConfig({ TEMPORAL_PAYLOAD_KEYS_FILE: keysFile }), port: 0 });
    try {
      expect(await cliShow(encrypted.carryId, ['--codec-endpoint', server.url])).toContain(INPUT.remoteWriteURL);
    } finally {
      await server.close();
    }
  });

  it('negative control: without keys the secret is in each of those places', async () => {
    const plain = await run({});
    expect(plain.leaks).toEqual(
      [
        'EVENT_TYPE_ACTIVITY_TASK_COMPLETED', // echo's result
        'EVENT_TYPE_ACTIVITY_TASK_FAILED', // refuse's failure message
        'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED', // activity inputs
        'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED', // the result
        'EVENT_TYPE_WORKFLOW_EXECUTION_FAILED', // the workflow's failure message
        'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED', // the input and the memo
        'describe: execution info', // the memo
        'describe: pending activity', // the heartbeat
      ].sort(),
    );
    expect(plain.result).toEqual({ echoed: INPUT, refusal: `cannot use ${SECRET}` });
    expect(await cliShow(plain.carryId)).toContain(INPUT.remoteWriteURL);
  });
});
