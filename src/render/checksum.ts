// Content hashes: the ConfigMap checksum on pod templates (a config change rolls the pods) and
// the suffix of one-shot Job names (a changed bucket or topic list runs a new Job).
// Hashing is computation, not I/O, so render stays pure.
import { createHash } from "node:crypto";

/** sha256 of a string map, independent of key order. */
export function checksumOf(data: Readonly<Record<string, string>>): string {
  const hash = createHash("sha256");
  for (const key of Object.keys(data).sort()) {
    hash
      .update(key)
      .update("\0")
      .update(data[key] ?? "")
      .update("\0");
  }
  return hash.digest("hex");
}

/** JSON with every object's keys sorted: the same content gives the same text whatever the order it was built in. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

/** A short, DNS-safe suffix derived from content. */
export function shortHash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 8);
}
