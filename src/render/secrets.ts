// Generated credentials. Render never invents randomness (it must stay deterministic): the
// caller passes the values already stored in the cluster, and a generator for the ones that do
// not exist yet. A value once stored is reused forever, so a reconcile never rotates a password.
// Under retentionPolicy.secrets Retain a generated Secret carries no owner reference: the garbage
// collector would otherwise delete it with the platform while the retained volumes keep the data
// those credentials open. A platform created again under the same name finds it by its labels and
// reuses its values; under Delete the Secret is owned and goes with the platform.
import { objectMeta, type Owner } from "./meta.js";
import type { RenderedObject } from "./objects.js";

/** Label on every generated Secret: the reconciler keeps these unless the retention policy says otherwise. */
export const GENERATED_SECRET_LABEL = "onto.paas/generated-secret";

/** Stored values of the generated Secrets, decoded: secret name -> key -> value. */
export type ExistingSecrets = Readonly<Record<string, Readonly<Record<string, string>>>>;

/**
 * Produces a fresh value for one key of one Secret: exactly `length` random letters and digits
 * (the Kafka cluster id must be 22 base64url characters; passwords go into shell and config files).
 */
export type SecretGenerator = (request: { secret: string; key: string; length: number }) => string;

export interface SecretKeySpec {
  key: string;
  length: number;
}

export function generatedSecret(
  owner: Owner,
  name: string,
  keys: readonly SecretKeySpec[],
  existing: ExistingSecrets,
  generate: SecretGenerator,
  retention: "Retain" | "Delete",
): RenderedObject {
  const stored = existing[name] ?? {};
  const data: Record<string, string> = {};
  for (const { key, length } of keys) {
    const value = stored[key] ?? generate({ secret: name, key, length });
    data[key] = Buffer.from(value, "utf8").toString("base64");
  }
  const { ownerReferences, ...meta } = objectMeta(owner, name);
  meta.labels[GENERATED_SECRET_LABEL] = "true";
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: retention === "Delete" ? { ...meta, ownerReferences } : meta,
    type: "Opaque",
    data,
  };
}

/** An env var read from a generated Secret. */
export function secretEnv(
  name: string,
  secret: string,
  key: string,
): { name: string; valueFrom: Record<string, unknown> } {
  return { name, valueFrom: { secretKeyRef: { name: secret, key } } };
}
