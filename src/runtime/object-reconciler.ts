// The adapter between the controller, which hands out keys, and a reconciler of objects: it looks
// the primary object up in its cache and calls the reconciler with the object itself. An object
// the cache no longer holds was deleted: there is nothing to reconcile (owner references let the
// garbage collector remove what it owned).
import type { KubeObject } from "../kube/index.js";
import type { Reconciler, Request, Result } from "./controller.js";
import type { ReadonlyStore } from "./synced-store.js";

export type ObjectReconcileFn<T extends KubeObject> = (obj: T, request: Request) => Promise<Result | void>;

export function reconcileObjects<T extends KubeObject>(
  store: ReadonlyStore<KubeObject>,
  reconcile: ObjectReconcileFn<T>,
): Reconciler["reconcile"] {
  return async (request) => {
    // The store holds objects of the controller's primary kind: T names what the caller knows of them.
    const obj = store.getByName(request.namespace, request.name) as T | undefined;
    if (!obj) return {};
    return reconcile(obj, request);
  };
}
