/** Ranking: integer BM25 with the exact arithmetic of docs/ranking.md. */
export { B, Bm25, K1, SCALE, idf, type ScoringMode } from './bm25.js';
