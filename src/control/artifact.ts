/**
 * Artifacts: the tarball a build produces or an upload brings, identified by `sha256:<hex>` of its bytes.
 *
 * Packing is reproducible: entries are listed in byte order of their paths, every mtime is the epoch,
 * `portable` drops uid/gid/uname/ctime/atime, modes are normalized to 0644/0755, and the tar is not
 * compressed (gzip would add its own header bytes for nothing). So building the same inputs twice gives
 * the same digest.
 *
 * An artifact from outside is hostile until proven otherwise: `inspectArtifact` reads every header
 * before anything is written and rejects absolute paths, `..` segments, links leaving the release,
 * device files and FIFOs, and sizes past the limits; `extractArtifact` then unpacks into a fresh
 * directory with node-tar's own guards still on.
 */
import { createHash } from 'node:crypto';
import { createReadStream, mkdirSync, type Stats } from 'node:fs';
import { once } from 'node:events';
import { chmod, lstat, open, readdir, readlink } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import * as tar from 'tar';
import { BadRequestError } from '../kernel/errors.js';
import { forEachBounded } from './bounded.js';

export type Digest = `sha256:${string}`;
export const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** Files stat'ed or chmod'ed at once while walking a tree, and hashed at once. */
const TREE_CONCURRENCY = 64;
const HASH_CONCURRENCY = 4;

export function isDigest(s: unknown): s is Digest { return typeof s === 'string' && DIGEST.test(s); }

/** The version id of an artifact: content-addressed, so rebuilding the same inputs names the same version. */
export function versionOf(digest: Digest): string { return digest.slice('sha256:'.length, 'sha256:'.length + 12); }

export async function digestFile(file: string): Promise<Digest> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return `sha256:${h.digest('hex')}`;
}

/**
 * Paths under `root` with their lstat, relative with `/`, directories before their contents, in byte
 * order. Asynchronous, the entries of a directory stat'ed together (as is everything here that walks a
 * tree): a release may hold thousands of files, and the control plane shares its event loop with search.
 */
async function listTree(root: string, rel = ''): Promise<{ path: string; st: Stats }[]> {
  const names = (await readdir(join(root, rel))).sort((a, b) => (Buffer.compare(Buffer.from(a), Buffer.from(b))));
  const entries: { path: string; st: Stats }[] = new Array(names.length);
  await forEachBounded(names, TREE_CONCURRENCY, async (name, i) => {
    const path = rel === '' ? name : `${rel}/${name}`;
    entries[i] = { path, st: await lstat(join(root, path)) };
  });
  const out: { path: string; st: Stats }[] = [];
  for (const e of entries) {
    out.push(e);
    if (e.st.isDirectory()) out.push(...await listTree(root, e.path));
  }
  return out;
}

/** Packs the contents of `dir` into `file` reproducibly (see the module comment). */
export async function packArtifact(dir: string, file: string): Promise<void> {
  const entries = await listTree(dir);
  for (const { path, st } of entries) {
    if (!st.isSymbolicLink() && !st.isDirectory() && !st.isFile()) throw new BadRequestError(`Build output ${path} is neither a file, a directory nor a symlink.`);
  }
  await forEachBounded(entries, TREE_CONCURRENCY, async ({ path, st }) => {
    if (st.isDirectory()) await chmod(join(dir, path), 0o755);
    else if (st.isFile()) await chmod(join(dir, path), st.mode & 0o111 ? 0o755 : 0o644);
  });
  if (entries.length === 0) throw new BadRequestError('The build produced no output.');
  await tar.create({ cwd: dir, file, portable: true, mtime: new Date(0), noDirRecurse: true, follow: false }, entries.map((e) => e.path));
}

export interface ArtifactLimits {
  /** Sum of the sizes of all files in the archive. */
  maxUnpackedBytes: number;
  /** Number of entries. */
  maxEntries: number;
}

export const DEFAULT_ARTIFACT_LIMITS: ArtifactLimits = { maxUnpackedBytes: 2 * 1024 ** 3, maxEntries: 100_000 };

