/** The browser's half of src/ui/vnode.ts: element trees made into DOM nodes, text as text nodes only. */
import type { VNode } from '../src/ui/vnode.js';

export function toDom(node: VNode | VNode[]): Node {
  if (Array.isArray(node)) {
    const frag = document.createDocumentFragment();
    for (const n of node) frag.append(toDom(n));
    return frag;
  }
  if (node === null || node === undefined || node === false) return document.createDocumentFragment();
  if (typeof node === 'string') return document.createTextNode(node);
  const el = document.createElement(node.tag);
  for (const [k, v] of Object.entries(node.attrs)) {
    if (v === undefined || v === false) continue;
    el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of node.children) el.append(toDom(c));
  return el;
}

/** Replaces the children of `el` with `node`. */
export function render(el: Element, node: VNode | VNode[]): void {
  el.replaceChildren(toDom(node));
}
