// The Web UI's codec endpoint (and `temporal --codec-endpoint`'s): decrypts the payloads the worker
// and the trigger encrypt. Each SRE runs it on their own machine, never as a shared service:
//   TEMPORAL_PAYLOAD_KEYS_FILE=payload-keys CODEC_SERVER_UI_ORIGIN=https://temporal.example.com npm run codec-server
// then sets http://127.0.0.1:8888 as the codec endpoint in the Web UI (see docs/security.md#payload-encryption).
import { loadCodecServerConfig, startCodecServer } from '../process/codec-server';
import { loadConfigOrExit, stopOnSignals } from '../process/main';

async function main(): Promise<void> {
  const config = loadConfigOrExit(() => loadCodecServerConfig());
  const server = await startCodecServer(config);
  process.stderr.write(
    `codec server on ${server.url} (keys ${[...config.keys.byId.keys()].join(', ')}; ` +
      `${config.uiOrigin ? `Web UI origin ${config.uiOrigin}` : 'no Web UI origin set: CODEC_SERVER_UI_ORIGIN, or only the CLI can use it'}). ` +
      'It decrypts for anyone who can reach it.\n',
  );
  stopOnSignals(() => server.close(), {
    stopping: (sig) => process.stderr.write(`${sig}: stopping\n`),
    secondSignal: (sig) => process.stderr.write(`second ${sig}: exiting now\n`),
    stopFailed: (err) => process.stderr.write(`stop failed: ${String(err)}\n`),
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`codec server failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
