// Wires the operator: one Manager (informers, leader election, metrics, health, Events), the
// platform controller per watched scope, the action recorder (Events + audit + metrics), and the
// discovery of optional APIs. `onto operator` calls runOperator; tests call it in-process.
import { INSTANCE_LABEL, PLATFORM_REF, type OntoPlatform } from "../api/index.js";
import { KubeClient, loadKubeConfig, type KubeObject } from "../kube/index.js";
import { GENERATED_SECRET_LABEL, apiVersionOf, type ManagedKind } from "../render/index.js";
import {
  Manager,
  annotationsChanged,
  anyOf,
  createLogger,
  type Controller,
  errorFields,
  generationChanged,
  labelsChanged,
  type InformerSource,
  type Logger,
  type ReadonlyStore,
  type Result,
  reconcileObjects,
} from "../runtime/index.js";
import { CapabilityPoll, discoverCapabilities } from "./capabilities.js";
import { ActionRecorder, auditSink } from "./shared/actions.js";
import { FleetLimit } from "./shared/fleet-limit.js";
import { replacingPods } from "./shared/kube-views.js";
import { registerHealer } from "./healing/index.js";
import { registerPostgresHa } from "./postgres-ha/index.js";
import { CLAIM_REF, PlatformReconciler, STORAGE_CLASS_REF } from "./platform/index.js";
import { registerReleases } from "./releases/index.js";
import type { PlatformHooks } from "./shared/upgrade-decision.js";
import { POD, UpgradeOrchestrator } from "./upgrade/index.js";

export interface OperatorOptions {
  kubeconfig?: string | undefined;
  /** Watch only these namespaces; all namespaces when empty. */
  namespaces?: string[] | undefined;
  leaderElection?:
    { namespace: string; name?: string; identity?: string; leaseDurationMs?: number } | undefined;
  metricsPort?: number | undefined;
  healthPort?: number | undefined;
  /** Audit log file; "-" or absent: stdout. */
  auditLog?: string | undefined;
  logLevel?: string | undefined;
  logger?: Logger | undefined;
  concurrency?: number | undefined;
  /** How often optional APIs (ServiceMonitor, VPA) are looked for again (default 10 min). */
  discoveryIntervalMs?: number | undefined;
  hooks?: PlatformHooks | undefined;
  /** At most this many platforms restart pods at once (`--max-restarting-platforms`); 0 or absent: no limit. */
  maxRestartingPlatforms?: number | undefined;
}

export interface RunningOperator {
  manager: Manager;
  reconciler: PlatformReconciler;
  /** Reconciles the platform `key` ("namespace/name") once, now, as a worker would. */
  reconcileNow(key: string): Promise<Result>;
  stop(): Promise<void>;
}

export { discoverCapabilities };

