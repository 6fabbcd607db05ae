// Writes the prebuilt workflow bundle the production worker loads (WORKFLOW_BUNDLE):
//   npm run bundle:workflows [-- <output path>]   (default dist/workflow-bundle.js)
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

async function main(): Promise<void> {
  const out = path.resolve(process.argv[2] ?? path.join(__dirname, '..', 'dist', 'workflow-bundle.js'));
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('../workflows') });
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, code);
  process.stdout.write(`workflow bundle written to ${out} (${(code.length / 1024).toFixed(0)} KiB)\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bundle failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
