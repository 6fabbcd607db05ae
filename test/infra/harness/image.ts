/**
 * The image `make image` builds (scripts/image.sh), run as the Helm chart runs it but without a
 * Docker engine: `buildah run` (scripts/buildah.sh: the project's image storage, chroot isolation)
 * on the host's network, as user 1000:1000, with no capability, the root file system read-only, a
 * writable /tmp (the chart's emptyDir) and the files the chart mounts (kubeconfig, payload keys)
 * mounted read-only.
 *
 * What buildah 1.28 (Debian bookworm's) does not do by itself, done here:
 *  - No read-only root option: the container's root file system is bind-mounted read-only onto
 *    itself before `buildah run`, which then chroots into it; the mount points of the files are
 *    made first, while it is still writable (in the container's layer, not the image).
 *  - It makes a mount point by its path on the host: through a symlink of the image (/var/run →
 *    /run) that lands on the HOST's /run. A mount target through a symlink is refused here: name
 *    the directory it points to (/run/secrets/..., not /var/run/secrets/...).
 *  - It mounts /run/.containerenv and deletes that mount point after the run: on a read-only /run
 *    the deletion fails and buildah panics instead of returning the exit code. /run is a writable
 *    host directory (a tmpfs in most runtimes anyway).
 *  - `buildah run` does not pass SIGTERM on (it kills its child): stop() sends it to the node
 *    process itself (chroot isolation has no PID namespace), as kubelet's runtime would, and waits
 *    for the graceful exit.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { allProcStats, harnessTempDir, startProcess, type ManagedProcess, type ReadinessCheck } from './processes';
import { REPO_ROOT } from './tools';

/** scripts/image-env.sh IMAGE: tagged with the code's version, the chart's default tag. */
export const IMAGE = `localhost/vmrollout:${(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version}`;
export const IMAGE_ARCHIVE = path.join(REPO_ROOT, '.tmp', 'vmrollout-image.oci.tar');
const BUILDAH = path.join(REPO_ROOT, 'scripts', 'buildah.sh');
/** The chart's runAsUser, and the image's USER. */
export const IMAGE_UID = 1000;
const CONTAINER_PREFIX = 'vmrollout-test-';

const exec = promisify(execFile);
const buildah = async (...args: string[]) => (await exec(BUILDAH, args, { cwd: REPO_ROOT, maxBuffer: 16 << 20 })).stdout.trim();
const sh = (command: string, ...args: string[]) => exec(command, args);

export interface ImageInfo {
  /** As buildah reports it, e.g. `318 MB` (uncompressed). */
  size: string;
  /** Bytes of the OCI archive (compressed layers: what a registry stores and a node pulls). */
  archiveBytes: number;
}

/** The image and buildah, or an error that says how to get them. Removes what a killed test run left. */
export async function requireImage(): Promise<ImageInfo> {
  try {
    await exec('buildah', ['--version']);
  } catch {
    throw new Error('buildah is not installed: `make image` installs it (Debian package) and builds the image');
  }
  let size: string;
  try {
    size = await buildah('images', '--noheading', '--format', '{{.Size}}', IMAGE);
  } catch {
    throw new Error(`${IMAGE} is not in the project's image storage (scripts/buildah.sh images): run \`make image\``);
  }
  if (!fs.existsSync(IMAGE_ARCHIVE)) throw new Error(`${IMAGE_ARCHIVE} is missing: run \`make image\``);
  await removeLeftContainers();
  return { size, archiveBytes: fs.statSync(IMAGE_ARCHIVE).size };
}

/** Mounts under `dir` (itself included), deepest first. */
function mountsUnder(dir: string): string[] {
  return fs
    .readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[1]?.replace(/\\040/g, ' '))
    .filter((m): m is string => !!m && (m === dir || m.startsWith(`${dir}/`)))
    .sort((a, b) => b.length - a.length);
}

async function removeContainer(id: string, rootfs: string): Promise<void> {
  for (const m of mountsUnder(rootfs)) await sh('umount', m);
  await buildah('rm', id);
}

/** Containers of test processes that are gone (killed before their cleanup), with their mounts. */
async function removeLeftContainers(): Promise<void> {
  const out = await buildah('containers', '--noheading', '--format', '{{.ContainerID}} {{.ContainerName}}');
  for (const line of out.split('\n').filter(Boolean)) {
    const [id, name] = line.split(' ') as [string, string];
    const owner = Number(new RegExp(`^${CONTAINER_PREFIX}(\\d+)-`).exec(name)?.[1]);
    if (!owner || fs.existsSync(`/proc/${owner}`)) continue;
    await removeContainer(id, await buildah('mount', id));
  }
}

