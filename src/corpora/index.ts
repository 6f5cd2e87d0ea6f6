/**
 * The corpora: the own, web and trusted corpora over one data directory, their sources and the ingest
 * pipeline (CONTRACT §2 "Content ids", §3). Everything else in this folder is reached through here.
 */
export { openCorpora, corpusExists, indexDir, isScope, SCOPES, EXTRACTION_VERSION } from './corpora.js';
export { Corpora } from './corpora.js';
export type { CorporaOptions, CorpusStatus, CorpusState, OwnIndexReport, OwnProgress, Scope, ScopeIngestOptions } from './corpora.js';
export { canonicalUrl, hashKey, fileKey, idKey, hostOf, CidRegistry } from './cid.js';
export { MAX_CID } from '../kernel/cid.js';
export type { Cid } from '../kernel/cid.js';
export { loadCorporaConfig, resolveCorporaConfig, defaultConfigFile } from './config.js';
export type { CorporaConfig, CorporaConfigInput } from './config.js';
export { readJsonl, defaultCollection } from './jsonl.js';
export { readWarc } from './warc.js';
export type { IngestDoc, ReadItem, IngestReport, AckedCommit, IngestProgress } from './ingest.js';
