import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { toolPath, toolVersions } from '../infra/harness/tools';

describe('harness tools', () => {
  const saved = process.env.VMROLLOUT_CACHE;
  const made: string[] = [];
  const tmp = (prefix: string) => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    made.push(d);
    return d;
  };
  afterAll(() => made.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
  afterEach(() => {
    if (saved === undefined) delete process.env.VMROLLOUT_CACHE;
    else process.env.VMROLLOUT_CACHE = saved;
  });

  it('reads pinned versions from scripts/tool-versions.env', () => {
    const v = toolVersions();
    expect(v.KUBERNETES_VERSION).toMatch(/^\d+\.\d+\.\d+$/);
    expect(v.ETCD_VERSION).toMatch(/^3\.6\./);
  });

  it('a missing binary is an error naming the install command (tests fail, never skip)', () => {
    process.env.VMROLLOUT_CACHE = tmp('vmrollout-empty-cache-');
    expect(() => toolPath('vmagent')).toThrow(/^vmagent not found at .*vmagent-[\d.]+\/vmagent: run scripts\/install-tools\.sh \(or make tools\)$/);
    expect(() => toolPath('kube-controller-manager')).toThrow(
      new RegExp(
        `^kube-controller-manager not found at .*/kube-controller-manager-${toolVersions().KUBERNETES_VERSION}/kube-controller-manager: run scripts/install-tools`,
      ),
    );
  });

  it('finds an installed binary in <cache>/tools/<name>-<version>/', () => {
    const cache = tmp('vmrollout-fake-cache-');
    const dir = path.join(cache, 'tools', `helm-${toolVersions().HELM_VERSION}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'helm'), '#!/bin/sh\n', { mode: 0o755 });
    process.env.VMROLLOUT_CACHE = cache;
    expect(toolPath('helm')).toBe(path.join(dir, 'helm'));
  });
});
