// Wires the release catalog into the operator: an informer on the cluster-scoped OntoRelease
// objects (when the CRD is served), the live catalog built from it, the controller that writes
// each object's Accepted condition, and the watch that re-reconciles platforms when releases
// change (a version that appears lets a platform waiting on UnknownRelease go on). A CRD
// installed after start is picked up at a discovery poll (late-crd.ts).
import { API_VERSION, RELEASE_KIND, type OntoRelease } from "../../api/index.js";
import type { KubeClient, KubeObject } from "../../kube/index.js";
import {
  generationChanged,
  reconcileObjects,
  type Informer,
  type Logger,
  type Manager,
  type WatchSpec,
} from "../../runtime/index.js";
import { lateCrd } from "./late-crd.js";
import { LiveReleaseCatalog } from "./live-catalog.js";
import { RELEASE_REF, ReleaseStatusReconciler } from "./status.js";

export interface OperatorReleases {
  catalog: LiveReleaseCatalog;
  /** For the platform controller: every platform `keysFor` returns is looked at again when a release changes. */
  watchFor(keysFor: () => string[]): WatchSpec[];
  /**
   * After each discovery poll: when the OntoRelease CRD was not served at start and is now, the
   * releases are watched from then on (late-crd.ts) and `platformsChanged` hears of every change.
   */
  recheck(): Promise<void>;
}

export async function registerReleases(
  manager: Manager,
  deps: {
    client: KubeClient;
    logger: Logger;
    /** Every platform looks again: a release changed (only for a CRD that appeared after start). */
    platformsChanged?: () => void;
  },
): Promise<OperatorReleases> {
  const source = { apiVersion: RELEASE_REF.apiVersion, kind: RELEASE_REF.kind };
  const served = (): Promise<boolean> => deps.client.discovery.hasResource(API_VERSION, RELEASE_KIND);
  const catalog = new LiveReleaseCatalog();
  const atStart = await served().catch(() => false);
  if (!atStart) {
    deps.logger.warn(
      { kind: RELEASE_KIND },
      "the OntoRelease CRD is not installed: only the built-in releases are known; install deploy/crds/onto.paas_ontoreleases.yaml to add releases (the operator picks it up at its next discovery poll)",
    );
  }
  const late = lateCrd({
    watchingFromStart: atStart,
    served,
    logger: deps.logger,
    start: () => {
      const informer = watchReleases(manager, deps.client, catalog);
      const changed = (): void => deps.platformsChanged?.();
      informer.on({
        add: changed,
        update: (old, obj) => {
          if (old.metadata?.generation !== obj.metadata?.generation) changed();
        },
        delete: changed,
      });
    },
  });
  if (atStart) watchReleases(manager, deps.client, catalog);
  return {
    catalog,
    watchFor: (keysFor) =>
      atStart ? [{ source, map: () => keysFor(), predicates: [generationChanged] }] : [],
    recheck: () => late.recheck(),
  };
}

/** The OntoRelease informer feeding `catalog`, and the controller writing each object's Accepted condition. */
function watchReleases(
  manager: Manager,
  client: KubeClient,
  catalog: LiveReleaseCatalog,
): Informer<KubeObject> {
  const source = { apiVersion: RELEASE_REF.apiVersion, kind: RELEASE_REF.kind };
  const informer = manager.informers.informer(source);
  catalog.attach(informer.store);
  const invalidate = (): void => catalog.invalidate();
  informer.on({ add: invalidate, update: invalidate, delete: invalidate });
  const statusWriter = new ReleaseStatusReconciler({ client, catalog, events: manager.events });
  const allReleases = (): string[] => informer.store.list().map((r: KubeObject) => r.metadata?.name ?? "");
  manager.addController({
    name: "ontorelease",
    for: source,
    // One object's change can change another's verdict (a conflict appears or goes): look at all.
    watches: [{ source, map: allReleases, predicates: [generationChanged] }],
    predicates: [generationChanged],
    reconciler: reconcileObjects<KubeObject & OntoRelease>(manager.cache(source), (release, request) =>
      statusWriter.reconcile(release, request),
    ),
  });
  return informer;
}
