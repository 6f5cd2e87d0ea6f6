/** The digest of a live document set shared by the durability test and its child: cid order, title and text. */
import { createHash } from 'node:crypto';

export function digestOf(docs: Map<bigint, { title: string; text: string }>): string {
  const h = createHash('sha256');
  const cids = [...docs.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const c of cids) {
    const d = docs.get(c)!;
    h.update(`${c}\t${d.title}\t${d.text}\n`);
  }
  return `${cids.length}:${h.digest('hex').slice(0, 32)}`;
}
