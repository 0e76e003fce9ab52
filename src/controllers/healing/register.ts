// Registers the healer on the operator's Manager: one controller per watched scope (like the
// platform controller), keyed by OntoPlatform, woken by its platform pods (the shared Pod
// informer of the scope, mapped to their platform by the instance and managed-by labels) and by changes in
// node health (Ready, pressure conditions, taints), mapped to the platforms with pods on the node.
import { PLATFORM_REF, type OntoPlatform } from "../../api/index.js";
import type { KubeClient, KubeObject } from "../../kube/index.js";
import {
  reconcileObjects,
  type InformerSource,
  type Logger,
  type Manager,
  type Predicate,
  type ReadonlyStore,
} from "../../runtime/index.js";
import type { ActionRecorder } from "../shared/actions.js";
import { Healer, platformKeyOfPod } from "./healer.js";
import type { NodeView } from "../shared/kube-views.js";
import { HealingMetrics } from "./metrics.js";

export interface HealerRegistration {
  client: KubeClient;
  /** Watched namespaces; [""] for all. */
  namespaces: string[];
  cache: (kind: { apiVersion: string; kind: string }, namespace: string) => ReadonlyStore<KubeObject>;
  actions: ActionRecorder;
  logger: Logger;
  requestReconcile: (key: string) => void;
}

const NODE_SOURCE: InformerSource = { apiVersion: "v1", kind: "Node" };

/** What about a node matters to healing: Ready and pressure conditions' status, and taints. */
function nodeHealth(node: KubeObject): string {
  const view = node as NodeView;
  const conditions = (view.status?.conditions ?? []).map((c) => `${c.type}=${c.status}`).sort();
  const taints = (view.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`).sort();
  return `${conditions.join(",")}|${taints.join(",")}`;
}

/** Node heartbeats (a new lastHeartbeatTime every few seconds) do not wake the healer. */
export const nodeHealthChanged: Predicate = (e) =>
  e.type !== "update" || nodeHealth(e.old) !== nodeHealth(e.obj);

export function registerHealer(manager: Manager, reg: HealerRegistration): Healer {
  const podSource = (namespace: string): InformerSource => ({
    apiVersion: "v1",
    kind: "Pod",
    ...(namespace ? { namespace } : {}),
  });
  const scoped = reg.namespaces.filter(Boolean);
  const podStore = (namespace: string): ReadonlyStore<KubeObject> =>
    manager.cache(podSource(scoped.length > 0 ? namespace : ""));
  const nodeStore = (): ReadonlyStore<KubeObject> => manager.cache(NODE_SOURCE);
  const healer = new Healer({
    client: reg.client,
    cache: reg.cache,
    pods: podStore,
    nodes: nodeStore,
    actions: reg.actions,
    metrics: new HealingMetrics(manager.metrics.registry),
    logger: reg.logger,
    requestReconcile: reg.requestReconcile,
  });
  for (const namespace of scoped.length > 0 ? scoped : [""]) {
    const pods = podSource(namespace);
    const platforms = { ...PLATFORM_REF, ...(namespace ? { namespace } : {}) };
    manager.addController({
      name: namespace ? `healer-${namespace}` : "healer",
      for: platforms,
      watches: [
        { source: pods, map: (pod) => [platformKeyOfPod(pod)].filter((k): k is string => k !== undefined) },
        {
          source: NODE_SOURCE,
          predicates: [nodeHealthChanged],
          map: (node) => {
            const keys = new Set<string>();
            for (const pod of manager.informers.informer(pods).store.list()) {
              if ((pod as { spec?: { nodeName?: string } }).spec?.nodeName !== node.metadata?.name) continue;
              const key = platformKeyOfPod(pod);
              if (key) keys.add(key);
            }
            return [...keys];
          },
        },
      ],
      maxConcurrentReconciles: 1,
      resyncPeriodMs: 5 * 60_000,
      reconcileIdPrefix: "heal-",
      reconciler: reconcileObjects<OntoPlatform>(manager.cache(platforms), (p, request) =>
        healer.reconcile(p, request),
      ),
    });
  }
  return healer;
}
