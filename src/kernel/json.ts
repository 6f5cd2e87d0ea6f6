/**
 * The one JSON serialization of every face's bodies: bigints (cids) become decimal strings, as CONTRACT §2
 * carries them. REST bodies and `quarry … --json` lines are the same bytes because both go through here.
 *
 * A replacer function takes JSON.stringify off its fast path for the whole value, and the resources
 * carry their cids as strings already: the plain form is tried first, and only a value that holds a
 * bigint (JSON.stringify refuses those with a TypeError) is written again through the replacer.
 */
export function toJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
    return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  }
}
