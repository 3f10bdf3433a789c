/**
 * The smallest Reflect metadata API that lets `@peculiar/x509` load.
 *
 * `@peculiar/x509` wires its algorithm providers with `tsyringe`, which refuses to load unless a
 * Reflect metadata polyfill (`Reflect.getMetadata` and friends) is installed first. The package
 * set of this project carries no such polyfill, so this module provides the three functions
 * `tsyringe` calls (plus their obvious siblings), backed by a `WeakMap`. It is imported for its
 * side effect by `certs.ts`, before `@peculiar/x509`, and does nothing when a full polyfill is
 * already present. Nothing else in the devcluster uses decorators or metadata.
 */

type MetadataKey = unknown;
type MetadataTarget = object;

const store = new WeakMap<MetadataTarget, Map<MetadataKey, unknown>>();

function ownMap(target: MetadataTarget, create: boolean): Map<MetadataKey, unknown> | undefined {
  let map = store.get(target);
  if (!map && create) {
    map = new Map();
    store.set(target, map);
  }
  return map;
}

function findOwner(key: MetadataKey, target: MetadataTarget): MetadataTarget | undefined {
  for (let current: MetadataTarget | null = target; current !== null; current = Object.getPrototypeOf(current) as MetadataTarget | null) {
    if (ownMap(current, false)?.has(key)) return current;
  }
  return undefined;
}

const api = {
  defineMetadata(key: MetadataKey, value: unknown, target: MetadataTarget): void {
    ownMap(target, true)!.set(key, value);
  },
  getOwnMetadata(key: MetadataKey, target: MetadataTarget): unknown {
    return ownMap(target, false)?.get(key);
  },
  hasOwnMetadata(key: MetadataKey, target: MetadataTarget): boolean {
    return ownMap(target, false)?.has(key) ?? false;
  },
  getMetadata(key: MetadataKey, target: MetadataTarget): unknown {
    const owner = findOwner(key, target);
    return owner === undefined ? undefined : ownMap(owner, false)!.get(key);
  },
  hasMetadata(key: MetadataKey, target: MetadataTarget): boolean {
    return findOwner(key, target) !== undefined;
  },
  metadata(key: MetadataKey, value: unknown) {
    return (target: MetadataTarget): void => {
      ownMap(target, true)!.set(key, value);
    };
  },
};

/** Installs the functions on the global `Reflect` unless a metadata polyfill is already there. */
export function installReflectMetadata(): void {
  const reflect = Reflect as unknown as Record<string, unknown>;
  if (typeof reflect['getMetadata'] === 'function') return;
  for (const [name, fn] of Object.entries(api)) {
    Object.defineProperty(reflect, name, { value: fn, configurable: true, writable: true, enumerable: false });
  }
}

installReflectMetadata();
