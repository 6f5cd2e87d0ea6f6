/**
 * The own corpus's sources (CONTRACT §3): the docs directory, the site pages and the library, listed as
 * files with a stamp (size and modification time) so a later start can tell what changed without reading
 * anything, then read and extracted one at a time.
 *
 * Keys: `file:docs/<rel>`, `file:site/<rel>`, `file:library/<rel>` (see ./cid.ts). A library that is a
 * man-page tree (it has `manN/` directories) is read as man pages from the configured sections only
 * (the English top level, not the translations), one page per real file: a symlinked alias is the same
 * page and is skipped, so is a `.so` alias page (it has no text of its own).
 */
import { lstatSync, readdirSync, readFileSync, statSync, existsSync, type Stats } from 'node:fs';
import { join, relative, sep, basename } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { COMMAND_DIRS, type CorporaConfig } from './config.js';
import { fileKey } from './cid.js';
import { extract, formatOfFile, type DocFormat } from './extract.js';
import type { ReadItem } from './ingest.js';

export type OwnSourceName = 'docs' | 'site' | 'library';

export interface SourceFile {
  source: OwnSourceName;
  key: string;
  path: string;
  /** `<size>:<mtime ms>`: changes whenever the file does (for practical purposes). */
  stamp: string;
  format: DocFormat;
}

/** A directory walk stops after this many entries, so a misconfigured `/` cannot run forever. */
export const MAX_WALK_ENTRIES = 200_000;

function stampOf(st: Stats): string {
  return `${st.size}:${Math.trunc(st.mtimeMs)}`;
}

/** Files of a plain directory tree with an extractable format, in sorted order; hidden entries skipped. */
function walk(root: string, source: OwnSourceName, out: SourceFile[], limit: { left: number }): void {
  const visit = (dir: string) => {
    let names: string[];
    try { names = readdirSync(dir).sort(); } catch { return; }
    for (const name of names) {
      if (limit.left-- <= 0) return;
      if (name.startsWith('.') || name === 'node_modules') continue;
      const p = join(dir, name);
      let st: Stats;
      try { st = lstatSync(p); } catch { continue; }
      if (st.isSymbolicLink()) continue; // a link is either an alias (already listed) or a way out of the tree
      if (st.isDirectory()) { visit(p); continue; }
      if (!st.isFile()) continue;
      const format = formatOfFile(name);
      if (!format) continue;
      const rel = relative(root, p).split(sep).join('/');
      out.push({ source, key: fileKey(source, rel), path: p, stamp: stampOf(st), format });
    }
  };
  visit(root);
}

/** Names of the installed commands (one directory listing each, instead of a stat per man page). */
function installedCommands(): Set<string> {
  const names = new Set<string>();
  for (const d of COMMAND_DIRS) {
    try { for (const n of readdirSync(d)) names.add(n); } catch { /* absent on this machine */ }
  }
  return names;
}

function isManTree(dir: string): boolean {
  try { return readdirSync(dir).some((n) => /^man[0-9]/.test(n)); } catch { return false; }
}

/** Lists every file of the configured own sources. Missing directories contribute nothing. */
export function listOwnSources(config: CorporaConfig): SourceFile[] {
  const out: SourceFile[] = [];
  const limit = { left: MAX_WALK_ENTRIES };
  const { docs, site, library } = config.own;
  if (docs && existsSync(docs)) walk(docs, 'docs', out, limit);
  if (site && existsSync(site)) walk(site, 'site', out, limit);
  if (library && existsSync(library.dir)) {
    const cap = library.maxDocs === 0 ? Infinity : library.maxDocs;
    if (isManTree(library.dir)) {
      let count = 0;
      const commands = library.commandsOnly ? installedCommands() : undefined;
      for (const section of library.sections) {
        const dir = join(library.dir, `man${section}`);
        let names: string[];
        try { names = readdirSync(dir).sort(); } catch { continue; }
        for (const name of names) {
          if (count >= cap || limit.left-- <= 0) break;
          if (commands && !commands.has(name.replace(/\.gz$/, '').replace(/\.[^.]*$/, ''))) continue;
          const p = join(dir, name);
          let st: Stats;
          try { st = lstatSync(p); } catch { continue; }
          if (!st.isFile()) continue; // symlinks are aliases of a page listed under its own name
          out.push({ source: 'library', key: fileKey('library', `man${section}/${name}`), path: p, stamp: stampOf(st), format: 'man' });
          count++;
        }
      }
    } else {
      const lib: SourceFile[] = [];
      walk(library.dir, 'library', lib, limit);
      out.push(...lib.slice(0, cap));
    }
  }
  return out;
}

/** Reads and extracts one source file; a file too large, unreadable or without text is a skip. */
export function readSourceFile(file: SourceFile, maxRecordBytes: number, maxTextChars: number): ReadItem {
  const where = file.path;
  try {
    const size = statSync(file.path).size;
    if (size > maxRecordBytes) return { ok: false, where, reason: `file of ${size} bytes is over the limit of ${maxRecordBytes}` };
    let bytes = readFileSync(file.path);
    if (file.path.endsWith('.gz')) bytes = gunzipSync(bytes, { maxOutputLength: maxRecordBytes });
    const source = new TextDecoder('utf-8').decode(bytes);
    const fallback = basename(file.path).replace(/\.gz$/, '');
    const { title, text } = extract(file.format, source, fallback);
    if (text.trim() === '') return { ok: false, where, reason: 'no text (an alias page or an empty file)' };
    return { ok: true, doc: { key: file.key, title, text: text.slice(0, maxTextChars) } };
  } catch (err) {
    return { ok: false, where, reason: (err as Error).message };
  }
}
