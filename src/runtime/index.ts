/**
 * Generic controller machinery (knows nothing of OntoPlatform; imports only src/kube).
 *
 * What a controller author calls:
 *
 * ```ts
 * import { KubeClient, loadKubeConfig } from "../kube/index.js";
 * import { Manager, createLogger, generationChanged } from "../runtime/index.js";
 *
 * const client = new KubeClient(loadKubeConfig({ path: opts.kubeconfig }));
 * const mgr = new Manager({
 *   client,
 *   logger: createLogger(),
 *   metricsPort: 8080,             // GET /metrics
 *   healthPort: 8081,              // GET /healthz, /readyz
 *   leaderElection: { namespace: "onto-system", name: "onto-operator" }, // omit to run without
 *   shutdownTimeoutMs: 20_000,     // in-flight reconciles get this long on SIGTERM
 * });
 *
 * // Reads come from shared informer caches (one list+watch per kind, whoever asks), read-only
 * // and refusing to answer (CacheNotSyncedError) until synced. Ask for them before start():
 * const platforms = mgr.cache({ apiVersion: "onto.paas/v1alpha1", kind: "OntoPlatform" });
 *
 * mgr.addController({
 *   name: "ontoplatform",
 *   for: { apiVersion: "onto.paas/v1alpha1", kind: "OntoPlatform" },
 *   owns: [{ apiVersion: "apps/v1", kind: "Deployment" }],  // owner found via ownerReferences
 *   predicates: [generationChanged],                        // optional filters on primary events
 *   maxConcurrentReconciles: 2,
 *   // reconcileObjects looks the object up (a deleted one is not reconciled); the request carries
 *   // an id (request.id, in the log line), a logger (request.log) and a cancellation signal.
 *   reconciler: reconcileObjects(platforms, async (p, request) => {
 *     const api = client.withSignal(request.signal);         // aborted when the reconcile must stop
 *     await api.apply(desiredObject);                        // SSA, field manager onto-operator
 *     // status: a merge patch under the resourceVersion read, recomputed after a conflict
 *     await patchStatus(api, refOf(p), { resourceVersion: p.metadata?.resourceVersion, status: p.status },
 *       (s) => ({ ...s, phase: "Running" }));
 *     mgr.events.normal(p, "Applied", "Reconcile", "3 objects applied");
 *     return { requeueAfterMs: 30_000 };                      // or nothing; throw to retry with backoff
 *   }),
 * });
 *
 * await mgr.start();     // servers, informers, then campaign; controllers run while leading
 * mgr.handleSignals();   // SIGTERM: stop intake, drain (bounded), release the lease, exit 0
 * ```
 *
 * Pieces usable alone: patchStatus, mergePatchDiff, WorkQueue (dedup, per-key backoff, global rate limit, addAfter),
 * Informer / InformerFactory / Store (indexes by namespace and owner uid), LeaderElector,
 * EventRecorder, RuntimeMetrics, setCondition & co, predicates, Clock.
 */
export {
  ExponentialBackoff,
  RetryLimiter,
  TokenBucket,
  exponentialDelay,
  type RetryLimiterOptions,
} from "./backoff.js";
export { jittered, systemClock, type Clock, type Timer } from "./clock.js";
export {
  conditionsEqual,
  findCondition,
  isConditionTrue,
  metaTime,
  removeCondition,
  setCondition,
  type Condition,
  type ConditionStatus,
  type ConditionUpdate,
} from "./conditions.js";
export {
  Controller,
  ownerKeys,
  type ControllerOptions,
  type Reconciler,
  type Request,
  type Result,
  type WatchSpec,
} from "./controller.js";
export {
  EventRecorder,
  kubeEventSink,
  type EventObject,
  type EventRecorderOptions,
  type EventSeries,
  type EventSink,
  type EventType,
} from "./events.js";
export { serveHealth, serveMetrics, type Check, type RunningServer } from "./http-servers.js";
export {
  Informer,
  type EventHandler,
  type InformerOptions,
  type InformerSource,
  type InformerStats,
} from "./informer.js";
export { InformerFactory, type InformerSettings } from "./informer-factory.js";
export {
  LeaderElector,
  kubeLeaseApi,
  type Lease,
  type LeaseApi,
  type LeaseSpec,
  type LeaderElectionOptions,
  type LeaderWork,
} from "./leader-election.js";
export { createLogger, errorFields, silentLogger, type Logger, type LoggerOptions } from "./logging.js";
export { Manager, type LeaderElectionSettings, type ManagerOptions } from "./manager.js";
export { canonical, mergePatchDiff } from "./merge-patch.js";
export { reconcileObjects, type ObjectReconcileFn } from "./object-reconciler.js";
export { patchStatus, type StatusPatchOptions, type StatusRead } from "./status-patch.js";
export { CacheNotSyncedError, syncedStore, type ReadonlyStore } from "./synced-store.js";
export { RuntimeMetrics, sharedCounter, sharedGauge, sharedHistogram } from "./metrics.js";
export {
  annotationsChanged,
  anyOf,
  generationChanged,
  labelsChanged,
  type ChangeEvent,
  type Predicate,
} from "./predicates.js";
export { WorkQueue, type WorkQueueObserver, type WorkQueueOptions } from "./queue.js";
export {
  BY_NAMESPACE,
  BY_OWNER_UID,
  Store,
  objectKey,
  splitKey,
  stripForCache,
  type Indexer,
  type ReplaceResult,
} from "./store.js";
