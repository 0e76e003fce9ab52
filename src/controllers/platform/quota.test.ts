import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { resolveSpec, type OntoPlatformSpec } from "../../api/index.js";
import { releaseFor } from "../../release/index.js";
import { renderPlatform, type RenderedObject } from "../../render/index.js";
import { quotaProblems } from "./quota.js";

function renderSample(
  file: string,
  edit: (spec: OntoPlatformSpec) => void = () => {},
): { objects: RenderedObject[]; quota: Record<string, string> | undefined } {
  const doc = parse(readFileSync(new URL(`../../../samples/${file}`, import.meta.url), "utf8")) as {
    spec: OntoPlatformSpec;
  };
  edit(doc.spec);
  const spec = resolveSpec(doc.spec);
  const objects = renderPlatform({
    platform: {
      name: "tenant-alpha",
      namespace: "tenant-alpha",
      uid: "00000000-0000-0000-0000-000000000001",
    },
    spec,
    release: releaseFor(spec.version),
    capabilities: { serviceMonitor: false, verticalPodAutoscaler: false },
    generateSecret: ({ length }) => "x".repeat(length),
  });
  return { objects, quota: spec.tenancy.resourceQuota };
}

describe("quotaProblems", () => {
  it("finds nothing when the seed's tenant platform fits its quota", () => {
    const { objects, quota } = renderSample("tenant.yaml");
    expect(quota?.["requests.cpu"]).toBe("10");
    expect(quotaProblems(objects, quota)).toEqual([]);
  });

  it("names the exceeded key, what the platform needs and what the quota allows", () => {
    const { objects, quota } = renderSample("tenant.yaml", (spec) => {
      spec.tenancy = {
        ...spec.tenancy,
        resourceQuota: { ...spec.tenancy?.resourceQuota, "requests.cpu": "1" },
      };
    });
    const problems = quotaProblems(objects, quota);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({
      field: 'spec.tenancy.resourceQuota["requests.cpu"]',
      reason: "QuotaExceeded",
    });
    expect(problems[0]?.message).toMatch(/need \S+ of requests.cpu, the quota allows 1;/);
  });

  it("counts replicas: doubling a component's replicas can break a quota that fitted", () => {
    const base = renderSample("tenant.yaml");
    const needed = (objects: RenderedObject[]): number =>
      quotaProblems(objects, { "requests.memory": "1Mi" }).length;
    expect(needed(base.objects)).toBe(1);
    const { objects } = renderSample("tenant.yaml", (spec) => {
      spec.infrastructure = {
        ...spec.infrastructure,
        postgres: { ...spec.infrastructure?.postgres, replicas: 50 },
      };
    });
    expect(quotaProblems(objects, base.quota).map((p) => p.field)).toContain(
      'spec.tenancy.resourceQuota["requests.memory"]',
    );
  });

  it("ignores quota keys it does not model", () => {
    const { objects } = renderSample("tenant.yaml");
    expect(quotaProblems(objects, { pods: "1", "count/services": "1" })).toEqual([]);
  });
});
