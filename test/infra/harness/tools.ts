/**
 * Paths of the real binaries installed by scripts/install-tools.sh. Versions come from
 * scripts/tool-versions.env (the one place they are pinned). A missing binary is an error
 * naming the install command: tests fail, they never skip.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
const VERSIONS_FILE = path.join(REPO_ROOT, 'scripts', 'tool-versions.env');

export type ToolName =
  | 'temporal'
  | 'temporal-test-server'
  | 'kube-apiserver'
  | 'kube-controller-manager'
  | 'kube-scheduler'
  | 'kubectl'
  | 'etcd'
  | 'helm'
  | 'victoria-metrics'
  | 'vmagent'
  | 'vmauth'
  | 'vmalert-tool'
  | 'vm-operator'
  | 'config-reloader'
  | 'kwok'
  | 'tctl';

let versionsCache: Record<string, string> | undefined;
/** KEY=VALUE pairs of scripts/tool-versions.env. */
export function toolVersions(): Record<string, string> {
  if (!versionsCache) {
    const out: Record<string, string> = {};
    for (const line of fs.readFileSync(VERSIONS_FILE, 'utf8').split('\n')) {
      const m = /^\s*([A-Z0-9_]+)=(.*?)\s*$/.exec(line);
      if (m) out[m[1]!] = m[2]!.replace(/^["']|["']$/g, '');
    }
    versionsCache = out;
  }
  return versionsCache;
}

function v(key: string): string {
  const val = toolVersions()[key];
  if (!val) throw new Error(`${key} missing in ${VERSIONS_FILE}`);
  return val;
}

/** ${VMROLLOUT_CACHE:-~/.cache/vmrollout}/tools */
export function toolsDir(): string {
  return path.join(process.env.VMROLLOUT_CACHE ?? path.join(os.homedir(), '.cache', 'vmrollout'), 'tools');
}

/** Candidate install dirs (<name>-<version>) in order of preference, matching install-tools.sh. */
function candidates(tool: ToolName): string[] {
  switch (tool) {
    case 'temporal':
      return [`temporal-${v('TEMPORAL_CLI_VERSION')}`, `temporal-${v('TEMPORAL_CLI_GO_VERSION')}`];
    case 'temporal-test-server':
      return [`temporal-test-server-${v('TEMPORAL_TEST_SERVER_VERSION')}`];
    case 'kube-apiserver':
    case 'kube-controller-manager':
    case 'kube-scheduler':
    case 'kubectl':
      return [`${tool}-${v('KUBERNETES_VERSION')}`];
    case 'etcd':
      return [`etcd-${v('ETCD_VERSION')}`, 'etcd-debian'];
    case 'helm':
      return [`helm-${v('HELM_VERSION')}`];
    case 'victoria-metrics':
    case 'vmagent':
    case 'vmauth':
      return [`${tool}-${v('VICTORIAMETRICS_VERSION')}`, `${tool}-${v('VICTORIAMETRICS_FALLBACK_VERSION')}`, `${tool}-debian`];
    case 'vmalert-tool': // not in the Debian package: no -debian fallback
      return [`${tool}-${v('VICTORIAMETRICS_VERSION')}`, `${tool}-${v('VICTORIAMETRICS_FALLBACK_VERSION')}`];
    case 'vm-operator':
    case 'config-reloader':
      return [operatorDir()];
    case 'kwok':
      return [`kwok-${v('KWOK_VERSION')}`];
    case 'tctl':
      return [`tctl-${v('TCTL_VERSION')}`];
  }
}

/** Where install-tools.sh puts the operator's binaries and the CRDs of the same commit. */
function operatorDir(): string {
  return `vm-operator-${v('VM_OPERATOR_VERSION')}-${v('VM_OPERATOR_COMMIT')}`;
}

/** The operator's own CRDs (all of them, without descriptions), from the commit its binaries are built from. */
export function operatorCrdsPath(): string {
  const p = path.join(toolsDir(), operatorDir(), 'crds.yaml');
  if (!fs.existsSync(p)) throw new Error(`the VictoriaMetrics operator's CRDs not found at ${p}: run scripts/install-tools.sh (or make tools)`);
  return p;
}

/**
 * Absolute path of an installed tool binary. `VMROLLOUT_<TOOL>_BIN` (e.g. VMROLLOUT_ETCD_BIN)
 * overrides it. Throws `<tool> not found at <path>: run scripts/install-tools.sh (or make tools)`.
 */
export function toolPath(tool: ToolName): string {
  const override = process.env[`VMROLLOUT_${tool.toUpperCase().replace(/-/g, '_')}_BIN`];
  if (override) {
    if (isExecutable(override)) return override;
    throw new Error(
      `${tool} not found at ${override} (from VMROLLOUT_${tool.toUpperCase().replace(/-/g, '_')}_BIN): run scripts/install-tools.sh (or make tools)`,
    );
  }
  const dirs = candidates(tool);
  for (const d of dirs) {
    const p = path.join(toolsDir(), d, tool);
    if (isExecutable(p)) return p;
  }
  const expected = path.join(toolsDir(), dirs[0]!, tool);
  throw new Error(`${tool} not found at ${expected}: run scripts/install-tools.sh (or make tools)`);
}

function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}
