// What the platform's status is computed from, read from the caches: each enabled component's
// Deployment or StatefulSet (with the scheduler's reason when one of its pods cannot be placed).
// status.ts turns it into the status; this file only gathers.
import {
  INSTANCE_LABEL,
  componentByName,
  type CertificateState,
  type OntoPlatform,
  type OntoPlatformStatus,
  type ResolvedSpec,
} from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import type { WorkloadView } from "../shared/kube-views.js";
import { computeStatus, type ComponentWorkload, type SpecProblem } from "./status.js";
import type { ForeignField } from "./foreign.js";
import { unschedulableMessages } from "./stuck-pods.js";

/** What a reconcile did, for its status. */
export interface Outcome {
  /** Apply or prune failures, one line each. */
  errors: string[];
  problems: SpecProblem[];
  /** Objects applied or deleted. */
  changed: number;
  paused: boolean;
  foreign?: ForeignField[];
  /** The platform's certificates (certificates.ts), for status.certificates. */
  certificates: Record<string, CertificateState>;
}

/** The status of a reconcile of `platform` over `current`; `objects` lists a kind in its namespace. */
export function platformStatus(
  platform: OntoPlatform,
  current: OntoPlatformStatus,
  spec: ResolvedSpec,
  outcome: Outcome,
  objects: (apiVersion: string, kind: string) => KubeObject[],
  now: Date,
): OntoPlatformStatus {
  const workloads = {
    Deployment: objects("apps/v1", "Deployment"),
    StatefulSet: objects("apps/v1", "StatefulSet"),
  };
  const status = computeStatus({
    spec,
    generation: platform.metadata.generation ?? 0,
    previous: current,
    workloads: componentWorkloads(platform, workloads, objects("v1", "Pod")),
    applyErrors: outcome.errors,
    problems: outcome.problems,
    changed: outcome.changed,
    paused: outcome.paused,
    ...(outcome.foreign ? { foreign: outcome.foreign } : {}),
    now,
  });
  return Object.keys(outcome.certificates).length > 0
    ? { ...status, certificates: outcome.certificates }
    : status;
}

/** The platform's component workloads by component name, from the workload and Pod caches. */
export function componentWorkloads(
  platform: OntoPlatform,
  workloads: { Deployment: readonly KubeObject[]; StatefulSet: readonly KubeObject[] },
  pods: readonly KubeObject[],
): Map<string, ComponentWorkload> {
  const found = new Map<string, ComponentWorkload>();
  const unschedulable = unschedulableMessages(platform, pods);
  for (const kind of ["Deployment", "StatefulSet"] as const) {
    for (const obj of workloads[kind] as WorkloadView[]) {
      const info = componentByName(obj.metadata?.name ?? "");
      if (!info || info.kind !== kind) continue;
      if (obj.metadata?.labels?.[INSTANCE_LABEL] !== platform.metadata.name) continue;
      const message = unschedulable.get(info.name);
      found.set(info.name, {
        kind,
        ...(obj.metadata.generation !== undefined ? { generation: obj.metadata.generation } : {}),
        labels: obj.metadata.labels,
        ...(obj.spec ? { spec: obj.spec } : {}),
        ...(obj.status ? { status: obj.status } : {}),
        ...(message !== undefined ? { unschedulable: message } : {}),
      });
    }
  }
  return found;
}
