// Writes the prebuilt workflow bundle the production worker loads (WORKFLOW_BUNDLE):
//   npm run bundle:workflows [-- <output path>]   (default dist/workflow-bundle.js)
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { failureConverterPath } from '../process/payload-codec';
import { workflowBundleOptions } from '../process/workflow-bundle';

async function main(): Promise<void> {
  const out = path.resolve(process.argv[2] ?? path.join(__dirname, '..', 'dist', 'workflow-bundle.js'));
  // The sandbox's failure converter is fixed here, not by the worker's TEMPORAL_PAYLOAD_KEYS_FILE:
  // the image's bundle always moves failure messages into a payload, so that with keys they are
  // encrypted; without keys that payload is plain JSON, which SDK clients and the Web UI still show.
  const { code } = await bundleWorkflowCode(workflowBundleOptions(failureConverterPath()));
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, code);
  process.stdout.write(`workflow bundle written to ${out} (${(code.length / 1024).toFixed(0)} KiB)\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bundle failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
