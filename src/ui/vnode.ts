/**
 * A tiny element tree that the pages are described with once and then made twice: as escaped HTML by
 * the server (`toHtml`) and as DOM nodes by the browser scripts (`toDom` in web/dom.ts). Text is always
 * a text node or escaped, never parsed as markup; attribute values are escaped, and only the view code
 * (never data) chooses attribute names. Links to data-supplied URLs are filtered by `isWebUrl`.
 */
export type Attrs = Record<string, string | number | boolean | undefined>;
export interface VElement { tag: string; attrs: Attrs; children: VNode[] }
export type VNode = string | VElement | null | undefined | false;

export function h(tag: string, attrs: Attrs = {}, ...children: (VNode | VNode[])[]): VElement {
  return { tag, attrs, children: children.flat() };
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const VOID = new Set(['br', 'hr', 'img', 'input', 'link', 'meta']);

export function toHtml(node: VNode | VNode[]): string {
  if (Array.isArray(node)) return node.map(toHtml).join('');
  if (node === null || node === undefined || node === false) return '';
  if (typeof node === 'string') return escapeHtml(node);
  let out = `<${node.tag}`;
  for (const [k, v] of Object.entries(node.attrs)) {
    if (v === undefined || v === false) continue;
    out += v === true ? ` ${k}` : ` ${k}="${escapeHtml(String(v))}"`;
  }
  out += '>';
  if (VOID.has(node.tag)) return out;
  return `${out}${toHtml(node.children)}</${node.tag}>`;
}
