// Container resources from the spec, completed so every container has requests and limits
// (tenant ResourceQuotas refuse pods without them) and never a request above its limit, with
// the healer's memory override (raised after an OOMKill, persisted in status) on top.
import type { ResourceList, ResourceRequirements } from "./objects.js";
import { Quantity } from "../api/index.js";

/** Requests set from a VerticalPodAutoscaler recommendation (status.verticalScaling[].applied). */
export interface AppliedRequests {
  cpu?: string | undefined;
  memory?: string | undefined;
}

/**
 * The spec's resources with the applied requests in place of its requests, as if the user had
 * written them: each at most the user's own limit (a request above it would be refused); a limit
 * the user left to the defaults rises to meet it, as it does for a request the user wrote.
 */
export function withAppliedRequests(
  spec: SpecResources | undefined,
  applied: AppliedRequests | undefined,
): SpecResources | undefined {
  if (!applied) return spec;
  const requests: Record<string, string> = { ...spec?.requests };
  for (const key of ["cpu", "memory"] as const) {
    const value = applied[key];
    if (value === undefined) continue;
    const limit = spec?.limits?.[key];
    requests[key] =
      limit !== undefined && Quantity.parse(value).compareTo(Quantity.parse(limit)) > 0 ? limit : value;
  }
  return { ...spec, requests };
}

/** The healer's raised memory for one component (status.healing.memoryOverrides). */
export interface MemoryOverride {
  memoryLimit: string;
  memoryRequest?: string | undefined;
}

export interface SpecResources {
  requests?: Record<string, string> | undefined;
  limits?: Record<string, string> | undefined;
}

function parse(text: string, path: string): Quantity {
  try {
    return Quantity.parse(text);
  } catch (err) {
    throw new Error(`${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * `field` names the spec path for error messages (e.g. "spec.controlPlane.ontologyService.resources").
 * Missing values come from `fallback`; a limit the user did not give is at least the request;
 * the healer's override replaces the memory limit (and request, when it raised that too).
 */
export function completeResources(
  spec: SpecResources | undefined,
  fallback: ResourceRequirements,
  field: string,
  override?: MemoryOverride,
): ResourceRequirements {
  const requests: ResourceList = {};
  const limits: ResourceList = {};
  const keys = new Set([
    ...Object.keys(fallback.requests),
    ...Object.keys(fallback.limits),
    ...Object.keys(spec?.requests ?? {}),
    ...Object.keys(spec?.limits ?? {}),
  ]);
  for (const key of [...keys].sort()) {
    const overrideLimit = key === "memory" ? override?.memoryLimit : undefined;
    const overrideRequest = key === "memory" ? override?.memoryRequest : undefined;
    const givenRequest = overrideRequest ?? spec?.requests?.[key];
    const givenLimit = overrideLimit ?? spec?.limits?.[key];
    let request = givenRequest ?? fallback.requests[key];
    let limit = givenLimit ?? fallback.limits[key];
    if (request !== undefined && limit !== undefined) {
      // A default limit rises to meet the user's request; a default (or healed-over) request
      // never exceeds the limit. A user's own request above their own limit is left for the
      // API server's validation to report.
      const order = parse(request, `${field}.requests.${key}`).compareTo(
        parse(limit, `${field}.limits.${key}`),
      );
      if (order > 0 && givenLimit === undefined) limit = request;
      else if (order > 0 && (givenRequest === undefined || overrideLimit !== undefined)) request = limit;
    }
    if (request !== undefined) requests[key] = request;
    if (limit !== undefined) limits[key] = limit;
  }
  return { requests, limits };
}
