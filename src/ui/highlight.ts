/**
 * Which words of a text to highlight for a query, shared by the server-rendered pages (src/ui/pages.ts)
 * and the browser scripts (web/*.ts). Pure: no DOM, no Node. It splits a text into runs, each a hit or
 * not; the callers turn runs into escaped HTML or DOM text nodes, so a document's text is never markup.
 *
 * The query's positive terms are its words minus `-excluded` ones and `site:` filters, operators and
 * quotes removed. A word is a hit when it equals a term or when both reduce to the same crude stem (a
 * few English suffixes and a final e cut), which follows the engine's stemming closely enough to guide
 * the eye.
 */

const WORD = /[\p{L}\p{N}]+/gu;

function stem(word: string): string {
  let w = word.toLowerCase();
  if (w.length > 4 && /ie[sd]$/.test(w)) w = `${w.slice(0, -3)}y`;
  else if (w.length > 4 && /(ss|ch|sh|x|z)es$/.test(w)) w = w.slice(0, -2);
  else {
    for (const suffix of ['ings', 'ing', 'edly', 'ed', 'ly', 's']) {
      if (w.length > suffix.length + 2 && w.endsWith(suffix) && !w.endsWith('ss')) { w = w.slice(0, -suffix.length); break; }
    }
  }
  return w.length > 3 && w.endsWith('e') ? w.slice(0, -1) : w;
}

/** The stems of the words a query looks for (excluded terms and `site:` left out). */
export function queryTerms(q: string): Set<string> {
  const terms = new Set<string>();
  for (const clause of q.match(/-?"[^"]*"?|\S+/g) ?? []) {
    if (clause.startsWith('-') || /^[+]?site:/i.test(clause)) continue;
    for (const w of clause.match(WORD) ?? []) terms.add(stem(w));
  }
  return terms;
}

export interface Run {
  text: string;
  hit: boolean;
}

/** `text` cut into runs: words matching `terms` are hits; everything between them is not. */
export function highlightRuns(text: string, terms: ReadonlySet<string>): Run[] {
  const runs: Run[] = [];
  if (terms.size === 0) return text === '' ? runs : [{ text, hit: false }];
  let last = 0;
  for (const m of text.matchAll(WORD)) {
    if (!terms.has(stem(m[0]))) continue;
    if (m.index > last) runs.push({ text: text.slice(last, m.index), hit: false });
    runs.push({ text: m[0], hit: true });
    last = m.index + m[0].length;
  }
  if (last < text.length) runs.push({ text: text.slice(last), hit: false });
  return runs;
}

/** The host of a URL for display, or the URL itself when it does not parse. */
export function displayHost(url: string): string {
  try { return new URL(url).host; } catch { return url; }
}

/** Whether a URL may become a link: http(s) only, so a `javascript:` or `data:` URL stays text. */
export function isWebUrl(url: string): boolean {
  return /^https?:\/\//i.test(url);
}
