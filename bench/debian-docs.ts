/**
 * The Debian-docs corpus for `npm run bench:corpus`: the HTML documentation of four Debian packages
 * (python3.11-doc, rust-doc, openjdk-17-doc, linux-doc-6.1), extracted once with Quarry's own HTML
 * extractor (src/corpora/extract.ts) into a JSONL corpus (`{_id, title, text, url}` per line) under a
 * cache directory outside the repository (default ~/.cache/quarry-bench, or $QUARRY_BENCH_CACHE).
 *
 * Files come from `dpkg -L` (the packages' own lists), deduplicated by real path, in sorted order, so the
 * corpus is the same on every machine with the same package versions. Each page gets the URL it has on
 * the project's website (a host per package, so `site:` works on this corpus). Redirect stubs (rustdoc
 * writes ~8,400 pages that only say "Redirecting to …") and pages whose extracted text is under 64
 * characters are skipped: about 36k pages remain.
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { extractHtml } from '../src/corpora/extract.js';

export const PACKAGES: { pkg: string; root: string; url: string }[] = [
  { pkg: 'python3.11-doc', root: '/usr/share/doc/python3.11/html/', url: 'https://docs.python.org/3.11/' },
  { pkg: 'rust-doc', root: '/usr/share/doc/rust-doc/html/', url: 'https://doc.rust-lang.org/1.63.0/' },
  { pkg: 'openjdk-17-doc', root: '/usr/share/doc/openjdk-17-jre-headless/', url: 'https://docs.oracle.com/en/java/javase/17/docs/' },
  { pkg: 'linux-doc-6.1', root: '/usr/share/doc/linux-doc-6.1/html/', url: 'https://www.kernel.org/doc/html/v6.1/' },
];

const MIN_TEXT_CHARS = 64;

export function cacheDir(): string {
  const dir = process.env.QUARRY_BENCH_CACHE ?? join(homedir(), '.cache', 'quarry-bench');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Which of the packages are missing (dpkg says not installed). */
export function missingPackages(): string[] {
  return PACKAGES.map((p) => p.pkg).filter((pkg) => {
    try {
      return !/install ok installed/.test(execFileSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    } catch {
      return true;
    }
  });
}

/**
 * The corpus file, extracting it first when absent. Returns its path and a summary. Throws with the
 * install command when a package is missing.
 */
export async function debianDocsCorpus(log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<{ path: string; docs: number; textBytes: number }> {
  const path = join(cacheDir(), 'debian-docs-v2.jsonl');
  const summaryPath = `${path}.summary.json`;
  if (existsSync(path) && existsSync(summaryPath)) return { path, ...(JSON.parse(readFileSync(summaryPath, 'utf8')) as { docs: number; textBytes: number }) };
  const missing = missingPackages();
  if (missing.length > 0) throw new Error(`missing Debian packages; install them first:\n  apt-get update && apt-get install -y --no-install-recommends ${missing.join(' ')}`);

  const tmp = `${path}.tmp`;
  const out = createWriteStream(tmp);
  let docs = 0;
  let textBytes = 0;
  const seen = new Set<string>();
  const t0 = performance.now();
  const chunks: string[] = [];
  for (const p of PACKAGES) {
    const files = execFileSync('dpkg', ['-L', p.pkg], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })
      .split('\n').filter((f) => f.endsWith('.html')).sort();
    let kept = 0;
    for (const file of files) {
      let real: string;
      try {
        real = realpathSync(file);
        if (!statSync(real).isFile()) continue;
      } catch {
        continue;
      }
      if (seen.has(real)) continue;
      seen.add(real);
      const rel = file.startsWith(p.root) ? file.slice(p.root.length) : file.replace(/^\/usr\/share\/doc\/[^/]+\//, '');
      const { title, text } = extractHtml(readFileSync(real, 'utf8'), rel);
      if (text.length < MIN_TEXT_CHARS || text.startsWith('Redirecting to ')) continue;
      const url = p.url + rel;
      chunks.push(`${JSON.stringify({ _id: url, title, text, url })}\n`);
      if (chunks.length >= 512) out.write(chunks.splice(0).join(''));
      docs++;
      kept++;
      textBytes += Buffer.byteLength(title) + Buffer.byteLength(text);
    }
    log(`debian-docs: ${p.pkg}: ${kept} pages (${files.length} HTML files listed)`);
  }
  out.write(chunks.join(''));
  await new Promise<void>((resolve, reject) => {
    out.on('error', reject);
    out.end(() => resolve());
  });
  renameSync(tmp, path);
  const seconds = (performance.now() - t0) / 1000;
  writeFileSync(summaryPath, JSON.stringify({ docs, textBytes, seconds }));
  log(`debian-docs: ${docs} pages, ${(textBytes / 2 ** 20).toFixed(1)} MiB of text, extracted in ${seconds.toFixed(1)} s → ${path}`);
  return { path, docs, textBytes };
}