/** Normalizes an entry path, or says why it is not acceptable. */
function safeEntryPath(raw: string): string | Error {
  if (raw.includes('\0')) return new Error('contains a NUL byte');
  if (raw.startsWith('/') || /^[a-zA-Z]:/.test(raw) || raw.startsWith('\\')) return new Error('is absolute');
  const parts = raw.replace(/\\/g, '/').split('/');
  if (parts.includes('..')) return new Error('contains a ".." segment');
  const norm = posix.normalize(raw.replace(/\\/g, '/')).replace(/\/+$/, '');
  if (norm === '' || norm === '.') return new Error('names the release root');
  return norm.replace(/^\.\//, '');
}

/**
 * Reads every header of the tar `file` and throws `BadRequestError` (param `body`) at the first hostile
 * entry. Nothing is written. Returns the number of entries and the unpacked size.
 */
export async function inspectArtifact(file: string, limits: ArtifactLimits = DEFAULT_ARTIFACT_LIMITS): Promise<{ entries: number; bytes: number }> {
  let entries = 0;
  let bytes = 0;
  let problem: string | undefined;
  const seenFiles = new Set<string>();
  const links: { path: string; to: string }[] = [];
  const paths: string[] = [];
  const fail = (msg: string): void => { problem ??= msg; };
  const parser = new tar.Parser({
    strict: true,
    onReadEntry: (entry) => {
      entry.resume();
      entries++;
      const p = safeEntryPath(entry.path);
      if (p instanceof Error) { fail(`entry ${JSON.stringify(entry.path)} ${p.message}`); return; }
      paths.push(p);
      bytes += entry.size ?? 0;
      switch (entry.type) {
        case 'File': case 'OldFile': case 'ContiguousFile':
          seenFiles.add(p); break;
        case 'Directory': break;
        case 'SymbolicLink': {
          const to = entry.linkpath ?? '';
          if (to === '' || to.startsWith('/') || to.includes('\0')) { fail(`symlink ${p} has an absolute or empty target`); break; }
          links.push({ path: p, to });
          break;
        }
        case 'Link': {
          const to = safeEntryPath(entry.linkpath ?? '');
          if (to instanceof Error) fail(`hard link ${p} -> ${entry.linkpath} leaves the release`);
          else if (!seenFiles.has(to)) fail(`hard link ${p} -> ${to} does not name an earlier file of the archive`);
          break;
        }
        default:
          fail(`entry ${p} has type ${entry.type}; only files, directories and links inside the release are allowed`);
      }
      if (entries > limits.maxEntries) fail(`more than ${limits.maxEntries} entries`);
      if (bytes > limits.maxUnpackedBytes) fail(`unpacks to more than ${limits.maxUnpackedBytes} bytes`);
    },
  });
  try {
    await feedTar(file, parser, 'end', limits, () => problem !== undefined);
  } catch (err) {
    if (err instanceof ArchiveTooLargeError) fail(err.message);
    else fail(`not a readable tar archive (${(err as Error).message})`);
  }
  if (problem === undefined && entries === 0) problem = 'the archive is empty';
  // Symlinks are judged once every entry is known, because a link may name one that comes later.
  // Resolving a target lexically is only sound when no step of it goes through another symlink
  // (`s -> .` then `t -> s/x/../..` is "." lexically but escapes physically), so that is refused too,
  // as is any entry whose own path goes through a symlink.
  const linkSet = new Set(links.map((l) => l.path));
  for (const p of paths) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length && problem === undefined; i++) {
      if (linkSet.has(parts.slice(0, i).join('/'))) fail(`entry ${p} goes through the symlink ${parts.slice(0, i).join('/')}`);
    }
  }
  for (const { path, to } of links) {
    if (problem !== undefined) break;
    const cur = path.split('/').slice(0, -1);
    const steps = to.split('/');
    for (let i = 0; i < steps.length; i++) {
      const seg = steps[i]!;
      if (seg === '' || seg === '.') continue;
      if (seg === '..') {
        if (cur.length === 0) { fail(`symlink ${path} -> ${to} leaves the release`); break; }
        cur.pop();
      } else {
        cur.push(seg);
        if (i < steps.length - 1 && linkSet.has(cur.join('/'))) { fail(`symlink ${path} -> ${to} goes through the symlink ${cur.join('/')}`); break; }
      }
    }
  }
  if (problem !== undefined) throw new BadRequestError(`Rejected artifact: ${problem}.`, 'body');
  return { entries, bytes };
}

class ArchiveTooLargeError extends Error {}

const GZIP_MAGIC = Buffer.of(0x1f, 0x8b);
const ZSTD_MAGIC = Buffer.of(0x28, 0xb5, 0x2f, 0xfd);

/**
 * Streams the tar `file` into `parser` (a node-tar Parser or Unpack), gunzipping it first when it starts
 * with the gzip magic, and resolves on the parser's `doneEvent`. Decompression is ours, not node-tar's:
 * node-tar inflates each chunk it is given in one synchronous call, so a 2 MiB bomb written to it at once
 * becomes gigabytes of memory before any header is read. Here the inflated stream arrives in 16 KiB
 * pieces with back-pressure, and is cut off (ArchiveTooLargeError) once it passes what `limits` allow:
 * the entries' sizes plus a header and padding per entry and room for extended headers. `stop()` is
 * asked after every piece, so a refused header ends the reading at once, and whatever follows the
 * end-of-archive blocks is not read (node-tar would buffer all of it). An inflated stream that is
 * itself compressed is refused (node-tar would inflate it again, in one call).
 */
