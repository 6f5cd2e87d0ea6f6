/**
 * Sitemaps (sitemaps.org 0.9): a `<urlset>` lists pages, a `<sitemapindex>` lists further sitemaps;
 * either may be gzipped (sniffed by its magic number, not its name). A plain-text sitemap (one URL a
 * line) is read too. Parsed with htmlparser2 in XML mode; at most 50,000 entries, as the protocol says.
 */
import { Parser } from 'htmlparser2';
import { gunzipSync } from 'node:zlib';
import { resolveLink } from './url.js';

export const MAX_SITEMAP_ENTRIES = 50_000;

export interface SitemapEntries { pages: string[]; sitemaps: string[] }

/** The entries of a sitemap fetched from `url`; gzip is undone within `maxBytes`. Total: never throws. */
export function readSitemap(bytes: Buffer, url: string, maxBytes: number): SitemapEntries {
  const out: SitemapEntries = { pages: [], sitemaps: [] };
  let data = bytes;
  if (data[0] === 0x1f && data[1] === 0x8b) {
    try { data = gunzipSync(data, { maxOutputLength: maxBytes }); } catch { return out; }
  }
  const text = data.toString('utf8');
  if (!/^\s*(<\?xml|<)/.test(text)) {
    for (const line of text.split(/\r?\n/)) {
      const link = resolveLink(line, url);
      if (link && out.pages.length < MAX_SITEMAP_ENTRIES) out.pages.push(link);
    }
    return out;
  }
  let container: 'url' | 'sitemap' | undefined;
  let inLoc = false;
  let loc = '';
  const parser = new Parser({
    onopentag(name) {
      const n = name.toLowerCase().replace(/^.*:/, '');
      if (n === 'url' || n === 'sitemap') container = n;
      else if (n === 'loc') { inLoc = true; loc = ''; }
    },
    ontext(t) { if (inLoc) loc += t; },
    onclosetag(name) {
      const n = name.toLowerCase().replace(/^.*:/, '');
      if (n === 'loc') {
        inLoc = false;
        const link = resolveLink(loc, url);
        if (link && out.pages.length + out.sitemaps.length < MAX_SITEMAP_ENTRIES) {
          (container === 'sitemap' ? out.sitemaps : out.pages).push(link);
        }
      } else if (n === 'url' || n === 'sitemap') container = undefined;
    },
  }, { xmlMode: true, decodeEntities: true });
  parser.write(text);
  parser.end();
  return out;
}
