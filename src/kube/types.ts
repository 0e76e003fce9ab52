// The object shapes the client reads and writes. Loose on purpose: any Kubernetes object (client-node's
// models included) fits KubeObject; on the wire timestamps are strings, in client-node's models Dates,
// so the few timestamp fields are typed unknown.

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  creationTimestamp?: unknown;
  deletionTimestamp?: unknown;
  managedFields?: unknown[];
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** Names one object: which kind, where, which name. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

/** Names one kind, optionally restricted to a namespace. */
export interface KindRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK";

export interface WatchEvent<T extends KubeObject = KubeObject> {
  type: WatchEventType;
  object: T;
}

/** What the request counter hook sees for every request, answered or not. */
export interface RequestRecord {
  method: string;
  /** HTTP status as a string, or "<error>" when no answer came (client-go's convention). */
  code: string;
  path: string;
  durationMs: number;
}

/** The reference to an object, from the object itself. */
export function refOf(obj: KubeObject): ObjectRef {
  const name = obj.metadata?.name;
  if (!obj.apiVersion) throw new Error("object has no apiVersion");
  if (!obj.kind) throw new Error("object has no kind");
  if (!name) throw new Error(`${obj.kind}: object has no metadata.name`);
  const ns = obj.metadata?.namespace;
  return ns
    ? { apiVersion: obj.apiVersion, kind: obj.kind, namespace: ns, name }
    : { apiVersion: obj.apiVersion, kind: obj.kind, name };
}
