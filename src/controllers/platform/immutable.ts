// Fields of a StatefulSet the API server fixes at creation. An apply that would change one is
// refused as a whole ("updates to statefulset spec for fields other than ... are forbidden"), which
// would hold back every other change to the workload on every pass. Until such a StatefulSet is
// re-created keeping its pods, its live value is kept in what is applied, so the rest still goes
// through; a StatefulSet created from now on gets the rendered value.
import type { KubeObject } from "../../kube/index.js";
import type { RenderedObject } from "../../render/index.js";

interface StatefulSetSpec {
  podManagementPolicy?: string;
}

/** `desired` with the live value of each creation-only field it would change on `live`. */
export function keepCreationOnlyFields(
  desired: RenderedObject,
  live: KubeObject | undefined,
): RenderedObject {
  if (desired.kind !== "StatefulSet" || !live) return desired;
  const want = desired.spec as StatefulSetSpec | undefined;
  const have = (live as KubeObject & { spec?: StatefulSetSpec }).spec;
  const policy = have?.podManagementPolicy;
  if (!want || policy === undefined || want.podManagementPolicy === policy) return desired;
  return { ...desired, spec: { ...want, podManagementPolicy: policy } };
}
