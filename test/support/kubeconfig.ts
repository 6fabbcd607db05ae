// A kubeconfig file for the plugin's tests: one cluster at `server`, the current context `ctx` in
// namespace team-a, and a context `other` without a namespace.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export function writeKubeconfig(server: string, user = '{}'): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vmdc-cli-')), 'kubeconfig');
  fs.writeFileSync(
    file,
    `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: '${server}', insecure-skip-tls-verify: true } }]
users: [{ name: u, user: ${user} }]
contexts: [{ name: ctx, context: { cluster: c, user: u, namespace: team-a } }, { name: other, context: { cluster: c, user: u } }]
current-context: ctx
`,
  );
  return file;
}
