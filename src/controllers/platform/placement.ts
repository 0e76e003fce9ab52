// Specs the cluster cannot run although the API server took them: a node selector no node
// matches, or requests larger than every node that matches could give. The scheduler would leave
// the pods Pending for ever and the platform would look as if it were only slow; these are
// reported as Degraded, naming the spec field to change. Pure over the rendered workloads and the
// Node cache. A cluster whose nodes the operator cannot see (no Node in the cache) is not judged.
import { REASON, Quantity, componentByName, componentSpec, type ResolvedSpec } from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import type { RenderedObject } from "../../render/index.js";
import type { SpecProblem } from "./status.js";

interface PodTemplate {
  nodeSelector?: Record<string, string>;
  containers?: { resources?: { requests?: Record<string, string> } }[];
}

interface NodeView {
  metadata?: { name?: string; labels?: Record<string, string> };
  spec?: { unschedulable?: boolean };
  status?: { allocatable?: Record<string, string> };
}

const RESOURCES = ["cpu", "memory"] as const;

function amount(text: string | undefined): number {
  return text !== undefined && Quantity.isValid(text) ? Quantity.parse(text).toNumber() : 0;
}

export function placementProblems(
  spec: ResolvedSpec,
  desired: readonly RenderedObject[],
  nodes: readonly KubeObject[],
): SpecProblem[] {
  const usable = (nodes as NodeView[]).filter((n) => !n.spec?.unschedulable);
  if (usable.length === 0) return [];
  const problems: SpecProblem[] = [];
  for (const obj of desired) {
    if (obj.kind !== "Deployment" && obj.kind !== "StatefulSet") continue;
    const info = componentByName(obj.metadata.name);
    if (!info || info.kind !== obj.kind) continue;
    const pod = (obj as { spec?: { template?: { spec?: PodTemplate } } }).spec?.template?.spec ?? {};
    const selector = Object.entries(pod.nodeSelector ?? {});
    const own = componentSpec(spec, info).nodePool?.nodeSelector ?? {};
    const selectorField =
      Object.keys(own).length > 0
        ? `spec.${info.specPath.join(".")}.nodePool.nodeSelector`
        : "spec.global.nodePool.nodeSelector";
    const matching = usable.filter((n) => selector.every(([k, v]) => n.metadata?.labels?.[k] === v));
    if (matching.length === 0) {
      problems.push({
        field: selectorField,
        reason: REASON.NoMatchingNode,
        message: `${info.name}: no schedulable node has ${selector.map(([k, v]) => `${k}=${v}`).join(", ")} (${usable.length} node(s) looked at)`,
      });
      continue;
    }
    const requests = Object.fromEntries(
      RESOURCES.map((r) => [
        r,
        (pod.containers ?? []).reduce((sum, c) => sum + amount(c.resources?.requests?.[r]), 0),
      ]),
    ) as Record<(typeof RESOURCES)[number], number>;
    const fits = matching.some((n) =>
      RESOURCES.every((r) => requests[r] <= amount(n.status?.allocatable?.[r])),
    );
    if (fits) continue;
    const largest = (r: (typeof RESOURCES)[number]): number =>
      Math.max(...matching.map((n) => amount(n.status?.allocatable?.[r])));
    problems.push({
      field: `spec.${info.specPath.join(".")}.resources.requests`,
      reason: REASON.RequestsExceedNodes,
      message: `${info.name}: a pod requests cpu ${requests.cpu}, memory ${Math.ceil(requests.memory / 2 ** 20)}Mi; the largest matching node has cpu ${largest("cpu")}, memory ${Math.floor(largest("memory") / 2 ** 20)}Mi allocatable`,
    });
  }
  return problems;
}
