/**
 * The one JSON serialization of every face's bodies: bigints (cids) become decimal strings, as CONTRACT §2
 * carries them. REST bodies and `quarry … --json` lines are the same bytes because both go through here.
 */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}
