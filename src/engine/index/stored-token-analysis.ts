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

/** `yields` of a token whose analysis is not known yet. */
const UNKNOWN = -1;
/** `yields` of a separator the analyzer does not split at (a text holding it is tokenized whole). */
const UNCLEAN = -2;
/** `yields` of a token that yields no analyzer token (a clean separator, or a word of nothing but marks). */
const NONE = -3;
/** `yields` of a token that yields several, at `-(yields + MANY)` in `many`. */
const MANY = 4;

export class StoredTokenAnalysis {
  /**
   * Per token id, what it yields: the number of its one surface (most tokens: a word), or UNKNOWN,
   * UNCLEAN, NONE, or where its several surfaces are listed: a text's token is read at one place, not at
   * its count, its start and its surfaces (a segment of perturbed text holds ~10^6 distinct tokens, where
   * each array read by id misses the cache), and takes 4 bytes, not 12.
   */
  private yields = new Int32Array(1 << 12).fill(UNKNOWN);
  /** The surfaces of tokens that yield several: per such token its count, then its surfaces. */
  private readonly many = new IntBuffer();
  /** Tokens analyzed so far. */
  private analyzed = 0;

  /**
   * `intern` numbers a folded surface form (the writer's index of it); it is called once per distinct
   * form and stored token.
   */
  constructor(private readonly tokens: ScannedTokens, private readonly intern: (surface: string) => number) {}

  /** Bytes of memory the analyses take: 4 a token analyzed and 4 a form of those that yield several. */
  get memoryBytes(): number {
    return 4 * this.analyzed + 4 * this.many.length;
  }

  /**
   * Appends to `out` the interned surfaces of the analyzer's tokens of the text scanned into
   * `ids[0, n)`, in order, and returns true; or returns false, leaving `out` in an unspecified state,
   * when the text has a separator the analyzer does not split at.
   */
  surfacesOf(ids: Int32Array, n: number, out: IntBuffer): boolean {
    out.length = 0;
    out.reserve(n);
    let a = out.a;
    let at = 0;
    for (let k = 0; k < n; k++) {
      const id = ids[k]!;
      if (id >= this.yields.length) this.grow(id);
      let v = this.yields[id]!;
      if (v === UNKNOWN) v = this.analyze(id);
      if (v >= 0) {
        a[at++] = v;
      } else if (v === UNCLEAN) {
        return false;
      } else if (v !== NONE) {
        const m = this.many.a;
        let from = -(v + MANY);
        const c = m[from++]!;
        out.length = at;
        out.reserve(c + n - k);
        a = out.a;
        for (const end = from + c; from < end; ) a[at++] = m[from++]!;
      }
    }
    out.length = at;
    return true;
  }

  /** Analyzes token `id` and records what it yields; returns that (`yields`' value). */
  private analyze(id: number): number {
    const token = this.tokens.token(id);
    const found = analyzeSurfaces(token);
    let v: number;
    if (!this.tokens.isWord(id)) v = found.length === 0 && splitsWordsAt(token) ? NONE : UNCLEAN;
    else if (found.length === 0) v = NONE;
    else if (found.length === 1) v = this.intern(found[0]!);
    else {
      v = -(this.many.length + MANY);
      this.many.push(found.length);
      for (const f of found) this.many.push(this.intern(f));
    }
    this.yields[id] = v;
    this.analyzed++;
    return v;
  }

  private grow(id: number): void {
    let size = this.yields.length * 2;
    while (size <= id) size *= 2;
    const yields = new Int32Array(size).fill(UNKNOWN);
    yields.set(this.yields);
    this.yields = yields;
  }
}

