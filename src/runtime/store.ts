// The informer's cache: objects by key ("namespace/name", or "name" for cluster-scoped kinds) with
// indexes kept up to date on every change. Built in: by namespace and by owner uid; more can be added.
import type { KubeObject } from "../kube/index.js";

export type Indexer<T> = (obj: T) => string[];

export const BY_NAMESPACE = "namespace";
export const BY_OWNER_UID = "ownerUid";

export function objectKey(obj: KubeObject): string {
  const name = obj.metadata?.name ?? "";
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${name}` : name;
}

export function splitKey(key: string): { namespace?: string; name: string } {
  const slash = key.indexOf("/");
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * What the cache keeps of an object: everything but managedFields and kubectl's last-applied
 * annotation, which are large and which no reconcile reads.
 */
export function stripForCache<T extends KubeObject>(obj: T): T {
  const meta = obj.metadata;
  if (!meta || (meta.managedFields === undefined && meta.annotations?.[LAST_APPLIED] === undefined))
    return obj;
  const { managedFields: _dropped, ...rest } = meta;
  if (rest.annotations?.[LAST_APPLIED] !== undefined) {
    const { [LAST_APPLIED]: _lastApplied, ...annotations } = rest.annotations;
    rest.annotations = annotations;
  }
  return { ...obj, metadata: rest };
}

export interface ReplaceResult<T> {
  added: T[];
  updated: [old: T, obj: T][];
  deleted: T[];
}

export class Store<T extends KubeObject> {
  private readonly items = new Map<string, T>();
  private readonly indexers = new Map<string, Indexer<T>>();
  private readonly indexes = new Map<string, Map<string, Set<string>>>();

  constructor(indexers: Record<string, Indexer<T>> = {}) {
    this.addIndexer(BY_NAMESPACE, (o) => (o.metadata?.namespace ? [o.metadata.namespace] : []));
    this.addIndexer(BY_OWNER_UID, (o) => (o.metadata?.ownerReferences ?? []).map((r) => r.uid));
    for (const [name, fn] of Object.entries(indexers)) this.addIndexer(name, fn);
  }

  /** Adds (or replaces) an index and builds it over the objects already cached. */
  addIndexer(name: string, fn: Indexer<T>): void {
    this.indexers.set(name, fn);
    const index = new Map<string, Set<string>>();
    this.indexes.set(name, index);
    for (const [key, obj] of this.items) for (const value of fn(obj)) addTo(index, value, key);
  }

  get size(): number {
    return this.items.size;
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  getByName(namespace: string | undefined, name: string): T | undefined {
    return this.items.get(namespace ? `${namespace}/${name}` : name);
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  list(): T[] {
    return [...this.items.values()];
  }

  byIndex(index: string, value: string): T[] {
    const idx = this.indexes.get(index);
    if (!idx) throw new Error(`store: no index named ${index}`);
    return [...(idx.get(value) ?? [])].map((k) => this.items.get(k)).filter((o): o is T => o !== undefined);
  }

  byNamespace(namespace: string): T[] {
    return this.byIndex(BY_NAMESPACE, namespace);
  }

  byOwner(uid: string): T[] {
    return this.byIndex(BY_OWNER_UID, uid);
  }

  /** Inserts or replaces; returns the previous object. */
  upsert(obj: T): T | undefined {
    const key = objectKey(obj);
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    this.items.set(key, obj);
    this.index(key, obj);
    return old;
  }

  remove(key: string): T | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.items.delete(key);
    return old;
  }

  /** Makes the store hold exactly `objs` and says what changed (unchanged resourceVersions are not updates). */
  replace(objs: T[]): ReplaceResult<T> {
    const result: ReplaceResult<T> = { added: [], updated: [], deleted: [] };
    const seen = new Set<string>();
    for (const obj of objs) {
      const key = objectKey(obj);
      seen.add(key);
      const old = this.upsert(obj);
      if (!old) result.added.push(obj);
      else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion)
        result.updated.push([old, obj]);
    }
    for (const key of this.keys()) {
      if (seen.has(key)) continue;
      const old = this.remove(key);
      if (old) result.deleted.push(old);
    }
    return result;
  }

  private index(key: string, obj: T): void {
    for (const [name, fn] of this.indexers)
      for (const value of fn(obj)) addTo(this.indexes.get(name)!, value, key);
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of this.indexers) {
      const idx = this.indexes.get(name)!;
      for (const value of fn(obj)) {
        const keys = idx.get(value);
        keys?.delete(key);
        if (keys?.size === 0) idx.delete(value);
      }
    }
  }
}

function addTo(index: Map<string, Set<string>>, value: string, key: string): void {
  let keys = index.get(value);
  if (!keys) index.set(value, (keys = new Set()));
  keys.add(key);
}
