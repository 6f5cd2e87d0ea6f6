/**
 * The three corpora a search, document fetch or completion reads (interface §1, CONTRACT §3): the
 * service's own corpus, the crawled open web, and the references clients flagged as trusted.
 */
export type Scope = 'own' | 'web' | 'trusted';
export const SCOPES: readonly Scope[] = ['own', 'web', 'trusted'];

export function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s);
}
