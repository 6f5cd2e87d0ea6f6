/**
 * The release store: everything the control plane keeps on disk under `<data>/control/`.
 *
 *   artifacts/<hex>.tar                    artifact tarballs by digest (immutable once renamed in)
 *   releases/<target>/<version>/           a release: the artifact unpacked, files read-only
 *   releases/<target>/<version>.manifest.json  what that directory must hold (path → sha256), written first
 *   live/<target> -> ../releases/<target>/<version>   the live pointer, replaced by rename
 *   scratch/  uploads/                     build directories and upload temp files (wiped on start)
 *   logs/<target>/                         build logs and service logs
 *
 * Invariant: a release directory is complete iff both it and its manifest exist. The manifest is
 * renamed in before the directory, and pruning deletes the manifest before the directory, so a crash at
 * any instant leaves either a complete release or debris that `recover()` removes. The live pointer only
 * ever names a complete release: it is switched after the release is complete, and a release is never
 * pruned while it is live.
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, renameSync, rmSync, mkdtempSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { InternalError } from '../kernel/errors.js';
import {
  type Digest, type FileManifest, type ArtifactLimits, DEFAULT_ARTIFACT_LIMITS,
  digestFile, extractArtifact, inspectArtifact, manifestDiff, manifestOf,
} from './artifact.js';
import { fsyncDir, fsyncTree, removeTree, removeTreeAsync, switchSymlink, writeFileDurable } from '../kernel/durable-file.js';

export interface ReleaseManifest {
  v: 1;
  target: string;
  version: string;
  digest: Digest;
  files: FileManifest;
}

export class ReleaseStore {
  readonly root: string;
  readonly limits: ArtifactLimits;

  constructor(root: string, limits: ArtifactLimits = DEFAULT_ARTIFACT_LIMITS) {
    this.root = root;
    this.limits = limits;
    for (const d of ['artifacts', 'releases', 'live', 'scratch', 'uploads', 'logs']) mkdirSync(join(root, d), { recursive: true });
  }

  get scratchDir(): string { return join(this.root, 'scratch'); }
  get uploadsDir(): string { return join(this.root, 'uploads'); }
  logsDir(target: string): string { const d = join(this.root, 'logs', target); mkdirSync(d, { recursive: true }); return d; }
  artifactPath(digest: Digest): string { return join(this.root, 'artifacts', `${digest.slice(7)}.tar`); }
  releaseDir(target: string, version: string): string { return join(this.root, 'releases', target, version); }
  manifestPath(target: string, version: string): string { return join(this.root, 'releases', target, `${version}.manifest.json`); }
  livePath(target: string): string { return join(this.root, 'live', target); }

  /** Moves a verified temp tar into the artifact store under its digest (idempotent). */
  async adoptArtifact(tmpFile: string, digest: Digest): Promise<void> {
    const final = this.artifactPath(digest);
    if (existsSync(final)) { rmSync(tmpFile, { force: true }); return; }
    // Hundreds of MiB may still be in the page cache: the fsync must not hold the event loop.
    const fh = await open(tmpFile, 'r');
    try { await fh.sync(); } finally { await fh.close(); }
    renameSync(tmpFile, final);
    fsyncDir(dirname(final));
  }

  hasArtifact(digest: Digest): boolean { return existsSync(this.artifactPath(digest)); }

  isComplete(target: string, version: string): boolean {
    return existsSync(this.manifestPath(target, version)) && existsSync(this.releaseDir(target, version));
  }

  readManifest(target: string, version: string): ReleaseManifest | undefined {
    try { return JSON.parse(readFileSync(this.manifestPath(target, version), 'utf8')) as ReleaseManifest; } catch { return undefined; }
  }

  /**
   * Makes `releases/<target>/<version>/` a complete release of the artifact `digest` (no-op when it is).
   * The artifact is re-checked against its digest and inspected before anything is unpacked.
   */
  async materialize(target: string, version: string, digest: Digest): Promise<void> {
    if (this.isComplete(target, version) && this.readManifest(target, version)?.digest === digest) return;
    const file = this.artifactPath(digest);
    if (!existsSync(file)) throw new InternalError(`Artifact ${digest} of ${target} ${version} is missing from the store.`);
    if ((await digestFile(file)) !== digest) throw new InternalError(`Artifact ${digest} of ${target} is corrupt on disk.`);
    await inspectArtifact(file, this.limits);
    const parent = join(this.root, 'releases', target);
    mkdirSync(parent, { recursive: true });
    // A directory without its manifest is debris from an interrupted prune or materialization.
    await removeTreeAsync(this.releaseDir(target, version));
    const tmp = mkdtempSync(join(parent, `.tmp-${version}-`));
    await extractArtifact(file, tmp, this.limits);
    await fsyncTree(tmp);
    const manifest: ReleaseManifest = { v: 1, target, version, digest, files: await manifestOf(tmp) };
    writeFileDurable(this.manifestPath(target, version), JSON.stringify(manifest));
    renameSync(tmp, this.releaseDir(target, version));
    fsyncDir(parent);
  }

  /**
   * Restores a release whose files were changed behind the control plane's back, file by file, each by
   * rename, from a fresh unpack of its artifact. Safe to repeat. Returns the paths it restored.
   */
  async repair(target: string, version: string): Promise<string[]> {
    const m = this.readManifest(target, version);
    if (!m) throw new InternalError(`Release ${target} ${version} has no manifest.`);
    const dir = this.releaseDir(target, version);
    const actual = await manifestOf(dir);
    const diff = manifestDiff(m.files, actual);
    if (diff.length === 0) return [];
    const tmp = mkdtempSync(join(this.scratchDir, `repair-${target}-`));
    try {
      await inspectArtifact(this.artifactPath(m.digest), this.limits);
      await extractArtifact(this.artifactPath(m.digest), tmp, this.limits);
      // Extra paths first, deepest first, then expected paths parents first.
      for (const p of diff.filter((p) => !(p in m.files)).reverse()) removeTree(join(dir, p));
      for (const p of diff.filter((p) => p in m.files)) {
        const want = m.files[p]!;
        if (want.type === 'dir') {
          if (actual[p]?.type !== 'dir') { removeTree(join(dir, p)); mkdirSync(join(dir, p)); }
          continue;
        }
        if (actual[p]?.type === 'dir') removeTree(join(dir, p));
        mkdirSync(dirname(join(dir, p)), { recursive: true });
        renameSync(join(tmp, p), join(dir, p));
      }
      await fsyncTree(dir);
    } finally { await removeTreeAsync(tmp); }
    return diff;
  }

  /** The version the live pointer names, or undefined when there is none (or it is not ours). */
  readLive(target: string): string | undefined {
    let to: string;
    try { to = readlinkSync(this.livePath(target)); } catch { return undefined; }
    const expectedParent = join('..', 'releases', target);
    return dirname(to) === expectedParent ? basename(to) : undefined;
  }

  /** Raw pointer text, for reasons when it does not name one of our releases. */
  readLiveRaw(target: string): string | undefined {
    try { return readlinkSync(this.livePath(target)); } catch { return undefined; }
  }

  switchLive(target: string, version: string): void {
    if (!this.isComplete(target, version)) throw new InternalError(`Refusing to point ${target} at incomplete release ${version}.`);
    switchSymlink(this.livePath(target), join('..', 'releases', target, version));
  }

  removeLive(target: string): void { rmSync(this.livePath(target), { force: true }); fsyncDir(join(this.root, 'live')); }

  /** Versions with a complete release on disk. */
  releasesOf(target: string): string[] {
    const parent = join(this.root, 'releases', target);
    let names: string[];
    try { names = readdirSync(parent); } catch { return []; }
    return names.filter((n) => !n.startsWith('.') && !n.endsWith('.manifest.json') && this.isComplete(target, n));
  }

  /** Deletes a release: manifest first (the release stops being complete), then the directory. */
  async prune(target: string, version: string, digest?: Digest): Promise<void> {
    if (this.readLive(target) === version) throw new InternalError(`Refusing to prune the live release ${target} ${version}.`);
    rmSync(this.manifestPath(target, version), { force: true });
    fsyncDir(join(this.root, 'releases', target));
    await removeTreeAsync(this.releaseDir(target, version));
    if (digest) rmSync(this.artifactPath(digest), { force: true });
  }

  /**
   * Start-up recovery: removes every trace of work a crash interrupted (temp directories and files,
   * manifests without directories and directories without manifests, scratch and upload files) and
   * drops live pointers that do not name a complete release. Returns what it removed, for the log.
   */
  recover(): string[] {
    const removed: string[] = [];
    const rm = (p: string): void => { removeTree(p); removed.push(p); };
    for (const d of ['scratch', 'uploads']) for (const n of readdirSync(join(this.root, d))) rm(join(this.root, d, n));
    for (const n of readdirSync(join(this.root, 'artifacts'))) if (n.startsWith('.')) rm(join(this.root, 'artifacts', n));
    const releases = join(this.root, 'releases');
    for (const target of readdirSync(releases)) {
      const parent = join(releases, target);
      if (!lstatSync(parent).isDirectory()) continue;
      const names = readdirSync(parent);
      for (const n of names) {
        const p = join(parent, n);
        if (n.startsWith('.')) { rm(p); continue; }
        if (n.endsWith('.manifest.json')) {
          if (!existsSync(join(parent, n.slice(0, -'.manifest.json'.length)))) rm(p);
        } else if (!existsSync(`${p}.manifest.json`)) rm(p);
      }
    }
    const live = join(this.root, 'live');
    for (const n of readdirSync(live)) {
      const p = join(live, n);
      if (n.startsWith('.')) { rm(p); continue; }
      const v = this.readLive(n);
      if (v === undefined || !this.isComplete(n, v)) rm(p);
    }
    return removed;
  }
}