export async function runOperator(opts: OperatorOptions = {}): Promise<RunningOperator> {
  const logger = opts.logger ?? createLogger({ level: opts.logLevel ?? "info" });
  const client = new KubeClient(loadKubeConfig(opts.kubeconfig ? { path: opts.kubeconfig } : {}));
  const manager = new Manager({
    client,
    logger,
    metricsPort: opts.metricsPort,
    healthPort: opts.healthPort,
    ...(opts.leaderElection ? { leaderElection: { name: "onto-operator", ...opts.leaderElection } } : {}),
    eventsController: "onto.paas/onto-operator",
  });

  // Set below: each look also asks whether the OntoRelease CRD appeared (releases/late-crd.ts).
  let releasesRecheck: () => Promise<void> = () => Promise.resolve();
  const capabilities = new CapabilityPoll(client, await discoverCapabilities(client), {
    intervalMs: opts.discoveryIntervalMs,
    onError: (err: unknown) => logger.warn(errorFields(err), "discovery failed; keeping the last answer"),
    afterLook: () => releasesRecheck(),
  });

  const scoped = (opts.namespaces ?? []).filter(Boolean);
  const sourceFor = (ref: { apiVersion: string; kind: string }, namespace: string): InformerSource =>
    scoped.length > 0
      ? { apiVersion: ref.apiVersion, kind: ref.kind, namespace }
      : { apiVersion: ref.apiVersion, kind: ref.kind };
  const cache = (ref: { apiVersion: string; kind: string }, namespace: string): ReadonlyStore<KubeObject> =>
    manager.cache(sourceFor(ref, namespace));

  const audit = auditSink(opts.auditLog);
  const actions = new ActionRecorder(manager.events, audit, manager.metrics.registry);
  // Releases: built in, plus the cluster's OntoRelease objects; one live catalog for everyone.
  const releases = await registerReleases(manager, {
    client,
    logger: logger.child({ controller: "ontorelease" }),
    platformsChanged: () => {
      for (const [namespace, controller] of platformControllers)
        for (const p of manager.informers.informer(sourceFor(PLATFORM_REF, namespace)).store.list())
          controller.enqueue(`${p.metadata?.namespace ?? ""}/${p.metadata?.name ?? ""}`);
    },
  });
  releasesRecheck = () => releases.recheck();
  const scopes = scoped.length > 0 ? scoped : [""];
  const scopeOf = (namespace: string): string => (scoped.length > 0 ? namespace : "");
  // The fleet limit counts, from the informer caches, the platforms whose workloads replace pods.
  const fleet = new FleetLimit({
    limit: opts.maxRestartingPlatforms ?? 0,
    restartingInCaches: () => {
      const out = new Set<string>();
      for (const namespace of scopes)
        for (const kind of ["Deployment", "StatefulSet"])
          for (const w of cache({ apiVersion: "apps/v1", kind }, namespace).list()) {
            const instance = w.metadata?.labels?.[INSTANCE_LABEL];
            const owned = w.metadata?.ownerReferences?.some((r) => r.kind === PLATFORM_REF.kind);
            if (instance && owned && replacingPods(w)) out.add(`${w.metadata?.namespace ?? ""}/${instance}`);
          }
      return out;
    },
    exists: (key) => {
      const [namespace = "", name = ""] = key.split("/");
      return cache(PLATFORM_REF, scopeOf(namespace)).getByName(namespace, name) !== undefined;
    },
    wake: (key) => controllerOf(key)?.enqueue(key),
  });
  const upgrades = new UpgradeOrchestrator({
    cache,
    registry: manager.metrics.registry,
    releases: releases.catalog,
    fleet,
  });
  const reconciler = new PlatformReconciler({
    client,
    cache,
    registry: manager.metrics.registry,
    capabilities: () => capabilities.current(),
    actions,
    hooks: { upgradeStep: upgrades.upgradeStep, ...opts.hooks },
    releases: releases.catalog,
    fleet,
  });

  const served = (): ManagedKind[] => reconciler.servedKinds();
  const generatedSecretPlatform = (secret: KubeObject): string[] => {
    const labels = secret.metadata?.labels;
    const name = labels?.[INSTANCE_LABEL];
    return labels?.[GENERATED_SECRET_LABEL] === "true" && name
      ? [`${secret.metadata?.namespace}/${name}`]
      : [];
  };
  const platformControllers = new Map<string, Controller>();
  const controllerOf = (key: string): Controller | undefined =>
    platformControllers.get(scoped.length > 0 ? (key.split("/")[0] ?? "") : "");
  for (const namespace of scoped.length > 0 ? scoped : [""]) {
    const owned = served().map((k) => sourceFor({ apiVersion: apiVersionOf(k), kind: k.kind }, namespace));
    const controller = manager.addController({
      name: scoped.length > 0 ? `ontoplatform-${namespace}` : "ontoplatform",
      for: sourceFor(PLATFORM_REF, namespace),
      owns: owned,
      watches: [
        // Pods of a platform with an upgrade in flight: a canary turning Ready or crash-looping.
        { source: sourceFor(POD, namespace), map: upgrades.platformsFor },
        // Retained generated Secrets carry no owner reference (they outlive the platform), so
        // `owns` does not see them: one deleted by hand is mapped to its platform by its labels.
        // A user's TLS Secret is not owned either: the platform naming it looks again when it changes.
        {
          source: sourceFor({ apiVersion: "v1", kind: "Secret" }, namespace),
          map: (secret: KubeObject) => [
            ...generatedSecretPlatform(secret),
            ...manager.informers
              .informer(sourceFor(PLATFORM_REF, namespace))
              .store.list()
              .filter(
                (p) =>
                  p.metadata?.namespace === secret.metadata?.namespace &&
                  (p as OntoPlatform).spec?.global?.tlsSecretName === secret.metadata?.name,
              )
              .map((p) => `${p.metadata?.namespace ?? ""}/${p.metadata?.name ?? ""}`),
          ],
        },
        // A release added, changed or removed: every platform looks again (releases change rarely).
        // (The raw store: before it has synced there is nothing to map, and its first list enqueues all.)
        ...releases.watchFor(() =>
          manager.informers
            .informer(sourceFor(PLATFORM_REF, namespace))
            .store.list()
            .filter((p) => !namespace || p.metadata?.namespace === namespace)
            .map((p) => `${p.metadata?.namespace ?? ""}/${p.metadata?.name ?? ""}`),
        ),
      ],
      predicates: [anyOf(generationChanged, annotationsChanged, labelsChanged)],
      maxConcurrentReconciles: opts.concurrency ?? 2,
      resyncPeriodMs: 5 * 60_000,
      reconciler: reconcileObjects<OntoPlatform>(cache(PLATFORM_REF, namespace), (p, request) =>
        reconciler.reconcile(p, request),
      ),
    });
    platformControllers.set(namespace, controller);
  }
  // The healer writes memory overrides into status, which the platform predicates let pass
  // unseen; it asks the platform controller to render them through requestReconcile.
  registerHealer(manager, {
    client,
    namespaces: scoped.length > 0 ? scoped : [""],
    cache,
    actions,
    logger: logger.child({ controller: "healer" }),
    requestReconcile: (key) => controllerOf(key)?.enqueue(key),
  });
  // Postgres roles, failover and switchover: status.postgres, the role labels, pg_promote().
  registerPostgresHa(manager, {
    client,
    namespaces: scoped.length > 0 ? scoped : [""],
    cache,
    actions,
    logger: logger.child({ controller: "postgres-ha" }),
  });
  // Make sure the caches the reconciler reads exist before the manager starts them.
  for (const namespace of scoped.length > 0 ? scoped : [""]) cache(PLATFORM_REF, namespace);
  cache({ apiVersion: "v1", kind: "Namespace" }, "");
  cache({ apiVersion: "v1", kind: "Node" }, "");
  // Claims (volume growth) in each watched namespace; StorageClasses, cluster-scoped.
  for (const namespace of scoped.length > 0 ? scoped : [""]) cache(CLAIM_REF, namespace);
  cache(STORAGE_CLASS_REF, "");

  await manager.start();
  return {
    manager,
    reconciler,
    reconcileNow: async (key) => {
      const controller = controllerOf(key);
      if (!controller) throw new Error(`no platform controller watches ${key}`);
      return (await controller.reconcileNow(key)) ?? {};
    },
    stop: async () => {
      capabilities.stop();
      await manager.stop();
      audit.close();
    },
  };
}
