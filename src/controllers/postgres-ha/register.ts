// Registers Postgres HA on the operator's Manager: one controller per watched scope, keyed by
// OntoPlatform, woken by its Postgres pods (a pod deleted or turning NotReady starts a failover at
// once) and by node health changes, and looking again every second while there are standbys.
import { NAME_LABEL, PLATFORM_REF, type OntoPlatform } from "../../api/index.js";
import type { KubeClient, KubeObject } from "../../kube/index.js";
import {
  reconcileObjects,
  type InformerSource,
  type Logger,
  type Manager,
  type ReadonlyStore,
} from "../../runtime/index.js";
import type { ActionRecorder } from "../shared/actions.js";
import { nodeHealthChanged, platformKeyOfPod } from "../healing/index.js";
import { PostgresHa } from "./ha.js";
import { PostgresHaMetrics } from "./metrics.js";
import { KeptConnections } from "./kept-connections.js";
import { PgMemberSql } from "./sql.js";
import { POSTGRES } from "../../render/index.js";

export interface PostgresHaRegistration {
  client: KubeClient;
  /** Watched namespaces; [""] for all. */
  namespaces: string[];
  cache: (kind: { apiVersion: string; kind: string }, namespace: string) => ReadonlyStore<KubeObject>;
  actions: ActionRecorder;
  logger: Logger;
}

const NODE_SOURCE: InformerSource = { apiVersion: "v1", kind: "Node" };

export function registerPostgresHa(manager: Manager, reg: PostgresHaRegistration): PostgresHa {
  const podSource = (namespace: string): InformerSource => ({
    apiVersion: "v1",
    kind: "Pod",
    ...(namespace ? { namespace } : {}),
  });
  const scoped = reg.namespaces.filter(Boolean);
  // One set of kept connections for every platform's members (by address), for the operator's life.
  const looks = new KeptConnections();
  const ha = new PostgresHa({
    client: reg.client,
    cache: reg.cache,
    pods: (namespace) => manager.cache(podSource(scoped.length > 0 ? namespace : "")),
    nodes: () => manager.cache(NODE_SOURCE),
    actions: reg.actions,
    metrics: new PostgresHaMetrics(manager.metrics.registry),
    logger: reg.logger,
    sql: (_platform, password, tls) =>
      new PgMemberSql(
        () => {
          const value = password();
          return value ? { user: POSTGRES.user, password: value } : undefined;
        },
        tls,
        looks,
      ),
  });
  const postgresPlatform = (pod: KubeObject): string[] => {
    const key = platformKeyOfPod(pod);
    return key && pod.metadata?.labels?.[NAME_LABEL] === "postgres" ? [key] : [];
  };
  for (const namespace of scoped.length > 0 ? scoped : [""]) {
    const pods = podSource(namespace);
    const platforms = { ...PLATFORM_REF, ...(namespace ? { namespace } : {}) };
    manager.addController({
      name: namespace ? `postgres-ha-${namespace}` : "postgres-ha",
      for: platforms,
      watches: [
        { source: pods, map: postgresPlatform },
        {
          source: NODE_SOURCE,
          predicates: [nodeHealthChanged],
          map: (node) => {
            const keys = new Set<string>();
            for (const pod of manager.informers.informer(pods).store.list()) {
              if ((pod as { spec?: { nodeName?: string } }).spec?.nodeName !== node.metadata?.name) continue;
              for (const key of postgresPlatform(pod)) keys.add(key);
            }
            return [...keys];
          },
        },
      ],
      maxConcurrentReconciles: 1,
      resyncPeriodMs: 5 * 60_000,
      reconcileIdPrefix: "pgha-",
      reconciler: reconcileObjects<OntoPlatform>(manager.cache(platforms), (p, request) =>
        ha.reconcile(p, request),
      ),
    });
  }
  return ha;
}
