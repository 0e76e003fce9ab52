// A spec naming a StorageClass the cluster does not have: every claim of the stateful components
// would stay Pending, their pods unscheduled, and the platform would sit in Provisioning looking
// only slow. Reported as Degraded naming spec.global.storageClass, the way placement.ts reports a
// node selector no node matches. Pure over the StorageClass cache.
import { REASON, type ResolvedSpec } from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import type { SpecProblem } from "./status.js";

export function storageClassProblems(
  spec: ResolvedSpec,
  storageClass: (name: string) => KubeObject | undefined,
): SpecProblem[] {
  const name = spec.global.storageClass;
  if (!name || storageClass(name)) return [];
  return [
    {
      field: "spec.global.storageClass",
      reason: REASON.StorageClassNotFound,
      message: `StorageClass ${name} does not exist: the volumes of the stateful components cannot be provisioned`,
    },
  ];
}
