// What a controller that watches over running platforms (the healer, Postgres HA) is given: the
// client, the platform controller's synced caches, the action recorder and a logger. Each
// controller's own dependencies extend it.
import type { KindRef, KubeClient, KubeObject } from "../../kube/index.js";
import type { Logger, ReadonlyStore } from "../../runtime/index.js";
import type { ActionRecorder } from "./actions.js";

export interface PlatformViews {
  client: KubeClient;
  /** Synced informer cache of a kind for a namespace (the platform controller's caches). */
  cache: (kind: Pick<KindRef, "apiVersion" | "kind">, namespace: string) => ReadonlyStore<KubeObject>;
  /** The platform pods of a namespace. */
  pods: (namespace: string) => ReadonlyStore<KubeObject>;
  nodes: () => ReadonlyStore<KubeObject>;
  actions: ActionRecorder;
  logger: Logger;
  now?: () => Date;
}
