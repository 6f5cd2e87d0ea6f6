// Types for the parts of `macaroon` (v3, plain JavaScript, no published types) that Quarry uses.
declare module 'macaroon' {
  export interface Caveat {
    identifier: Uint8Array;
    location?: string;
    vid?: Uint8Array;
  }
  export interface Macaroon {
    readonly identifier: Uint8Array;
    readonly location: string;
    readonly signature: Uint8Array;
    readonly caveats: Caveat[];
    addFirstPartyCaveat(caveat: string | Uint8Array): void;
    clone(): Macaroon;
    /** Throws when the signature chain or any caveat check fails; `check` returns an error string or null. */
    verify(rootKey: Uint8Array, check: (condition: string) => string | null, discharges?: Macaroon[]): void;
    exportBinary(): Uint8Array;
    exportJSON(): Record<string, unknown>;
  }
  export function newMacaroon(params: { identifier: string | Uint8Array; location?: string; rootKey: Uint8Array; version?: 1 | 2 }): Macaroon;
  export function importMacaroon(obj: string | Uint8Array | Record<string, unknown>): Macaroon;
  const _default: { newMacaroon: typeof newMacaroon; importMacaroon: typeof importMacaroon };
  export default _default;
}
