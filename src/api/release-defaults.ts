// Defaulting of an OntoRelease spec: the same defaults the API server applies from the CRD.
import { Value } from "@sinclair/typebox/value";
import { OntoReleaseSpecSchema, type OntoReleaseSpec, type ResolvedReleaseSpec } from "./release-schema.js";

/** `spec` with every default applied (a new object). Expects a spec that passed validation. */
export function resolveRelease(spec: OntoReleaseSpec): ResolvedReleaseSpec {
  return Value.Default(OntoReleaseSpecSchema, structuredClone(spec)) as ResolvedReleaseSpec;
}
