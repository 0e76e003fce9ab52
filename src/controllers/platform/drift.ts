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
 * The merge key server-side apply uses for the items of the list at `path` (the Kubernetes
 * types' listMapKeys, the ones our objects use): another manager can add items to such a list,
 * and an apply of ours can neither remove them nor needs to. Other lists are atomic: compared whole.
 */
function listKey(path: string): string {
  if (path.endsWith(".volumeMounts")) return "mountPath";
  if (path.endsWith(".ports")) return path.includes(".containers[") ? "containerPort" : "port";
  return "name";
}

type Item = Record<string, unknown>;

/** The key of each item when every item of `list` is an object with a distinct key, else undefined. */
function keyed(list: readonly unknown[], key: string): Map<string, Item> | undefined {
  const map = new Map<string, Item>();
  for (const item of list) {
    if (item === null || typeof item !== "object" || Array.isArray(item)) return undefined;
    const value = (item as Item)[key];
    if (typeof value !== "string" && typeof value !== "number") return undefined;
    if (map.has(String(value))) return undefined;
    map.set(String(value), item as Item);
  }
  return map;
}

/**
 * Whether every field `desired` sets is in `live` with the same value: how a rendered object is
 * compared with its live one, which also holds the API server's defaults (the restart plan's
 * comparison for the reconciler and `onto upgrade`).
 */
export const coveredBy = (desired: unknown, live: unknown): boolean =>
  firstDifference(desired, live) === undefined;

/**
 * The first path at which `live` differs from `desired` (a field set in desired with another
 * value, or missing, live), or undefined when every desired field is present and equal. Fields
 * only the live object has (defaults, status, fields of other managers) are ignored, and so are
 * items another manager added to a keyed list (an env var, a container, a volume): applying
 * cannot remove them, so counting them as drift would re-apply in a loop (foreignItems reports them).
 */
export function firstDifference(desired: unknown, live: unknown, path = ""): string | undefined {
  if (desired === undefined || desired === null) return undefined;
  if (Array.isArray(desired)) {
    if (!Array.isArray(live)) return path || "/";
    const key = listKey(path);
    const want = desired.length > 0 ? keyed(desired, key) : undefined;
    const have = want ? keyed(live, key) : undefined;
    if (want && have) {
      for (const [k, item] of want) {
        const diff = firstDifference(item, have.get(k), `${path}[${key}=${k}]`);
        if (diff !== undefined) return diff;
      }
      return undefined;
    }
    if (live.length !== desired.length) return path || "/";
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

/** One step of a path into an object: a field, or the item of a keyed list with key = value. */
export type PathStep = string | { key: string; value: string };

/** An item another manager added to a keyed list of an object the operator applies. */
export interface ForeignItem {
  /** E.g. spec.template.spec.containers[name=gateway].env[name=INJECTED]. */
  path: string;
  steps: PathStep[];
}

/** The items of keyed lists `live` has and `desired` does not: what an apply of ours cannot remove. */
export function foreignItems(desired: unknown, live: unknown, steps: PathStep[] = []): ForeignItem[] {
  if (desired === null || typeof desired !== "object" || live === null || typeof live !== "object") return [];
  const path = pathText(steps);
  if (Array.isArray(desired)) {
    if (!Array.isArray(live) || desired.length === 0) return [];
    const key = listKey(path);
    const want = keyed(desired, key);
    const have = want ? keyed(live, key) : undefined;
    if (!want || !have) return [];
    const found: ForeignItem[] = [];
    for (const [k, item] of have) {
      const at: PathStep[] = [...steps, { key, value: k }];
      const mine = want.get(k);
      if (mine === undefined) found.push({ path: pathText(at), steps: at });
      else found.push(...foreignItems(mine, item, at));
    }
    return found;
  }
  if (Array.isArray(live)) return [];
  const liveRecord = live as Record<string, unknown>;
  return Object.entries(desired).flatMap(([k, v]) => foreignItems(v, liveRecord[k], [...steps, k]));
}

function pathText(steps: readonly PathStep[]): string {
  return steps
    .map((s, i) => (typeof s === "string" ? `${i === 0 ? "" : "."}${s}` : `[${s.key}=${s.value}]`))
    .join("");
}

interface ManagedFieldsEntry {
  manager?: string;
  fieldsV1?: Record<string, unknown>;
}

/**
 * Who holds `item` on an object, from its managedFields (server-side apply's record of who set
 * what): the first manager other than `self` whose fields contain the item, or undefined.
 */
export function managerOf(
  managedFields: readonly unknown[] | undefined,
  item: ForeignItem,
  self: string,
): string | undefined {
  for (const entry of (managedFields ?? []) as ManagedFieldsEntry[]) {
    if (!entry.manager || entry.manager === self || !entry.fieldsV1) continue;
    let node: Record<string, unknown> | undefined = entry.fieldsV1;
    for (const step of item.steps) {
      if (!node) break;
      if (typeof step === "string") {
        node = node[`f:${step}`] as Record<string, unknown> | undefined;
        continue;
      }
      const match: string | undefined = Object.keys(node).find((k) => {
        if (!k.startsWith("k:")) return false;
        try {
          const id = JSON.parse(k.slice(2)) as Record<string, unknown>;
          return String(id[step.key]) === step.value;
        } catch {
          return false;
        }
      });
      node = match === undefined ? undefined : (node[match] as Record<string, unknown>);
    }
    if (node) return entry.manager;
  }
  return undefined;
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
