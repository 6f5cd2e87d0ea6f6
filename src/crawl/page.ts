/**
 * What the crawler reads from a fetched HTML page besides its text (which `extractHtml` gives, as for
 * imports): the outlinks, `<link rel=canonical>`, `<base href>`, the robots directives of `<meta
 * name=robots>` (and of a meta named for our token) and of `X-Robots-Tag`, and the page's language.
 */
import { Parser } from 'htmlparser2';
import { resolveLink } from './url.js';

export interface PageFacts {
  /** Canonical absolute URLs of the followable links, in order, without repeats. */
  links: string[];
  /** The page's `<link rel=canonical>`, resolved and canonicalised. */
  canonical?: string;
  noindex: boolean;
  nofollow: boolean;
  /** `<html lang>` or `<meta http-equiv=content-language>`, primary subtag, lower case. */
  lang?: string;
}

/** Links kept from one page, at most (a page of a million links is a trap, not a hub). */
export const MAX_LINKS_PER_PAGE = 2000;

/** Applies a robots directive list (`noindex, nofollow`, `none`, `all`) to `facts`. */
export function applyRobotsDirectives(value: string, facts: { noindex: boolean; nofollow: boolean }): void {
  for (const d of value.toLowerCase().split(',').map((s) => s.trim())) {
    if (d === 'noindex' || d === 'none') facts.noindex = true;
    if (d === 'nofollow' || d === 'none') facts.nofollow = true;
  }
}

/**
 * Applies an `X-Robots-Tag` header value: directives for every crawler, or for the one named before a
 * colon (`quarrybot: noindex`); directives for other crawlers are ignored.
 */
export function applyXRobotsTag(header: string, token: string, facts: { noindex: boolean; nofollow: boolean }): void {
  for (const part of header.split(/,(?=\s*[A-Za-z_-]+\s*:)/)) {
    const m = /^\s*([A-Za-z_-]+)\s*:(.*)$/.exec(part);
    if (m && !/^(unavailable_after|max-snippet|max-image-preview|max-video-preview)$/i.test(m[1]!)) {
      if (m[1]!.toLowerCase() === token.toLowerCase()) applyRobotsDirectives(m[2]!, facts);
    } else {
      applyRobotsDirectives(part, facts);
    }
  }
}

/** Reads the facts of an HTML page fetched from `url`. Total: any input gives a result. */
export function readPage(html: string, url: string, token: string): PageFacts {
  const facts: PageFacts = { links: [], noindex: false, nofollow: false };
  const hrefs: string[] = [];
  let base = url;
  let canonicalHref: string | undefined;
  const lowerToken = token.toLowerCase();
  const parser = new Parser({
    onopentag(name, attrs) {
      switch (name) {
        case 'a': case 'area': {
          const href = attrs['href'];
          if (href !== undefined && !/\bnofollow\b/i.test(attrs['rel'] ?? '') && hrefs.length < MAX_LINKS_PER_PAGE) hrefs.push(href);
          break;
        }
        case 'link':
          if (attrs['href'] !== undefined && /(^|\s)canonical(\s|$)/i.test(attrs['rel'] ?? '') && canonicalHref === undefined) canonicalHref = attrs['href'];
          break;
        case 'base':
          if (attrs['href'] !== undefined) { try { base = new URL(attrs['href'], url).href; } catch { /* ignored */ } }
          break;
        case 'meta': {
          const n = (attrs['name'] ?? '').toLowerCase();
          if ((n === 'robots' || n === lowerToken) && attrs['content'] !== undefined) applyRobotsDirectives(attrs['content'], facts);
          if ((attrs['http-equiv'] ?? '').toLowerCase() === 'content-language' && attrs['content'] && !facts.lang) facts.lang = primaryTag(attrs['content']);
          break;
        }
        case 'html':
          if (attrs['lang']) facts.lang = primaryTag(attrs['lang']);
          break;
      }
    },
  }, { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true });
  parser.write(html);
  parser.end();
  const seen = new Set<string>();
  for (const h of hrefs) {
    const link = resolveLink(h, base);
    if (link && !seen.has(link)) { seen.add(link); facts.links.push(link); }
  }
  if (canonicalHref !== undefined) {
    const c = resolveLink(canonicalHref, base);
    if (c) facts.canonical = c;
  }
  return facts;
}

function primaryTag(tag: string): string | undefined {
  const m = /^\s*([a-z]{2,3})\b/i.exec(tag);
  return m ? m[1]!.toLowerCase() : undefined;
}

/** Very common words of a few languages: enough to name the language of a page that does not say. */
const STOPWORDS: Record<string, string[]> = {
  en: ['the', 'and', 'of', 'to', 'is', 'in', 'that', 'it', 'for', 'with', 'as', 'this', 'are', 'be', 'by'],
  de: ['der', 'die', 'und', 'das', 'ist', 'nicht', 'mit', 'sich', 'auf', 'für', 'den', 'ein', 'eine', 'dem', 'zu'],
  fr: ['le', 'la', 'les', 'et', 'des', 'est', 'une', 'dans', 'que', 'pour', 'pas', 'sur', 'du', 'au', 'qui'],
  es: ['el', 'los', 'las', 'y', 'que', 'del', 'en', 'una', 'por', 'con', 'para', 'es', 'se', 'lo', 'como'],
  it: ['il', 'di', 'che', 'e', 'della', 'per', 'una', 'sono', 'gli', 'non', 'con', 'del', 'nel', 'alla', 'si'],
  nl: ['de', 'het', 'een', 'en', 'van', 'is', 'dat', 'niet', 'op', 'te', 'zijn', 'met', 'voor', 'ook', 'wordt'],
  pt: ['o', 'os', 'as', 'e', 'do', 'da', 'em', 'um', 'uma', 'para', 'com', 'não', 'que', 'dos', 'mais'],
};
const STOP_LOOKUP = new Map<string, string[]>();
for (const [lang, list] of Object.entries(STOPWORDS)) for (const w of list) STOP_LOOKUP.set(w, [...(STOP_LOOKUP.get(w) ?? []), lang]);

/**
 * The language of `text` by its commonest words (the first 2000 words), or undefined when too few
 * of them are known words. A declared language (`<html lang>`) wins over this guess.
 */
export function guessLanguage(text: string): string | undefined {
  const scores = new Map<string, number>();
  let n = 0;
  let known = 0;
  for (const m of text.toLowerCase().matchAll(/[\p{L}]+/gu)) {
    if (++n > 2000) break;
    const langs = STOP_LOOKUP.get(m[0]);
    if (!langs) continue;
    known++;
    for (const l of langs) scores.set(l, (scores.get(l) ?? 0) + 1);
  }
  if (known < 5) return undefined;
  let best: string | undefined;
  let bestScore = 0;
  for (const [l, s] of scores) if (s > bestScore) { best = l; bestScore = s; }
  return best;
}
