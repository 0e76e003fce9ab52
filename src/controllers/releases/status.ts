// The OntoRelease status writer: each object's Accepted condition says whether the operator uses
// it for its version and why (added, matches or overrides a built-in release; or not used: it
// shadows a built-in release without overrideBuiltIn, conflicts with another object, or is invalid).
import { API_VERSION, RELEASE_KIND, type OntoRelease } from "../../api/index.js";
import type { KubeClient, KubeObject } from "../../kube/index.js";
import { setCondition, type Request, type Result, type Store } from "../../runtime/index.js";
import type { LiveReleaseCatalog } from "./live-catalog.js";

export const RELEASE_REF = { apiVersion: API_VERSION, kind: RELEASE_KIND } as const;

export interface ReleaseStatusDeps {
  client: KubeClient;
  store: Store<KubeObject>;
  catalog: LiveReleaseCatalog;
  now?: () => Date;
}

export class ReleaseStatusReconciler {
  private readonly now: () => Date;

  constructor(private readonly deps: ReleaseStatusDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async reconcile(request: Request): Promise<Result> {
    const release = this.deps.store.getByName(undefined, request.name) as
      (KubeObject & OntoRelease) | undefined;
    if (!release || release.metadata.deletionTimestamp) return {};
    const verdict = this.deps.catalog.verdict(release.metadata.name);
    if (!verdict) return {};
    const generation = release.metadata.generation ?? 0;
    const conditions = setCondition(
      release.status?.conditions ?? [],
      {
        type: "Accepted",
        status: verdict.accepted ? "True" : "False",
        reason: verdict.reason,
        message: verdict.message.slice(0, 4000),
        observedGeneration: generation,
      },
      this.now(),
    );
    const before = JSON.stringify({
      g: release.status?.observedGeneration,
      c: release.status?.conditions ?? [],
    });
    if (before === JSON.stringify({ g: generation, c: conditions })) return {};
    await this.deps.client.patchStatus(
      { ...RELEASE_REF, name: release.metadata.name },
      {
        observedGeneration: generation,
        conditions,
      },
    );
    return {};
  }
}
