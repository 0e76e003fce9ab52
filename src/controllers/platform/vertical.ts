// Vertical scaling: what each component's VerticalPodAutoscaler recommends (read from its status,
// which the VPA recommender writes), and, for components in mode Apply, the requests the operator
// sets from it. Pure: the reconciler passes the VPAs from its cache and persists the result in
// status.verticalScaling, which render reads, so a restart renders the same requests.
//
// The operator changes requests as the VPA's own updater decides to evict: at once when the
// current ones are outside the recommender's range (lowerBound..upperBound); inside it, only when
// they are more than 20% off the target, and then at most once an hour (a young history gives a
// wide range; the first mismatch with the spec's requests is corrected at once). Applied requests
// are the target within the component's minAllowed..maxAllowed (and, in render, at most the limit).
//
// What status keeps is what a person acts on: the target, what was applied, and whether the requests
// the component runs with lie within the recommender's range (withinRange). The range itself
// (lowerBound, upperBound) stays on the VerticalPodAutoscaler: the recommender moves it on every
// pass (its width shrinks as history accrues, and it swings by orders of magnitude while the
// history is young), so a copy in status would rewrite every platform's status once a minute while
// nothing happens. Only crossing it matters (mode Apply then corrects the requests at once), so
// that is all status records of it.
import {
  INSTANCE_LABEL,
  Quantity,
  componentSpec,
  enabledComponents,
  type ResolvedSpec,
  type VerticalState,
} from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import { verticalResources } from "../../render/index.js";

export const VPA_REF = { apiVersion: "autoscaling.k8s.io/v1", kind: "VerticalPodAutoscaler" } as const;

type Amounts = { cpu?: string; memory?: string };
type Resource = "cpu" | "memory";

interface ContainerRecommendation {
  containerName?: string;
  target?: Record<string, string>;
  lowerBound?: Record<string, string>;
  upperBound?: Record<string, string>;
}

export type VpaObject = KubeObject & {
  status?: { recommendation?: { containerRecommendations?: ContainerRecommendation[] } };
};

function pickAmounts(values: Record<string, string> | undefined, resources: readonly Resource[]): Amounts {
  const out: Amounts = {};
  for (const r of resources) {
    const v = values?.[r];
    if (v !== undefined) out[r] = v;
  }
  return out;
}

const cmp = (a: string, b: string): number => Quantity.parse(a).compareTo(Quantity.parse(b));

/** Within the range, a change this much off the target is worth a rollout. */
const SIGNIFICANT_CHANGE = 0.2;
/** Within the range, applied requests stay at least this long before they change again. */
const SETTLE_MS = 60 * 60_000;

function farFrom(current: string, target: string): boolean {
  const c = Quantity.parse(current).toNumber();
  const t = Quantity.parse(target).toNumber();
  return t > 0 && Math.abs(c - t) / t > SIGNIFICANT_CHANGE;
}

function clamp(value: string, min: string | undefined, max: string | undefined): string {
  if (min !== undefined && cmp(value, min) < 0) return min;
  if (max !== undefined && cmp(value, max) > 0) return max;
  return value;
}

function sameAmounts(a: Amounts | undefined, b: Amounts | undefined): boolean {
  return (a?.cpu ?? "") === (b?.cpu ?? "") && (a?.memory ?? "") === (b?.memory ?? "");
}

/**
 * The new status.verticalScaling for `spec`, from the platform's VPAs and the previous status;
 * undefined when no component has a recommendation or applied requests to show.
 */
export function verticalScalingStatus(input: {
  spec: ResolvedSpec;
  platformName: string;
  previous: Readonly<Record<string, VerticalState>> | undefined;
  vpas: readonly KubeObject[];
  now: Date;
}): Record<string, VerticalState> | undefined {
  const out: Record<string, VerticalState> = {};
  for (const component of enabledComponents(input.spec)) {
    const settings = componentSpec(input.spec, component);
    const mode = settings.verticalScaling?.mode ?? "Recommend";
    if (mode === "Off") continue;
    const vpa = (input.vpas as readonly VpaObject[]).find(
      (v) =>
        v.metadata?.name === component.name && v.metadata.labels?.[INSTANCE_LABEL] === input.platformName,
    );
    const rec = vpa?.status?.recommendation?.containerRecommendations?.find(
      (c) => c.containerName === component.name,
    );
    const previous = input.previous?.[component.name];
    if (!rec?.target) {
      // No recommendation (yet, or the VPA is gone): keep what was applied, so requests do not
      // jump back while the recommender restarts.
      if (mode === "Apply" && previous?.applied) out[component.name] = { ...previous, mode };
      continue;
    }
    const resources = verticalResources(settings.autoscaling?.enabled === true) as Resource[];
    const target = pickAmounts(rec.target, resources);
    const lowerBound = pickAmounts(rec.lowerBound, resources);
    const upperBound = pickAmounts(rec.upperBound, resources);
    const inRange = (r: Resource, current: string, wanted: string): boolean =>
      cmp(current, lowerBound[r] ?? wanted) >= 0 && cmp(current, upperBound[r] ?? wanted) <= 0;
    const state: VerticalState = { mode, container: component.name, target };
    if (mode === "Apply") {
      const applied: Amounts = {};
      const had = previous?.mode === "Apply" ? previous.applied : undefined;
      for (const r of resources) {
        const wanted = target[r];
        if (wanted === undefined) continue;
        const current = had?.[r] ?? settings.resources.requests[r];
        const bounded = clamp(
          wanted,
          settings.verticalScaling?.minAllowed?.[r],
          settings.verticalScaling?.maxAllowed?.[r],
        );
        const lastApplied = previous?.appliedAt ? Date.parse(previous.appliedAt) : undefined;
        const settled =
          lastApplied !== undefined &&
          input.now.getTime() - lastApplied < SETTLE_MS &&
          had?.[r] !== undefined;
        if (!inRange(r, current, wanted) || (farFrom(current, bounded) && !settled)) applied[r] = bounded;
        else if (had?.[r] !== undefined) applied[r] = had[r];
        // else: the spec's own request is good enough; nothing is applied.
      }
      if (Object.keys(applied).length > 0) {
        state.applied = applied;
        state.appliedAt =
          had && sameAmounts(had, applied) && previous?.appliedAt
            ? previous.appliedAt
            : input.now.toISOString();
      }
    }
    // The requests the component runs with from here on: the applied ones, else the spec's.
    state.withinRange = resources.every((r) => {
      const wanted = target[r];
      const current = state.applied?.[r] ?? settings.resources.requests[r];
      return wanted === undefined || inRange(r, current, wanted);
    });
    out[component.name] = state;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
