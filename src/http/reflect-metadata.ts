/**
 * The small part of the `reflect-metadata` API that `@peculiar/x509` needs (its dependency `tsyringe`
 * refuses to load without `Reflect.getMetadata`). Installed only when absent; imported first by
 * `self-signed-cert.ts`, the certificate generator, which runs in a child process of its own, so no server
 * process carries this global. A dozen lines here instead of another runtime dependency for the generator
 * of one self-signed certificate.
 */
type Key = string | symbol | undefined;
const store = new WeakMap<object, Map<Key, Map<unknown, unknown>>>();

function own(target: object, prop: Key, create: boolean): Map<unknown, unknown> | undefined {
  let byProp = store.get(target);
  if (!byProp && create) store.set(target, (byProp = new Map()));
  let m = byProp?.get(prop);
  if (!m && create && byProp) byProp.set(prop, (m = new Map()));
  return m;
}

const R = Reflect as unknown as Record<string, unknown>;
if (typeof R.getMetadata !== 'function') {
  const api = {
    defineMetadata(key: unknown, value: unknown, target: object, prop?: Key): void {
      own(target, prop, true)!.set(key, value);
    },
    getOwnMetadata(key: unknown, target: object, prop?: Key): unknown {
      return own(target, prop, false)?.get(key);
    },
    hasOwnMetadata(key: unknown, target: object, prop?: Key): boolean {
      return own(target, prop, false)?.has(key) ?? false;
    },
    getMetadata(key: unknown, target: object, prop?: Key): unknown {
      for (let t: object | null = target; t; t = Object.getPrototypeOf(t)) {
        const m = own(t, prop, false);
        if (m?.has(key)) return m.get(key);
      }
      return undefined;
    },
    hasMetadata(key: unknown, target: object, prop?: Key): boolean {
      return api.getMetadata(key, target, prop) !== undefined;
    },
    metadata(key: unknown, value: unknown) {
      return (target: object, prop?: Key) => api.defineMetadata(key, value, target, prop);
    },
  };
  Object.assign(R, api);
}
export {};
