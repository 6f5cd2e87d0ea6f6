/**
 * The analyzer's tokens of a stored text, read from the tokens its segment's writer scanned it into for
 * `.sto` (word-codes.ts: maximal runs of word and of other characters, with ids), each distinct token
 * analyzed once per segment. Without it a build walks every text twice, once for each kind of token, and
 * looks up every analyzer token's folded form in a hash map of the segment's forms; the walk and the
 * lookups were a third of a build's CPU on the Wikipedia extract.
 *
 * The two tokenizations split alike, so a text's analyzer tokens are those of its stored tokens in order:
 * a word token is analyzed on its own, and a separator token must yield no analyzer token and end any
 * that runs into it. The analyzer itself decides that a separator does ("clean"): it yields nothing alone,
 * and "a" + separator + "a" gives two tokens "a". A stored-text separator the analyzer reads as letters
 * (`²` in "x²" folds to the digit 2, joining the `x`) is not clean, and a text that holds one is tokenized
 * whole by its writer.
 */
import { analyzeSurfaces } from '../analysis/analyzer.js';
import { IntBuffer } from './bytes.js';

/** What the analysis needs of the scanned texts: each token id's text and kind. */
export interface ScannedTokens {
  token(id: number): string;
  isWord(id: number): boolean;
}

/**
 * Whether the analyzer splits words at `separator`: it yields no token alone, and `a` + separator + `a`
 * gives two tokens `a` (a "clean" separator; the stored text's word characters are chosen by it too).
 */
export function splitsWordsAt(separator: string): boolean {
  if (analyzeSurfaces(separator).length !== 0) return false;
  const around = analyzeSurfaces(`a${separator}a`);
  return around.length === 2 && around[0] === 'a' && around[1] === 'a';
}

/** `count` of a token whose analysis is not known yet. */
const UNKNOWN = -1;
/** `count` of a separator the analyzer does not split at (a text holding it is tokenized whole). */
const UNCLEAN = -2;

export class StoredTokenAnalysis {
  /** Per token id, the analyzer tokens it yields, or UNKNOWN, or UNCLEAN. */
  private count = new Int32Array(1 << 12).fill(UNKNOWN);
  /** Per token id, where its surfaces start in `surfaces`. */
  private start = new Int32Array(1 << 12);
  private readonly surfaces = new IntBuffer();
  /** Tokens analyzed so far. */
  private analyzed = 0;

  /**
   * `intern` numbers a folded surface form (the writer's index of it); it is called once per distinct
   * form and stored token.
   */
  constructor(private readonly tokens: ScannedTokens, private readonly intern: (surface: string) => number) {}

  /** Bytes of memory the analyses take: 8 a token analyzed and 4 a form it yields. */
  get memoryBytes(): number {
    return 8 * this.analyzed + 4 * this.surfaces.length;
  }

  /**
   * Appends to `out` the interned surfaces of the analyzer's tokens of the text scanned into
   * `ids[0, n)`, in order, and returns true; or returns false, leaving `out` in an unspecified state,
   * when the text has a separator the analyzer does not split at.
   */
  surfacesOf(ids: Int32Array, n: number, out: IntBuffer): boolean {
    out.length = 0;
    for (let k = 0; k < n; k++) {
      const id = ids[k]!;
      if (id >= this.count.length) this.grow(id);
      let c = this.count[id]!;
      if (c === UNKNOWN) c = this.analyze(id);
      if (c === UNCLEAN) return false;
      if (c === 0) continue;
      out.reserve(c);
      const a = out.a;
      const s = this.surfaces.a;
      let from = this.start[id]!;
      let at = out.length;
      for (const end = from + c; from < end; ) a[at++] = s[from++]!;
      out.length = at;
    }
    return true;
  }

  /** Analyzes token `id` and records its tokens; returns their count or UNCLEAN. */
  private analyze(id: number): number {
    const token = this.tokens.token(id);
    const found = analyzeSurfaces(token);
    let c = found.length;
    if (!this.tokens.isWord(id)) c = c === 0 && splitsWordsAt(token) ? 0 : UNCLEAN;
    this.start[id] = this.surfaces.length;
    if (c > 0) for (const f of found) this.surfaces.push(this.intern(f));
    this.count[id] = c;
    this.analyzed++;
    return c;
  }

  private grow(id: number): void {
    let size = this.count.length * 2;
    while (size <= id) size *= 2;
    const count = new Int32Array(size).fill(UNKNOWN);
    count.set(this.count);
    const start = new Int32Array(size);
    start.set(this.start);
    this.count = count;
    this.start = start;
  }
}

