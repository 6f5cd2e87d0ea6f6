/**
 * The pinned OPAQUE configuration, shared by every OPAQUE client Quarry ships (the CLI, the login page,
 * the tests): a registration and a login must stretch the password identically or the login fails, and
 * the server never sees which parameters were used. RFC 9807 suite: ristretto255 + SHA-512 (the only
 * suite `@serenity-kit/opaque` 1.x offers). Key stretching: Argon2id with the RFC 9106 §4 "memory-
 * constrained" parameters — 64 MiB, 3 passes, 4 lanes — the library's default, written out so that a
 * change of the library's default cannot silently lock every account out. About 250 ms per client
 * operation here; `rfc-recommended` (2 GiB) is too much for a browser tab.
 *
 * Changing these values invalidates every registration: accounts would have to register again.
 */
export const OPAQUE_KEY_STRETCHING = {
  'argon2id-custom': { memory: 65536, iterations: 3, parallelism: 4 },
} as const;

/** Usernames: lower-case, so `Alice` and `alice` are one account (and one throttling key). */
export const USERNAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;
