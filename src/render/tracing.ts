// Where traces go. The spec names a Jaeger collector (seed: observability.tracing.jaegerEndpoint,
// e.g. http://jaeger:14268/api/traces, Jaeger's own HTTP protocol). Services instrumented with
// OpenTelemetry (Quarkus services such as Nessie, and any OpenTelemetry SDK) speak OTLP, which the
// same Jaeger collector receives on port 4317 (gRPC): their endpoint is the collector's host there.
import type { ResolvedSpec } from "../api/index.js";

/** OTLP gRPC port of a Jaeger collector. */
export const OTLP_GRPC_PORT = 4317;

/** The OTLP endpoint of the spec's Jaeger collector, or undefined when tracing is off. */
export function otlpEndpoint(spec: ResolvedSpec): string | undefined {
  const { enabled, jaegerEndpoint } = spec.observability.tracing;
  if (!enabled || !jaegerEndpoint) return undefined;
  const url = new URL(jaegerEndpoint);
  return `${url.protocol}//${url.hostname}:${OTLP_GRPC_PORT}`;
}
