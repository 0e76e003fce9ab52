// Defaulting: the same defaults the API server applies from the CRD schema, applied in memory.
import { Value } from "@sinclair/typebox/value";
import { OntoPlatformSpecSchema } from "./schema.js";
import type { OntoPlatformSpec, ResolvedSpec } from "./schema.js";

/**
 * Returns `spec` with every default applied (a new object; the input is not changed). The result
 * matches what the API server stores for the same spec, so resolving a stored spec again is a
 * no-op. Expects a spec that passed validation; on an invalid one the result is not meaningful.
 */
export function resolveSpec(spec: OntoPlatformSpec): ResolvedSpec {
  // Value.Default fills absent properties from the schema's `default`s, descending into objects it
  // just defaulted to {} exactly as the API server's structural defaulting does.
  return Value.Default(OntoPlatformSpecSchema, structuredClone(spec)) as ResolvedSpec;
}

/** A Kafka topic's replication factor: as written, else min(3, Kafka replicas). */
export function topicReplicationFactor(
  kafka: ResolvedSpec["infrastructure"]["kafka"],
  topic: ResolvedSpec["infrastructure"]["kafka"]["topics"][number],
): number {
  return topic.replicationFactor ?? Math.min(3, kafka.replicas);
}
