// Online volume growth: a stateful component's `storage` grew. Each existing claim of its
// StatefulSet (data-postgres-0, ...) asks for less than the new size, so its
// spec.resources.requests.storage is patched (the storage provider and the kubelet grow the volume
// under the running pod; no pod restarts), and the StatefulSet's claim template, which the API
// server does not update, is changed by re-creating the StatefulSet keeping its pods
// (statefulset-recreate.ts, the next stage). Only where the claim's StorageClass allows expansion:
// otherwise nothing is changed: the claims stay, and the component is rendered with the size its
// StatefulSet has (so neither the claim template nor what derives from the size, such as Postgres's
// max_slot_wal_keep_size, changes), and the platform says so, naming the field and the class. A
// claim is never made smaller. Pure over the rendered objects and the caches; the patches run
// through act().
import { Quantity, REASON, componentByName, type OntoPlatform } from "../../api/index.js";
import type { KubeObject, ObjectRef } from "../../kube/index.js";
import type { RenderedObject } from "../../render/index.js";
import type { ClusterAction } from "../shared/act.js";
import type { SpecProblem } from "./status.js";

export const CLAIM_REF = { apiVersion: "v1", kind: "PersistentVolumeClaim" } as const;
export const STORAGE_CLASS_REF = { apiVersion: "storage.k8s.io/v1", kind: "StorageClass" } as const;

interface ClaimTemplate {
  metadata?: { name?: string };
  spec?: { storageClassName?: string; resources?: { requests?: { storage?: string } } };
}
interface ClaimView {
  metadata?: { name?: string; namespace?: string };
  spec?: { storageClassName?: string; resources?: { requests?: { storage?: string } } };
}
interface StorageClassView {
  allowVolumeExpansion?: boolean;
}

/** One claim to grow. */
export interface ClaimGrowth {
  /** The PVC, e.g. data-postgres-0. */
  claim: string;
  workload: string;
  from: string;
  to: string;
}

export interface VolumeGrowth {
  grow: ClaimGrowth[];
  /** Growth the StorageClass does not allow (the spec field, the class, the claims). */
  problems: SpecProblem[];
  /** StatefulSet name -> the storage its live claim template has, for growth that was refused. */
  kept: Map<string, string>;
}

export interface VolumeGrowthInput {
  desired: readonly RenderedObject[];
  live: (obj: RenderedObject) => KubeObject | undefined;
  /** The PersistentVolumeClaims of the platform's namespace. */
  claims: readonly KubeObject[];
  storageClass: (name: string) => KubeObject | undefined;
}

const templatesOf = (obj: KubeObject | RenderedObject): ClaimTemplate[] =>
  (obj as { spec?: { volumeClaimTemplates?: ClaimTemplate[] } }).spec?.volumeClaimTemplates ?? [];

const sizeOf = (t: ClaimTemplate | ClaimView | undefined): string | undefined =>
  t?.spec?.resources?.requests?.storage;

const larger = (a: string | undefined, b: string | undefined): boolean =>
  a !== undefined &&
  b !== undefined &&
  Quantity.isValid(a) &&
  Quantity.isValid(b) &&
  Quantity.parse(a).compareTo(Quantity.parse(b)) > 0;

/** The ordinal of `claim` if it is template `template`'s claim of StatefulSet `workload`. */
function isClaimOf(claim: string, template: string, workload: string): boolean {
  const prefix = `${template}-${workload}-`;
  return claim.startsWith(prefix) && /^\d+$/.test(claim.slice(prefix.length));
}

