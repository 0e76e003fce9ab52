// Whether the platform's own workloads fit the ResourceQuota its spec asks for. Without this check
// a tenant whose quota is too small sees pods silently missing (the ReplicaSet controller retries
// and records FailedCreate on the ReplicaSet, which nobody reads); with it the OntoPlatform says
// which quota key is exceeded and by how much. Pure: a function of the rendered objects.
import { Quantity, REASON } from "../../api/index.js";
import type { RenderedObject } from "../../render/index.js";
import type { SpecProblem } from "./status.js";

interface ContainerResources {
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}

interface PodOwner {
  spec?: {
    replicas?: number;
    template?: { spec?: { containers?: ContainerResources[]; initContainers?: ContainerResources[] } };
  };
}

/** Quota keys this check understands, and where in a container's resources each is counted. */
const KEYS: Record<string, { field: "requests" | "limits"; resource: "cpu" | "memory" }> = {
  "requests.cpu": { field: "requests", resource: "cpu" },
  cpu: { field: "requests", resource: "cpu" },
  "requests.memory": { field: "requests", resource: "memory" },
  memory: { field: "requests", resource: "memory" },
  "limits.cpu": { field: "limits", resource: "cpu" },
  "limits.memory": { field: "limits", resource: "memory" },
};

/** A quantity as a number of units (cores or bytes), for sums and messages. */
function amount(text: string): number {
  const q = Quantity.parse(text);
  return Number(q.numerator) / Number(q.denominator);
}

function format(resource: "cpu" | "memory", value: number): string {
  if (resource === "cpu") return Number.isInteger(value) ? String(value) : `${Math.ceil(value * 1000)}m`;
  const gi = value / 2 ** 30;
  return gi >= 1 ? `${+gi.toFixed(2)}Gi` : `${Math.ceil(value / 2 ** 20)}Mi`;
}

/** Replicas an HPA-managed workload runs at least (the HPA's minimum), else the workload's own. */
function replicasOf(obj: RenderedObject & PodOwner, hpaMin: ReadonlyMap<string, number>): number {
  return obj.spec?.replicas ?? hpaMin.get(obj.metadata.name) ?? 1;
}

/**
 * Totals of the long-running workloads (Deployments and StatefulSets, at their replica count or
 * HPA minimum) compared with the quota; one problem per exceeded key. Jobs are left out: they run
 * for seconds and the quota admits them once the workloads are settled.
 */
export function quotaProblems(
  objects: readonly RenderedObject[],
  quota: Readonly<Record<string, string>> | undefined,
): SpecProblem[] {
  if (!quota) return [];
  const hpaMin = new Map<string, number>();
  for (const obj of objects) {
    if (obj.kind !== "HorizontalPodAutoscaler") continue;
    const spec = obj.spec as { minReplicas?: number; scaleTargetRef?: { name?: string } } | undefined;
    if (spec?.scaleTargetRef?.name) hpaMin.set(spec.scaleTargetRef.name, spec.minReplicas ?? 1);
  }
  const totals = { requests: { cpu: 0, memory: 0 }, limits: { cpu: 0, memory: 0 } };
  for (const obj of objects) {
    if (obj.kind !== "Deployment" && obj.kind !== "StatefulSet") continue;
    const workload = obj as RenderedObject & PodOwner;
    const replicas = replicasOf(workload, hpaMin);
    for (const container of workload.spec?.template?.spec?.containers ?? []) {
      for (const field of ["requests", "limits"] as const) {
        for (const resource of ["cpu", "memory"] as const) {
          const value = container.resources?.[field]?.[resource];
          if (value) totals[field][resource] += amount(value) * replicas;
        }
      }
    }
  }
  const problems: SpecProblem[] = [];
  for (const [key, hard] of Object.entries(quota)) {
    const where = KEYS[key];
    if (!where) continue;
    const used = totals[where.field][where.resource];
    if (used > amount(hard)) {
      problems.push({
        field: `spec.tenancy.resourceQuota["${key}"]`,
        reason: REASON.QuotaExceeded,
        message: `the platform's workloads need ${format(where.resource, used)} of ${key}, the quota allows ${hard}; raise the quota or lower replicas/resources`,
      });
    }
  }
  return problems;
}
