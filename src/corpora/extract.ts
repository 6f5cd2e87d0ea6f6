/**
 * Extraction: source bytes → `{title, text}`, one function per format (HTML, Markdown, plain text, troff
 * man pages). Each is total: any input, however broken, gives a result (possibly an empty text), never a
 * throw, and each runs in time linear in its input, so hostile pages cannot stall an import.
 *
 * The text keeps paragraph breaks as newlines (snippets read better) and collapses other white space.
 */
import { Parser } from 'htmlparser2';

export interface Extracted {
  title: string;
  text: string;
}

/** A title longer than this is cut (titles are shown in result lists). */
export const MAX_TITLE_CHARS = 300;

function clip(s: string, max: number): string {
  return s.length <= max ? s : s.slice(0, max - 1).trimEnd() + '…';
}

/** Collapses runs of spaces/tabs, trims lines, keeps at most one blank line between paragraphs. */
export function tidyText(s: string): string {
  return s
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t\f\v\u00a0]+/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** Elements whose content is never text of the page. */
const SKIP = new Set(['script', 'style', 'noscript', 'template', 'svg', 'math', 'iframe', 'object', 'canvas', 'select']);
/** Elements that end a line of text (so words on both sides do not glue together). */
const BLOCK = new Set([
  'address', 'article', 'aside', 'blockquote', 'br', 'dd', 'details', 'div', 'dl', 'dt', 'fieldset', 'figcaption',
  'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'p',
  'pre', 'section', 'summary', 'table', 'td', 'th', 'tr', 'ul', 'caption', 'option', 'body', 'html',
]);

/**
 * HTML → title (the `<title>`, else the first `<h1>`, else `fallbackTitle`) and the visible text.
 * Entities are decoded; scripts, styles and the like are dropped.
 */
