// Wires the release catalog into the operator: an informer on the cluster-scoped OntoRelease
// objects (when the CRD is served), the live catalog built from it, the controller that writes
// each object's Accepted condition, and the watch that re-reconciles platforms when releases
// change (a version that appears lets a platform waiting on UnknownRelease go on).
import { API_VERSION, RELEASE_KIND, type OntoRelease } from "../../api/index.js";
import type { KubeClient, KubeObject } from "../../kube/index.js";
import {
  generationChanged,
  reconcileObjects,
  type Logger,
  type Manager,
  type WatchSpec,
} from "../../runtime/index.js";
import { LiveReleaseCatalog } from "./live-catalog.js";
import { RELEASE_REF, ReleaseStatusReconciler } from "./status.js";

export interface OperatorReleases {
  catalog: LiveReleaseCatalog;
  /** For the platform controller: every platform `keysFor` returns is looked at again when a release changes. */
  watchFor(keysFor: () => string[]): WatchSpec[];
}

export async function registerReleases(
  manager: Manager,
  deps: { client: KubeClient; logger: Logger },
): Promise<OperatorReleases> {
  const served = await deps.client.discovery.hasResource(API_VERSION, RELEASE_KIND).catch(() => false);
  if (!served) {
    deps.logger.warn(
      { kind: RELEASE_KIND },
      "the OntoRelease CRD is not installed: only the built-in releases are known; install deploy/crds/onto.paas_ontoreleases.yaml and restart the operator to add releases",
    );
    return { catalog: new LiveReleaseCatalog(), watchFor: () => [] };
  }
  const source = { apiVersion: RELEASE_REF.apiVersion, kind: RELEASE_REF.kind };
  const informer = manager.informers.informer(source);
  const catalog = new LiveReleaseCatalog(informer.store);
  const invalidate = (): void => catalog.invalidate();
  informer.on({ add: invalidate, update: invalidate, delete: invalidate });
  const statusWriter = new ReleaseStatusReconciler({ client: deps.client, catalog });
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
  return {
    catalog,
    watchFor: (keysFor) => [{ source, map: () => keysFor(), predicates: [generationChanged] }],
  };
}