export interface ContainerOptions {
  /** worker / trigger: names the container and its log. */
  name: string;
  /** The entry point, as the chart gives it (`node dist/<name>/main.js`). */
  command: string[];
  env: Record<string, string>;
  /** Host files mounted read-only: container path → host path. */
  files: Record<string, string>;
  ready: ReadinessCheck;
  readyTimeoutMs?: number;
  /** How long stop() waits for the graceful exit after SIGTERM (default 15 s). */
  stopTimeoutMs?: number;
}

export interface Container {
  readonly name: string;
  readonly process: ManagedProcess;
  /** Date.now() before `buildah from` (under vfs a copy of the image's files), at `buildah run`, and at the first ready answer. */
  readonly createdAt: number;
  readonly runAt: number;
  readonly readyAt: number;
  /** The node process (a host pid: no PID namespace). */
  nodePid(): number | undefined;
  /** SIGTERM to node, its exit awaited; then the container and its mounts removed. Returns node's exit code (null: it had to be killed). Idempotent. */
  stop(): Promise<number | null>;
}

/** Descendants of `pid` whose command is `node`. */
function nodeUnder(pid: number): number | undefined {
  const procs = allProcStats();
  const inTree = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of procs) {
      if (inTree.has(p.pid) || !inTree.has(p.ppid)) continue;
      inTree.add(p.pid);
      grew = true;
    }
  }
  return [...inTree].find((p) => {
    try {
      return p !== pid && fs.readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'node';
    } catch {
      return false;
    }
  });
}

/** Where `target` (a path in the container) is under `rootfs` on the host; throws if that path passes through a symlink (see the header). */
function mountPoint(rootfs: string, target: string): string {
  let p = rootfs;
  for (const part of target.split('/').filter(Boolean)) {
    p = path.join(p, part);
    if (fs.lstatSync(p, { throwIfNoEntry: false })?.isSymbolicLink()) {
      throw new Error(
        `mount target ${target}: ${p.slice(rootfs.length)} is a symlink in the image, which buildah would follow on the host: name the path it points to`,
      );
    }
  }
  return p;
}

export async function runInImage(o: ContainerOptions): Promise<Container> {
  const createdAt = Date.now();
  const id = await buildah('from', '--name', `${CONTAINER_PREFIX}${process.pid}-${o.name}-${createdAt}`, IMAGE);
  const rootfs = await buildah('mount', id);
  let proc: ManagedProcess | undefined;
  try {
    // Modes as in the image (and as an emptyDir's): the harness' temp dirs are 0700 root.
    const tmp = harnessTempDir(`${o.name}-tmp`);
    fs.chmodSync(tmp, 0o1777);
    const run = harnessTempDir(`${o.name}-run`);
    fs.chmodSync(run, 0o755);
    await sh('mount', '--bind', rootfs, rootfs);
    await sh('mount', '--bind', run, path.join(rootfs, 'run'));
    for (const target of Object.keys(o.files)) {
      const file = mountPoint(rootfs, target);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.closeSync(fs.openSync(file, 'a'));
    }
    // Only the root's own mount: /run stays writable.
    await sh('mount', '-o', 'remount,bind,ro', rootfs);
    const args = ['run', '--user', `${IMAGE_UID}:${IMAGE_UID}`, '--network', 'host', '--cap-drop', 'ALL', '--volume', `${tmp}:/tmp`];
    for (const [target, source] of Object.entries(o.files)) args.push('--volume', `${source}:${target}:ro`);
    for (const [k, v] of Object.entries(o.env)) args.push('--env', `${k}=${v}`);
    const runAt = Date.now();
    proc = await startProcess({
      name: o.name,
      command: BUILDAH,
      args: [...args, id, '--', ...o.command],
      cwd: REPO_ROOT,
      ready: o.ready,
      readyTimeoutMs: o.readyTimeoutMs ?? 60_000,
    });
    const p = proc;
    const readyAt = Date.now();
    let stopping: Promise<number | null> | undefined;
    const stop = async () => {
      const pid = nodeUnder(p.pid);
      let code: number | null = null;
      if (pid !== undefined && p.running) {
        const exited = p.exited();
        process.kill(pid, 'SIGTERM');
        const timeout = new Promise<undefined>((r) => setTimeout(() => r(undefined), o.stopTimeoutMs ?? 15_000).unref());
        code = (await Promise.race([exited, timeout]))?.code ?? null;
      }
      await p.stop();
      await removeContainer(id, rootfs);
      return code;
    };
    return {
      name: o.name,
      process: p,
      createdAt,
      runAt,
      readyAt,
      nodePid: () => nodeUnder(p.pid),
      stop: () => (stopping ??= stop()),
    };
  } catch (err) {
    await proc?.stop();
    await removeContainer(id, rootfs).catch(() => {});
    throw err;
  }
}
