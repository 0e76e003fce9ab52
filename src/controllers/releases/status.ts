// The OntoRelease status writer (through runtime's patchStatus, like every status writer): each
// object's Accepted condition says whether the operator uses
// it for its version and why (added, matches or overrides a built-in release; or not used: it
// shadows a built-in release without overrideBuiltIn, conflicts with another object, or is invalid).
// When the verdict changes (Accepted → Conflict when a rival object appears, and back when it
// goes), an Event on the object says so, with the new reason: Warning when the object stops being
// used, Normal when it is used again. A first verdict records an Event only when the object is not
// used, so installing the product's own objects is quiet.
import { API_VERSION, RELEASE_KIND, type OntoRelease } from "../../api/index.js";
import type { KubeClient, KubeObject } from "../../kube/index.js";
import {
  patchStatus,
  setCondition,
  type Condition,
  type EventRecorder,
  type Request,
  type Result,
} from "../../runtime/index.js";
import type { LiveReleaseCatalog } from "./live-catalog.js";

export const RELEASE_REF = { apiVersion: API_VERSION, kind: RELEASE_KIND } as const;
/** The one condition of an OntoRelease. */
const ACCEPTED = "Accepted";

export interface ReleaseStatusDeps {
  client: KubeClient;
  catalog: LiveReleaseCatalog;
  /** Where verdict changes are recorded (none: no Events). */
  events?: EventRecorder | undefined;
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
    // The Accepted condition the written status replaced (the last attempt's, after a conflict).
    let before: Condition | undefined;
    const written = await patchStatus<NonNullable<OntoRelease["status"]>, KubeObject & OntoRelease>(
      this.deps.client.withSignal(request.signal),
      { ...RELEASE_REF, name: release.metadata.name },
      { resourceVersion: release.metadata.resourceVersion, status: release.status },
      (current) => {
        before = current?.conditions?.find((c) => c.type === ACCEPTED);
        return {
          ...current,
          observedGeneration: generation,
          conditions: setCondition(
            current?.conditions ?? [],
            {
              type: ACCEPTED,
              status: verdict.accepted ? "True" : "False",
              reason: verdict.reason,
              message: verdict.message.slice(0, 4000),
              observedGeneration: generation,
            },
            this.now(),
          ),
        };
      },
    );
    const status = verdict.accepted ? "True" : "False";
    const changed = before ? before.status !== status || before.reason !== verdict.reason : !verdict.accepted;
    if (written && changed) {
      const note = `${before ? `was ${before.reason}, now ` : ""}${verdict.reason}: ${verdict.message}`;
      if (verdict.accepted) this.deps.events?.normal(written, verdict.reason, "Catalog", note);
      else this.deps.events?.warning(written, verdict.reason, "Catalog", note);
    }
    return {};
  }
}
