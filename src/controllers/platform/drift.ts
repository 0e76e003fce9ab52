// Deciding, without asking the API server, whether a desired object needs to be applied.
//
// Two checks, both against the cached live object:
// - the desired object's hash, stored on the live object in an annotation when we applied it,
//   catches every change of ours, including fields we stopped setting (which a subset test
//   cannot see);
// - a subset test (every field we set has the same value live) catches drift: someone edited a
//   field we own. Quantities compare by value ("1024Mi" equals "1Gi"), because the API server
//   stores them canonicalised.
// Written by hand: server-side apply's own dry run answers the same question, but costs a request
// per object per reconcile, and a no-op reconcile must send none.
import { createHash } from "node:crypto";
import { Quantity } from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import type { RenderedObject } from "../../render/index.js";
import { canonical } from "../../runtime/index.js";

export const APPLIED_HASH_ANNOTATION = "onto.paas/applied-hash";

/** Stable hash of an object's content (key order does not matter). */
export function contentHash(obj: unknown): string {
  return createHash("sha256")
    .update(JSON.stringify(canonical(obj)))
    .digest("hex")
    .slice(0, 16);
}

/** The desired object with its own content hash recorded in an annotation. */
export function withAppliedHash<T extends RenderedObject>(obj: T): T {
  const hash = contentHash(obj);
  return {
    ...obj,
    metadata: {
      ...obj.metadata,
      annotations: { ...obj.metadata.annotations, [APPLIED_HASH_ANNOTATION]: hash },
    },
  };
}

function sameScalar(want: unknown, have: unknown): boolean {
  if (want === have) return true;
  if (typeof want === "number" && typeof have === "string") return String(want) === have;
  if (typeof want === "string" && typeof have === "number") return want === String(have);
  if (
    typeof want === "string" &&
    typeof have === "string" &&
    Quantity.isValid(want) &&
    Quantity.isValid(have)
  ) {
    return Quantity.parse(want).compareTo(Quantity.parse(have)) === 0;
  }
  return false;
}

/**
 * The first path at which `live` differs from `desired` (a field set in desired with another
 * value, or missing, live), or undefined when every desired field is present and equal. Fields
 * only the live object has (defaults, status, fields of other managers) are ignored.
 */
export function firstDifference(desired: unknown, live: unknown, path = ""): string | undefined {
  if (desired === undefined || desired === null) return undefined;
  if (Array.isArray(desired)) {
    if (!Array.isArray(live) || live.length !== desired.length) return path || "/";
    for (let i = 0; i < desired.length; i++) {
      const diff = firstDifference(desired[i], live[i], `${path}[${i}]`);
      if (diff !== undefined) return diff;
    }
    return undefined;
  }
  if (typeof desired === "object") {
    if (live === null || typeof live !== "object" || Array.isArray(live)) return path || "/";
    const liveRecord = live as Record<string, unknown>;
    for (const [key, value] of Object.entries(desired)) {
      const diff = firstDifference(value, liveRecord[key], `${path}.${key}`);
      if (diff !== undefined) return diff;
    }
    return undefined;
  }
  return sameScalar(desired, live) ? undefined : path;
}

/** Secrets are stored with `data` in base64; compare a desired `stringData` in that form. */
function comparable(obj: KubeObject): KubeObject {
  const stringData = (obj as { stringData?: Record<string, string> }).stringData;
  if (obj.kind !== "Secret" || !stringData) return obj;
  const { stringData: _omit, ...rest } = obj as KubeObject & {
    stringData?: unknown;
    data?: Record<string, string>;
  };
  const data: Record<string, string> = { ...(rest as { data?: Record<string, string> }).data };
  for (const [k, v] of Object.entries(stringData)) data[k] = Buffer.from(v, "utf8").toString("base64");
  return { ...rest, data } as KubeObject;
}

export type ApplyNeed =
  { apply: false } | { apply: true; reason: "Missing" | "SpecChanged" | "Drift"; path?: string };

/**
 * Whether `desired` (already carrying its hash annotation) must be applied over `live`.
 * `Missing`: no live object; `SpecChanged`: our desired content changed since the last apply;
 * `Drift`: someone else changed a field we own (path names the first one).
 */
export function applyNeed(desired: RenderedObject, live: KubeObject | undefined): ApplyNeed {
  if (!live) return { apply: true, reason: "Missing" };
  const want = desired.metadata.annotations?.[APPLIED_HASH_ANNOTATION];
  if (want === undefined || live.metadata?.annotations?.[APPLIED_HASH_ANNOTATION] !== want) {
    return { apply: true, reason: "SpecChanged" };
  }
  const path = firstDifference(comparable(desired), live);
  return path === undefined ? { apply: false } : { apply: true, reason: "Drift", path };
}
