/**
 * The scale benchmark's peers that are not JavaScript: Lucene (Debian's liblucene8-java, through
 * bench/peers/LuceneScale.java; `lucene-all` is the same without stop words) and Xapian (Debian's python3-xapian, through bench/peers/xapian_scale.py).
 * Each is a program with two commands, `build <dir>` (documents on stdin as JSON lines, {"title","text"}:
 * each peer parses JSON as Quarry's build does) and `serve <dir> <queries file>` (kind TAB query per line),
 * and prints one JSON report on stdout. A peer that is not installed is reported and skipped.
 *
 * Both peers get each query lowercased, so that their parsers' operator words (AND, OR, NOT) stay words, as
 * they are for Quarry.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import { REPO_ROOT } from '../dataset.js';
import type { SynthDoc } from '../synth-corpus.js';

export interface ExternalPeer {
  readonly name: string;
  /** Why the peer cannot run here, or undefined when it can. */
  missing(): string | undefined;
  /** Prepares what the peer's commands need under `work` (compiled classes) and returns its command line. */
  command(work: string): string[];
}

const JAVA_DIR = '/usr/share/java';
const LUCENE_JARS = ['lucene-core', 'lucene-analyzers-common', 'lucene-queryparser'];

function luceneJars(): string[] {
  const files = existsSync(JAVA_DIR) ? readdirSync(JAVA_DIR) : [];
  return LUCENE_JARS.map((name) => files.find((f) => new RegExp(`^${name}(-[0-9.]+)?\\.jar$`).test(f)))
    .filter((f): f is string => f !== undefined).map((f) => join(JAVA_DIR, f));
}

/** Lucene with its English analysis (`lucene`), or with no stop words, indexing every word as Quarry does (`lucene-all`). */
const lucenePeer = (name: string, args: string[]): ExternalPeer => ({
  name,
  missing() {
    if (luceneJars().length !== LUCENE_JARS.length) return `Lucene's jars are not in ${JAVA_DIR} (apt-get install liblucene8-java)`;
    if (spawnSync('javac', ['-version']).status !== 0) return 'javac is not installed (apt-get install openjdk-17-jdk-headless)';
    return undefined;
  },
  command(work) {
    const classes = join(work, 'lucene-classes');
    const classpath = [classes, ...luceneJars()].join(':');
    const source = join(REPO_ROOT, 'bench', 'peers', 'LuceneScale.java');
    const compiled = join(classes, 'LuceneScale.class');
    if (!existsSync(compiled) || statSync(compiled).mtimeMs < statSync(source).mtimeMs) {
      mkdirSync(classes, { recursive: true });
      const r = spawnSync('javac', ['-cp', classpath, '-d', classes, source], { stdio: 'inherit' });
      if (r.status !== 0) throw new Error('scale: javac LuceneScale.java failed');
    }
    return ['java', '-Xmx1g', '-cp', classpath, 'LuceneScale', ...args];
  },
});

const xapian: ExternalPeer = {
  name: 'xapian',
  missing() {
    return spawnSync('/usr/bin/python3', ['-c', 'import xapian']).status === 0 ? undefined : 'python3-xapian is not installed (apt-get install python3-xapian)';
  },
  command() {
    return ['/usr/bin/python3', join(REPO_ROOT, 'bench', 'peers', 'xapian_scale.py')];
  },
};

export const EXTERNAL_PEERS: readonly ExternalPeer[] = [lucenePeer('lucene', []), lucenePeer('lucene-all', ['--all-words']), xapian];

async function run(cmd: string[], input?: AsyncIterable<string> | Iterable<string>): Promise<unknown> {
  const p = spawn(cmd[0]!, cmd.slice(1), { stdio: [input ? 'pipe' : 'ignore', 'pipe', 'inherit'] });
  const out: Buffer[] = [];
  p.stdout!.on('data', (b: Buffer) => out.push(b));
  const exited = once(p, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  if (input) {
    let broken = false;
    p.stdin!.on('error', () => { broken = true; });
    for await (const line of input) {
      if (broken) break;
      if (!p.stdin!.write(line)) await Promise.race([once(p.stdin!, 'drain'), exited]);
    }
    p.stdin!.end();
  }
  const [code, signal] = await exited;
  if (code !== 0) throw new Error(`scale: ${cmd.slice(-3).join(' ')} failed (${code ?? signal})`);
  return JSON.parse(Buffer.concat(out).toString('utf8'));
}

export interface PeerBuild { docs: number; buildMs: number; buildCpuMs: number; peakRss: number; bytes: number; segments: number }

/** Builds the peer's index in `dir` from the documents; `textBytes` counts the UTF-8 text it was given. */
export async function buildPeer(peer: ExternalPeer, work: string, dir: string, docs: AsyncIterable<SynthDoc> | Iterable<SynthDoc>): Promise<PeerBuild & { textBytes: number }> {
  let textBytes = 0;
  async function* lines(): AsyncGenerator<string> {
    for await (const d of docs) {
      textBytes += Buffer.byteLength(d.title) + Buffer.byteLength(d.text);
      yield `${JSON.stringify({ title: d.title, text: d.text })}\n`;
    }
  }
  const report = await run([...peer.command(work), 'build', dir], lines()) as PeerBuild;
  return { ...report, textBytes };
}

/**
 * One query kind's timed pass: `ms` from each query's text to its hits (as Quarry is timed); `searchMs`,
 * when the peer can tell, the search alone within it (Lucene: the parsed query given to the searcher,
 * neither the parse nor the reading of the hits' stored ids).
 */
export interface PeerTiming { kind: string; exactTotal: boolean; ms: number[]; cpu: number[]; totals: number[]; searchMs?: number[] }
export interface PeerServe { openMs: number; rssBase: number; rssOpen: number; rssAfter: number; timings: PeerTiming[] }

/** Opens the peer's index in a fresh process and times the queries (kind and text), each kind twice: estimated and exact totals. */
export async function servePeer(peer: ExternalPeer, work: string, dir: string, queries: readonly { kind: string; q: string }[]): Promise<PeerServe> {
  const file = join(work, `${peer.name}-queries.tsv`);
  writeFileSync(file, queries.map((q) => `${q.kind}\t${q.q.toLowerCase().replace(/[\t\n\r]/g, ' ')}\n`).join(''));
  return await run([...peer.command(work), 'serve', dir, file]) as PeerServe;
}