export function extractHtml(html: string, fallbackTitle = ''): Extracted {
  const parts: string[] = [];
  let title = '';
  let h1 = '';
  let inTitle = 0;
  let inH1 = 0;
  let skipDepth = 0;
  let sawTitle = false;
  const parser = new Parser(
    {
      onopentag(name) {
        if (name === 'title') { inTitle++; return; }
        if (SKIP.has(name)) { skipDepth++; return; }
        if (name === 'h1') inH1++;
        if (BLOCK.has(name)) parts.push('\n');
      },
      ontext(data) {
        if (inTitle > 0) { title += data; return; }
        if (skipDepth > 0) return;
        if (inH1 > 0 && !sawTitle) h1 += data;
        parts.push(data);
      },
      onclosetag(name) {
        if (name === 'title') { if (inTitle > 0) inTitle--; sawTitle = sawTitle || title.trim() !== ''; return; }
        if (SKIP.has(name)) { if (skipDepth > 0) skipDepth--; return; }
        if (name === 'h1' && inH1 > 0) { inH1--; if (h1.trim() !== '') sawTitle = true; }
        if (BLOCK.has(name)) parts.push('\n');
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  const t = oneLine(title) || oneLine(h1) || fallbackTitle;
  return { title: clip(t, MAX_TITLE_CHARS), text: tidyText(parts.join('')).replace(/\n{2,}/g, '\n') };
}

/**
 * Markdown → title (the first heading, else the first line) and the text without markup: headings keep
 * their words, links and images keep their text, emphasis and code marks go, fenced code stays as text.
 */
export function extractMarkdown(md: string, fallbackTitle = ''): Extracted {
  const lines = md.replace(/\r\n?/g, '\n').split('\n');
  let title = '';
  const out: string[] = [];
  let inFence = false;
  let inFrontMatter = lines[0]?.trim() === '---';
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    if (inFrontMatter) {
      if (i > 0 && line.trim() === '---') inFrontMatter = false;
      else if (!title) {
        const m = /^title:\s*["']?(.*?)["']?\s*$/.exec(line);
        if (m && m[1]) title = m[1];
      }
      continue;
    }
    if (/^\s*(```|~~~)/.test(line)) { inFence = !inFence; out.push(''); continue; }
    if (inFence) { out.push(line); continue; }
    const atx = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (atx) {
      const h = inlineMarkdown(atx[1]!);
      if (!title) title = h;
      out.push('', h, '');
      continue;
    }
    const next = lines[i + 1];
    if (next !== undefined && line.trim() !== '' && /^\s{0,3}(=+|-+)\s*$/.test(next) && !/^\s*[-*+]\s/.test(line)) {
      const h = inlineMarkdown(line.trim());
      if (!title) title = h;
      out.push('', h, '');
      i++;
      continue;
    }
    if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) { out.push(''); continue; } // thematic break
    line = line
      .replace(/^\s{0,3}>\s?/, '') // block quote
      .replace(/^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?/, '') // list marker, task box
      .replace(/^\s*\|?(\s*:?-{2,}:?\s*\|)+\s*:?-*:?\s*$/, '') // table delimiter row
      .replace(/\|/g, ' ');
    out.push(inlineMarkdown(line));
  }
  const text = tidyText(out.join('\n'));
  if (!title) title = text.split('\n').find((l) => l.trim() !== '') ?? '';
  return { title: clip(oneLine(title) || fallbackTitle, MAX_TITLE_CHARS), text };
}

function inlineMarkdown(s: string): string {
  return s
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1') // images
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // links
    .replace(/\[([^\]]*)\]\[[^\]]*\]/g, '$1') // reference links
    .replace(/<\/?[a-zA-Z][^>]*>/g, ' ') // inline HTML tags
    .replace(/`+/g, '')
    .replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, '$2')
    .replace(/(^|[^\w*])[*_](?=\S)(.+?)(?<=\S)[*_](?=[^\w*]|$)/g, '$1$2')
    .replace(/~~(.+?)~~/g, '$1');
}

/** Plain text → title (the first non-empty line) and the text. */
export function extractPlain(text: string, fallbackTitle = ''): Extracted {
  const tidy = tidyText(text);
  const first = tidy.split('\n').find((l) => l.trim() !== '') ?? '';
  return { title: clip(oneLine(first) || fallbackTitle, MAX_TITLE_CHARS), text: tidy };
}

// ---------------------------------------------------------------------------------------------------------
// troff / man(7) and mdoc(7)

/** Named characters worth keeping; any other `\(xx` / `\[name]` becomes nothing. */
const TROFF_CHARS: Record<string, string> = {
  em: '—', en: '–', hy: '-', mi: '-', lq: '"', rq: '"', oq: "'", cq: "'", aq: "'", dq: '"', bu: '•', co: '©',
  rg: '®', tm: '™', de: '°', '>=': '≥', '<=': '≤', '!=': '≠', '->': '→', '<-': '←', mu: '×', pl: '+', eq: '=',
  ti: '~', ha: '^', rs: '\\', sl: '/', ba: '|', or: '|', lh: '', rh: '', sq: '■', ci: '○', dg: '†', fm: "'",
  Fo: '«', Fc: '»', ua: '↑', da: '↓', 'u2014': '—', 'u2013': '–', 'u2019': "'", 'u201C': '"', 'u201D': '"',
};
/** Predefined strings of man/mdoc (`\*(lq` …) that stand for characters. */
const TROFF_STRINGS: Record<string, string> = { lq: '"', rq: '"', R: '®', Tm: '™', aq: "'", q: '"', Lq: '"', Rq: '"' };

/** Inline escapes of one line of troff text → plain text. */
export function troffInline(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c !== '\\') { out += c; continue; }
    const e = s[++i];
    if (e === undefined) break;
    switch (e) {
      case '"': return out; // comment to end of line
      case '#': return out;
      case '\\': case 'e': case 'E': out += '\\'; break;
      case '-': out += '-'; break;
      case ' ': case '~': case '0': out += ' '; break;
      case '&': case '|': case '^': case '%': case ':': case 'c': case ')': case '/': case ',': case 'a': case 'd': case 'u': case 'r': case 'p': case 't': break;
      case '.': out += '.'; break;
      case "'": out += "'"; break;
      case '`': out += '`'; break;
      case '(': { const name = s.slice(i + 1, i + 3); i += 2; out += TROFF_CHARS[name] ?? ''; break; }
      case '[': {
        const end = s.indexOf(']', i + 1);
        if (end < 0) { i = s.length; break; }
        const name = s.slice(i + 1, end); i = end;
        out += TROFF_CHARS[name] ?? (/^u[0-9A-F]{4,5}$/.test(name) ? String.fromCodePoint(parseInt(name.slice(1), 16)) : '');
        break;
      }
      case '*': { // string interpolation
        const n = s[i + 1];
        let name = '';
        if (n === '(') { name = s.slice(i + 2, i + 4); i += 3; }
        else if (n === '[') { const end = s.indexOf(']', i + 2); name = end < 0 ? '' : s.slice(i + 2, end); i = end < 0 ? s.length : end; }
        else if (n !== undefined) { name = n; i += 1; }
        out += TROFF_STRINGS[name] ?? '';
        break;
      }
      case 'f': case 'F': case 'n': case 'g': case 'k': case 'm': case 'V': case 'Y': case '$': { // one-argument escapes
        const n = s[i + 1];
        if (n === '(') i += 3;
        else if (n === '[') { const end = s.indexOf(']', i + 2); i = end < 0 ? s.length : end; }
        else if (n !== undefined) i += 1;
        if (e === 'n' && s[i] === '+') i++;
        break;
      }
      case 's': { // size: \s0 \s+2 \s-1 \s(12 \s[12]
        let j = i + 1;
        if (s[j] === '+' || s[j] === '-') j++;
        if (s[j] === '(') j += 3;
        else if (s[j] === '[') { const end = s.indexOf(']', j); j = end < 0 ? s.length : end + 1; }
        else while (j < s.length && j < i + 3 && /[0-9]/.test(s[j]!)) j++;
        i = j - 1;
        break;
      }
      case 'h': case 'v': case 'w': case 'l': case 'L': case 'o': case 'b': case 'x': case 'D': case 'X': case 'Z': case 'A': case 'C': case 'N': case 'R': case 'S': case 'B': {
        const q = s[i + 1];
        if (q === undefined) break;
        const end = s.indexOf(q, i + 2);
        if (end < 0) { i = s.length; break; }
        const arg = s.slice(i + 2, end);
        i = end;
        if (e === 'C') out += TROFF_CHARS[arg] ?? '';
        else if (e === 'N') { const cp = Number(arg); if (Number.isInteger(cp) && cp >= 32 && cp < 0x110000) out += String.fromCodePoint(cp); }
        else if (e === 'o' || e === 'Z') out += troffInline(arg);
        break;
      }
      case '{': case '}': break;
      default: out += e;
    }
  }
  return out;
}

/** Splits a macro's arguments: white space separates, double quotes group (`""` is a literal quote). */
function macroArgs(s: string): string[] {
  const args: string[] = [];
  let i = 0;
  while (i < s.length) {
    while (s[i] === ' ' || s[i] === '\t') i++;
    if (i >= s.length) break;
    let a = '';
    if (s[i] === '"') {
      i++;
      while (i < s.length) {
        if (s[i] === '"') { if (s[i + 1] === '"') { a += '"'; i += 2; continue; } i++; break; }
        a += s[i++];
      }
    } else {
      while (i < s.length && s[i] !== ' ' && s[i] !== '\t') a += s[i++];
    }
    args.push(a);
  }
  return args;
}

/** man(7) font macros whose arguments alternate fonts and are written without spaces between them. */
const ALTERNATING = new Set(['BI', 'BR', 'IB', 'IR', 'RB', 'RI']);
/** Requests/macros that only break the line. */
const BREAKS = new Set(['br', 'sp', 'PP', 'LP', 'P', 'HP', 'RS', 'RE', 'ne', 'in', 'ti', 'nf', 'fi', 'ad', 'na', 'Pp', 'Bd', 'Ed', 'Bl', 'El', 'EX', 'EE', 'YS']);
/** mdoc macros whose arguments are text (the macro names themselves are dropped). */
const MDOC_SKIP = new Set(['Dd', 'Dt', 'Os', 'Bl', 'El', 'Bd', 'Ed', 'Bf', 'Ef', 'Bk', 'Ek', 'Ns', 'Sm', 'Xr']);

/**
 * A troff man page (man(7) or mdoc(7)) → title `name(section) — description` (from `.TH`/`.Dt` and the
 * NAME section) and its text: macros dropped, their text arguments kept, definitions (`.de`), ignored
 * blocks (`.ig`) and conditionals dropped, inline escapes resolved. `.so` alias pages give an empty text.
 */
export function extractMan(src: string, fallbackTitle = ''): Extracted {
  const lines = src.replace(/\r\n?/g, '\n').split('\n');
  const out: string[] = [];
  let name = '';
  let section = '';
  let inNameSection = false;
  let nameText = '';
  let skipUntilDots = false;
  let braceDepth = 0;
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    // Continuation lines.
    while (line.endsWith('\\') && !line.endsWith('\\\\') && i + 1 < lines.length) line = line.slice(0, -1) + lines[++i]!;
    if (skipUntilDots) { if (/^[.']\s*\.\s*$/.test(line)) skipUntilDots = false; continue; }
    if (braceDepth > 0) {
      braceDepth += (line.match(/\\\{/g)?.length ?? 0) - (line.match(/\\\}/g)?.length ?? 0);
      continue;
    }
    let textLine: string | undefined;
    if (line.startsWith('.') || line.startsWith("'")) {
      const m = /^[.']\s*([^\s\\]*)\s*(.*)$/.exec(line);
      const macro = m?.[1] ?? '';
      const rest = m?.[2] ?? '';
      if (macro === '' || macro.startsWith('\\"') || line.startsWith('.\\"') || line.startsWith("'\\\"")) continue;
      if (macro === 'de' || macro === 'de1' || macro === 'ig' || macro === 'am') { skipUntilDots = true; continue; }
      if (macro === 'if' || macro === 'ie' || macro === 'el' || macro === 'while') {
        braceDepth = Math.max(0, (line.match(/\\\{/g)?.length ?? 0) - (line.match(/\\\}/g)?.length ?? 0));
        continue;
      }
      if (macro === 'so') return { title: clip(fallbackTitle, MAX_TITLE_CHARS), text: '' };
      const args = macroArgs(rest).map(troffInline);
      switch (macro) {
        case 'TH': case 'Dt':
          name = args[0] ?? ''; section = args[1] ?? '';
          if (macro === 'Dt') name = name.toLowerCase();
          continue;
        case 'SH': case 'Sh': {
          const heading = args.join(' ');
          inNameSection = /^(NAME|NOM|NOMBRE|NAMN|NAAM)$/i.test(heading.trim());
          out.push('', heading, '');
          continue;
        }
        case 'SS': case 'Ss': out.push('', args.join(' '), ''); continue;
        case 'TP': case 'IP': case 'TQ': case 'It':
          out.push('');
          if (macro === 'IP' && args[0]) out.push(args[0]);
          if (macro === 'It' && args.length) textLine = args.filter((a) => !/^(Fl|Ar|Op|Cm|Pa|Ev|Xo|Xc|Nm)$/.test(a)).join(' ');
          else continue;
          break;
        case 'Nm': textLine = args.join(' ') || name; break;
        case 'Nd': textLine = '— ' + args.join(' '); break;
        case 'Fl': textLine = args.map((a) => (/^[A-Z][a-z]$/.test(a) ? a : '-' + a)).filter((a) => !/^[A-Z][a-z]$/.test(a)).join(' ') || '-'; break;
        default:
          if (BREAKS.has(macro)) { out.push(''); continue; }
          if (ALTERNATING.has(macro)) { textLine = args.join(''); break; }
          if (/^(B|I|SM|SB|UR|MT|OP|SY|R)$/.test(macro)) { textLine = args.join(' '); break; }
          if (/^[A-Z][a-z]$/.test(macro) && !MDOC_SKIP.has(macro)) { textLine = args.filter((a) => !/^[A-Z][a-z]$/.test(a)).join(' '); break; }
          if (macro === 'Xr') { textLine = args[1] ? `${args[0]}(${args[1]})` : args[0] ?? ''; break; }
          continue; // any other request: formatting only
      }
    } else {
      textLine = troffInline(line);
    }
    if (textLine === undefined) continue;
    if (inNameSection) nameText += ' ' + textLine;
    out.push(textLine);
  }
  // In troff a source line break is a space; only the breaks recorded as '' separate paragraphs.
  const paragraphs: string[] = [];
  let para: string[] = [];
  for (const l of out) {
    if (l.trim() === '') { if (para.length) paragraphs.push(para.join(' ')); para = []; }
    else para.push(l);
  }
  if (para.length) paragraphs.push(para.join(' '));
  const text = tidyText(paragraphs.join('\n'));
  const desc = oneLine(nameText).replace(/\s+-\s+/, ' — ');
  let title: string;
  if (name) {
    const base = `${name.toLowerCase()}${section ? `(${section})` : ''}`;
    const dash = desc.indexOf('—');
    title = dash >= 0 ? `${base} — ${desc.slice(dash + 1).trim()}` : base;
  } else {
    title = desc || fallbackTitle;
  }
  return { title: clip(title || fallbackTitle, MAX_TITLE_CHARS), text };
}

export type DocFormat = 'html' | 'markdown' | 'text' | 'man';

/** The format of a local file by its name (after a `.gz` suffix is removed), or undefined to skip it. */
export function formatOfFile(name: string): DocFormat | undefined {
  const n = name.toLowerCase().replace(/\.gz$/, '');
  if (/\.(html?|xhtml)$/.test(n)) return 'html';
  if (/\.(md|markdown|mdown)$/.test(n)) return 'markdown';
  if (/\.(txt|text|rst|adoc)$/.test(n) || /(^|\/)(readme|license|copying|changelog|news)$/.test(n)) return 'text';
  if (/\.([1-9][a-z0-9]*|man|n|l)$/.test(n)) return 'man';
  return undefined;
}

export function extract(format: DocFormat, source: string, fallbackTitle = ''): Extracted {
  switch (format) {
    case 'html': return extractHtml(source, fallbackTitle);
    case 'markdown': return extractMarkdown(source, fallbackTitle);
    case 'text': return extractPlain(source, fallbackTitle);
    case 'man': return extractMan(source, fallbackTitle);
  }
}
