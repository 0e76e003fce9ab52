// What a reconciler reads: an informer's store, read-only, that refuses to answer before the
// informer's first list is in. A reconcile that read an unsynced cache would take "not there yet"
// for "not there" (and create, or prune, on that belief); this one fails loudly instead, and the
// reconcile is retried with backoff once the cache can answer.
import type { KubeObject } from "../kube/index.js";
import type { Store } from "./store.js";

/** The reads of a Store, none of its writes. */
export type ReadonlyStore<T extends KubeObject> = Pick<
  Store<T>,
  "size" | "get" | "getByName" | "keys" | "list" | "byIndex" | "byNamespace" | "byOwner"
>;

export class CacheNotSyncedError extends Error {
  constructor(what: string) {
    super(`cache of ${what} has not synced yet`);
    this.name = "CacheNotSyncedError";
  }
}

/** `store` behind a check: every read throws CacheNotSyncedError until `synced()` is true. */
export function syncedStore<T extends KubeObject>(
  store: Store<T>,
  synced: () => boolean,
  what: string,
): ReadonlyStore<T> {
  const read = <R>(answer: () => R): R => {
    if (!synced()) throw new CacheNotSyncedError(what);
    return answer();
  };
  return {
    get size() {
      return read(() => store.size);
    },
    get: (key) => read(() => store.get(key)),
    getByName: (namespace, name) => read(() => store.getByName(namespace, name)),
    keys: () => read(() => store.keys()),
    list: () => read(() => store.list()),
    byIndex: (index, value) => read(() => store.byIndex(index, value)),
    byNamespace: (namespace) => read(() => store.byNamespace(namespace)),
    byOwner: (uid) => read(() => store.byOwner(uid)),
  };
}