/** The claims to grow, and the growth refused (with the size to keep rendering). */
export function planVolumeGrowth(input: VolumeGrowthInput): VolumeGrowth {
  const grow: ClaimGrowth[] = [];
  const problems: SpecProblem[] = [];
  const kept = new Map<string, string>();
  for (const obj of input.desired) {
    if (obj.kind !== "StatefulSet") continue;
    const workload = obj.metadata.name;
    const refused = new Set<string>();
    for (const template of templatesOf(obj)) {
      const name = template.metadata?.name ?? "";
      const want = sizeOf(template);
      // By name, so the problem's message is the same on every pass (whatever the cache's order).
      const smaller = (input.claims as ClaimView[])
        .filter((c) => isClaimOf(c.metadata?.name ?? "", name, workload) && larger(want, sizeOf(c)))
        .sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""));
      const allowed: ClaimGrowth[] = [];
      const blocked = new Map<string, string[]>();
      for (const claim of smaller) {
        const className = claim.spec?.storageClassName ?? "";
        const cls = className ? (input.storageClass(className) as StorageClassView | undefined) : undefined;
        if (cls?.allowVolumeExpansion === true)
          allowed.push({
            claim: claim.metadata?.name ?? "",
            workload,
            from: sizeOf(claim) ?? "",
            to: want ?? "",
          });
        else blocked.set(className, [...(blocked.get(className) ?? []), claim.metadata?.name ?? ""]);
      }
      // All of a template's claims grow, or none does (they share one size).
      if (blocked.size === 0) {
        grow.push(...allowed);
        continue;
      }
      refused.add(name);
      const info = componentByName(workload);
      const field = info ? `spec.${info.specPath.join(".")}.storage` : `StatefulSet/${workload} storage`;
      for (const [className, claims] of blocked)
        problems.push({
          field,
          reason: REASON.VolumeExpansionUnsupported,
          message: `${workload}: cannot grow ${claims.join(", ")} to ${want ?? "?"}: ${
            className
              ? `StorageClass ${className} ${input.storageClass(className) ? "does not set allowVolumeExpansion: true" : "does not exist"}`
              : "the claims have no StorageClass (statically provisioned volumes cannot grow)"
          }; nothing was changed`,
        });
    }
    const current = input.live(obj);
    const size = current ? templatesOf(current).find((t) => refused.has(t.metadata?.name ?? "")) : undefined;
    if (sizeOf(size) !== undefined) kept.set(workload, sizeOf(size) ?? "");
  }
  return { grow, problems, kept };
}

/**
 * `spec` (resolved, or as the user wrote it) with the storage of each component in `kept` set to
 * the kept size: what the component is rendered with while its growth is refused.
 */
export function withKeptStorage<T>(spec: T, kept: ReadonlyMap<string, string>): T {
  if (kept.size === 0) return spec;
  const copy = structuredClone(spec);
  for (const [workload, size] of kept) {
    const info = componentByName(workload);
    if (!info) continue;
    let node = copy as Record<string, unknown>;
    for (const key of info.specPath) {
      const next = node[key];
      node = (next !== null && typeof next === "object" ? next : (node[key] = {})) as Record<string, unknown>;
    }
    node.storage = size;
  }
  return copy;
}

/** The patches that grow `grow`'s claims in the platform's namespace. */
export function planClaimGrowth(platform: OntoPlatform, grow: readonly ClaimGrowth[]): ClusterAction[] {
  return grow.map((g) => {
    const target: ObjectRef = { ...CLAIM_REF, namespace: platform.metadata.namespace, name: g.claim };
    const id = `PersistentVolumeClaim/${g.claim}`;
    return {
      verb: "patch",
      target,
      reason: "VolumeGrown",
      message: `grew ${id} of StatefulSet/${g.workload} from ${g.from} to ${g.to} (online: no pod restarts)`,
      failure: { reason: "VolumeGrowthFailed", message: `could not grow ${id} to ${g.to}` },
      label: `grow ${id}`,
      run: async (client) => {
        // The cache can lag behind a patch of the previous pass: nothing to do (or record) then.
        const now = await client.getIfExists<KubeObject & ClaimView>(target);
        if (!now || !larger(g.to, sizeOf(now))) return false;
        await client.mergePatch(target, { spec: { resources: { requests: { storage: g.to } } } });
        return true;
      },
    };
  });
}
