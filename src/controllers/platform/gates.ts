// What stops a reconcile before anything is rendered: another OntoPlatform already manages the
// namespace, the spec cannot be resolved, or a version it needs is in no release (spec.version, or
// one that components still run). The platform's status says so (Degraded with the reason; phase
// Error, or Degraded for an unknown release of a platform that already runs) and nothing is applied. Pure: the platforms of
// the namespace come from the cache, the clock is an argument.
import {
  CONDITION,
  REASON,
  resolveSpec,
  type OntoPlatform,
  type OntoPlatformStatus,
  type Reason,
  type ResolvedSpec,
} from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import { unknownReleases, type ReleaseCatalog } from "../../release/index.js";
import { errorFields, setCondition, type ReadonlyStore } from "../../runtime/index.js";
import { isTerminating } from "../shared/kube-views.js";

export type Gate =
  | { open: true; spec: ResolvedSpec }
  | { open: false; status: (current: OntoPlatformStatus) => OntoPlatformStatus };

/** The older platform (by creation, then name) that manages `platform`'s namespace, if any. */
export function namespaceTakenBy(
  platform: OntoPlatform,
  platforms: ReadonlyStore<KubeObject>,
): string | undefined {
  const ns = platform.metadata.namespace;
  const others = platforms
    .byNamespace(ns)
    .filter((p) => p.metadata?.name !== platform.metadata.name && !isTerminating(p));
  // Timestamps from the watch are RFC 3339 strings, which sort as time does.
  const key = (p: { metadata?: { creationTimestamp?: unknown; name?: string } }): string => {
    const t = p.metadata?.creationTimestamp;
    return `${typeof t === "string" ? t : ""}/${p.metadata?.name ?? ""}`;
  };
  return others.filter((p) => key(p) < key(platform))[0]?.metadata?.name;
}

function stopped(
  platform: OntoPlatform,
  reason: Reason,
  message: string,
  now: Date,
  phase: (current: OntoPlatformStatus) => "Error" | "Degraded" = () => "Error",
): Gate {
  const generation = platform.metadata.generation ?? 0;
  return {
    open: false,
    status: (current) => ({
      ...current,
      phase: phase(current),
      observedGeneration: generation,
      conditions: setCondition(
        current.conditions,
        { type: CONDITION.Degraded, status: "True", reason, message, observedGeneration: generation },
        now,
      ),
    }),
  };
}

/** Open with the resolved spec, or closed with the status that says why. */
export function checkGates(
  platform: OntoPlatform,
  platforms: ReadonlyStore<KubeObject>,
  releases: ReleaseCatalog,
  now: Date,
): Gate {
  const ns = platform.metadata.namespace;
  const taken = namespaceTakenBy(platform, platforms);
  if (taken) {
    const message = `OntoPlatform ${taken} already manages namespace ${ns}; one platform per namespace`;
    return stopped(platform, REASON.NamespaceTaken, message, now);
  }
  let spec: ResolvedSpec;
  try {
    spec = resolveSpec(platform.spec);
  } catch (err) {
    return stopped(platform, REASON.InvalidSpec, errorFields(err).error, now);
  }
  // A version no release describes: say which, and change nothing (the platform keeps what it runs).
  const unknown = unknownReleases(releases, spec.version, platform.status);
  if (unknown)
    return stopped(platform, REASON.UnknownRelease, unknown, now, (s) => (s.version ? "Degraded" : "Error"));
  return { open: true, spec };
}
