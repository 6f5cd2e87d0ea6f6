/**
 * The OPAQUE library (`@serenity-kit/opaque`), loaded on first use: importing it instantiates its
 * WebAssembly, a cost every start would pay though only registrations and logins need it.
 */
import { InternalError } from '../kernel/errors.js';

export type Opaque = typeof import('@serenity-kit/opaque');

let loaded: Promise<Opaque> | undefined;
let ready: Opaque | undefined;

/** The library, ready to use (imported and initialised once per process). */
export function loadOpaque(): Promise<Opaque> {
  loaded ??= import('@serenity-kit/opaque').then(async (opaque) => {
    await opaque.ready;
    ready = opaque;
    return opaque;
  });
  return loaded;
}

/** The library for synchronous callers that run after `loadOpaque()` resolved. */
export function opaqueLoaded(): Opaque {
  if (ready === undefined) throw new InternalError('OPAQUE was used before loadOpaque() resolved.');
  return ready;
}
