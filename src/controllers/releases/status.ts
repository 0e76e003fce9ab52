// The OntoRelease status writer (through runtime's patchStatus, like every status writer): each
// object's Accepted condition says whether the operator uses
// it for its version and why (added, matches or overrides a built-in release; or not used: it
// shadows a built-in release without overrideBuiltIn, conflicts with another object, or is invalid).
import { API_VERSION, RELEASE_KIND, type OntoRelease } from "../../api/index.js";
import type { KubeClient, KubeObject } from "../../kube/index.js";
import { patchStatus, setCondition, type Request, type Result } from "../../runtime/index.js";
import type { LiveReleaseCatalog } from "./live-catalog.js";

export const RELEASE_REF = { apiVersion: API_VERSION, kind: RELEASE_KIND } as const;

export interface ReleaseStatusDeps {
  client: KubeClient;
  catalog: LiveReleaseCatalog;
  now?: () => Date;
}

export class ReleaseStatusReconciler {
  private readonly now: () => Date;

  constructor(private readonly deps: ReleaseStatusDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async reconcile(release: KubeObject & OntoRelease, request: Request): Promise<Result> {
    if (release.metadata.deletionTimestamp) return {};
    const verdict = this.deps.catalog.verdict(release.metadata.name);
    if (!verdict) return {};
    const generation = release.metadata.generation ?? 0;
    await patchStatus<NonNullable<OntoRelease["status"]>, KubeObject & OntoRelease>(
      this.deps.client.withSignal(request.signal),
      { ...RELEASE_REF, name: release.metadata.name },
      { resourceVersion: release.metadata.resourceVersion, status: release.status },
      (current) => ({
        ...current,
        observedGeneration: generation,
        conditions: setCondition(
          current?.conditions ?? [],
          {
            type: "Accepted",
            status: verdict.accepted ? "True" : "False",
            reason: verdict.reason,
            message: verdict.message.slice(0, 4000),
            observedGeneration: generation,
          },
          this.now(),
        ),
      }),
    );
    return {};
  }
}
