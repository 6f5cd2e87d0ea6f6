/**
 * Common-word pairs (Lucene's CommonGrams, restricted to pairs of two common words): at index time, every
 * two adjacent tokens that are both in COMMON_GRAM_WORDS are also indexed as one synthetic term, the
 * *gram* `gram:<a> <b>` (index/types.ts), without positions. A phrase made only of such words ("of the",
 * "to be or not to be") then finds its documents through the grams' postings — a two-word one exactly,
 * a longer one as a conjunction of its grams before positions are checked — instead of intersecting the
 * postings of words in nearly every document and reading positions for each.
 *
 * Why pairs of two common words only: a phrase with one uncommon word is already cheap (that word leads
 * the intersection), and grams of a common word with every neighbour would index almost a second copy of
 * the text; pairs of common words are a few dozen postings per document and a few thousand terms.
 *
 * The list is fixed (part of the index format: a segment records that it has grams of this list) and
 * holds stemmed terms: the most frequent English words, which are in most documents of any English corpus.
 */
import { analyzeTerms } from './analyzer.js';

const WORDS = 'the of and in to a is was for as on by with he that at from his it an were are which this be has or had ' +
  'not but its they her she i you we their have been one all who there when so no if than also';

/** Stemmed terms whose adjacent pairs are indexed as grams. */
export const COMMON_GRAM_WORDS: ReadonlySet<string> = new Set(analyzeTerms(WORDS));
