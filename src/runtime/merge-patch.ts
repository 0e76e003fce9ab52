// The JSON merge patch (RFC 7386) that turns `from` into `to`: changed keys with their new value,
// removed keys as null. A merge patch of the whole new status would leave keys we dropped (a
// merge patch only removes what it sets to null), so the status writer sends this diff instead.
// Written by hand: the npm diff libraries produce JSON Patch (RFC 6902), not merge patches.

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** `value` with object keys sorted, deeply: equal content gives equal JSON. */
export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = canonical(v);
    }
    return out;
  }
  return value;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** undefined when `from` already equals `to`. */
export function mergePatchDiff(from: unknown, to: unknown): Json | undefined {
  if (!isObject(from) || !isObject(to)) {
    // Key order is not content: the API server returns objects in its own order.
    return JSON.stringify(canonical(from)) === JSON.stringify(canonical(to))
      ? undefined
      : ((to ?? null) as Json);
  }
  const patch: Record<string, Json> = {};
  for (const key of Object.keys(from)) {
    if (to[key] === undefined && from[key] !== undefined) patch[key] = null;
  }
  for (const [key, value] of Object.entries(to)) {
    if (value === undefined) continue;
    const sub = mergePatchDiff(from[key], value);
    if (sub !== undefined) patch[key] = sub;
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}