async function feedTar(
  file: string, parser: tar.Parser, doneEvent: 'end' | 'close', limits: ArtifactLimits, stop: () => boolean,
): Promise<void> {
  const done = new Promise<void>((resolve, reject) => {
    parser.on(doneEvent, () => resolve());
    parser.on('error', reject);
  });
  done.catch(() => { /* observed below, or superseded by the error that stopped the feed */ });
  // Past the end-of-archive blocks node-tar keeps concatenating whatever follows into one buffer.
  let eof = false;
  parser.on('eof', () => { eof = true; });
  const magic = await firstBytes(file, 4);
  const gzipped = magic.subarray(0, 2).equals(GZIP_MAGIC);
  if (!gzipped && magic.equals(ZSTD_MAGIC)) throw new Error('zstd is not accepted; send a plain or gzipped tar');
  const input = createReadStream(file);
  let source: AsyncIterable<Buffer> = input;
  if (gzipped) {
    const gunzip = createGunzip();
    pipeline(input, gunzip).catch(() => { /* the error reaches the reader through gunzip */ });
    source = gunzip;
  }
  const bound = limits.maxUnpackedBytes + (limits.maxEntries + 1) * 4096 + 1024 * 1024;
  let total = 0;
  let first = gzipped;
  for await (const chunk of source) {
    if (first) {
      first = false;
      if (chunk.subarray(0, 2).equals(GZIP_MAGIC) || chunk.subarray(0, 4).equals(ZSTD_MAGIC)) {
        throw new Error('the archive is compressed twice');
      }
    }
    total += chunk.length;
    if (total > bound) throw new ArchiveTooLargeError(`unpacks to more than ${limits.maxUnpackedBytes} bytes`);
    if (!parser.write(chunk)) await Promise.race([once(parser, 'drain'), done]);
    if (stop()) {
      input.destroy();
      return;
    }
    if (eof) break;
  }
  parser.end();
  await done;
}

async function firstBytes(file: string, n: number): Promise<Buffer> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(n);
    const { bytesRead } = await fh.read(buf, 0, n, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** Unpacks an inspected artifact into the new, empty directory `dest` and makes its files read-only. */
export async function extractArtifact(file: string, dest: string, limits: ArtifactLimits = DEFAULT_ARTIFACT_LIMITS): Promise<void> {
  mkdirSync(dest, { recursive: true });
  const unpack = new tar.Unpack({ cwd: dest, strict: true, preservePaths: false, preserveOwner: false, noMtime: true });
  await feedTar(file, unpack, 'close', limits, () => false);
  await makeReadOnly(dest);
}

async function makeReadOnly(root: string): Promise<void> {
  const files = (await listTree(root)).filter((e) => e.st.isFile());
  await forEachBounded(files, TREE_CONCURRENCY, async ({ path, st }) => { await chmod(join(root, path), st.mode & 0o111 ? 0o555 : 0o444); });
}

export type ManifestEntry =
  | { type: 'file'; sha256: string; size: number }
  | { type: 'dir' }
  | { type: 'symlink'; to: string };

/** What a release directory holds, path by path: recorded at materialization, compared to find drift. */
export type FileManifest = Record<string, ManifestEntry>;

export async function manifestOf(root: string): Promise<FileManifest> {
  const entries = await listTree(root);
  const out: FileManifest = {};
  for (const { path } of entries) out[path] = { type: 'dir' }; // placeholders keep the walk's order
  await forEachBounded(entries, HASH_CONCURRENCY, async ({ path, st }) => {
    const full = join(root, path);
    if (st.isSymbolicLink()) out[path] = { type: 'symlink', to: await readlink(full) };
    else if (!st.isDirectory()) out[path] = { type: 'file', size: st.size, sha256: (await digestFile(full)).slice('sha256:'.length) };
  });
  return out;
}

/** Paths whose content differs between two manifests (added, removed or changed), sorted. */
export function manifestDiff(expected: FileManifest, actual: FileManifest): string[] {
  const out = new Set<string>();
  for (const [p, e] of Object.entries(expected)) if (JSON.stringify(actual[p]) !== JSON.stringify(e)) out.add(p);
  for (const p of Object.keys(actual)) if (!(p in expected)) out.add(p);
  return [...out].sort();
}
