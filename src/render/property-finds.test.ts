// What the schema property runs (test/cluster/api-properties.test.ts) found, kept as plain cases:
// each is a spec the schema took and the API server (or render) then refused, or an object the
// server stored otherwise than rendered, so the operator would have seen drift on every pass.
import { describe, expect, it } from "vitest";
import { resolveSpec, type OntoPlatformSpec } from "../api/index.js";
import { validateSpec } from "../api/validate.js";
import { releaseFor } from "../release/index.js";
import { renderPlatform } from "./index.js";

const paths = (spec: unknown): string[] => validateSpec(spec).map((i) => i.path);

function render(spec: OntoPlatformSpec) {
  const resolved = resolveSpec(spec);
  return renderPlatform({
    platform: { name: "p", namespace: "ns", uid: "u" },
    spec: resolved,
    release: releaseFor(resolved.version),
    capabilities: { serviceMonitor: false, verticalPodAutoscaler: false },
    generateSecret: ({ length }) => "s".repeat(length),
  });
}

describe("found by the schema property runs", () => {
  it("a volume finer than a milli-unit (stored rounded up: immutable claim templates drift) or of zero", () => {
    expect(paths({ version: "1.5.0", infrastructure: { postgres: { storage: ".63748449" } } })).toEqual([
      "spec.infrastructure.postgres.storage",
    ]);
    expect(paths({ version: "1.5.0", infrastructure: { minio: { storage: ".0" } } })).toEqual([
      "spec.infrastructure.minio.storage",
    ]);
  });

  it("counted quota values CEL does not read as integers (.0, 94531Ti) are refused offline as by the server", () => {
    for (const value of [".0", "94531Ti", "1000m"])
      expect(
        paths({ version: "1.5.0", tenancy: { mode: "namespace", resourceQuota: { pods: value } } }),
      ).toEqual(["spec.tenancy.resourceQuota"]);
    expect(
      paths({ version: "1.5.0", tenancy: { mode: "namespace", resourceQuota: { pods: "50" } } }),
    ).toEqual([]);
  });

  it("a toleration with an empty value renders without it, as the server stores it", () => {
    const toleration = { key: "pool", operator: "Equal" as const, value: "", effect: "NoSchedule" as const };
    const objects = render({
      version: "1.5.0",
      global: { nodePool: { tolerations: [toleration] } },
      gateway: { nodePool: { tolerations: [{ ...toleration, key: "edge" }] } },
    });
    const gateway = objects.find(
      (o) => o.kind === "Deployment" && o.metadata.name === "gateway",
    ) as unknown as {
      spec: { template: { spec: { tolerations: Record<string, unknown>[] } } };
    };
    expect(gateway.spec.template.spec.tolerations.map((t) => t.key)).toEqual(["pool", "edge"]);
    for (const t of gateway.spec.template.spec.tolerations) expect(t).not.toHaveProperty("value");
  });

  it("a Jaeger URL no URL parser reads, and an image path outside the reference grammar", () => {
    const tracing = (jaegerEndpoint: string) => ({
      version: "1.5.0",
      observability: { tracing: { enabled: true, jaegerEndpoint } },
    });
    expect(paths(tracing("http://>!"))).toEqual(["spec.observability.tracing.jaegerEndpoint"]);
    expect(paths(tracing("http://s.v.9/x"))).toEqual(["spec.observability.tracing.jaegerEndpoint"]);
    expect(paths(tracing("http://10.0.0.1:14268/api/traces"))).toEqual([]);
    expect(paths(tracing("http://jaeger.observability:14268/api/traces"))).toEqual([]);
    expect(() => render(tracing("http://jaeger:14268/api/traces") as OntoPlatformSpec)).not.toThrow();
    expect(paths({ version: "1.5.0", global: { imageRegistry: "a/0-.a" } })).toEqual([
      "spec.global.imageRegistry",
    ]);
    expect(
      paths({ version: "1.5.0", global: { imageRegistry: "registry.example.com:5000/team_a/apps" } }),
    ).toEqual([]);
  });
});
