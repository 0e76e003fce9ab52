import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { kubernetesCelEnvironment } from "./kubernetes-cel.js";
import { OntoPlatformSpecSchema } from "./schema.js";
import type { CelRule } from "./schema-kit.js";
import { validateOntoPlatform, validateSpec, RULES_NOT_CHECKED } from "./validate.js";

function allRules(node: unknown, out: CelRule[] = []): CelRule[] {
  if (typeof node !== "object" || node === null) return out;
  const rules = (node as Record<string, unknown>)["x-kubernetes-validations"];
  if (Array.isArray(rules)) out.push(...(rules as CelRule[]));
  for (const child of Object.values(node)) allRules(child, out);
  return out;
}

const platform = (spec: unknown) => ({
  apiVersion: "onto.paas/v1alpha1",
  kind: "OntoPlatform",
  metadata: { name: "p" },
  spec,
});

describe("CEL rules", () => {
  const rules = allRules(OntoPlatformSpecSchema);

  it("are all understood by the offline evaluator (only functions it registers)", () => {
    expect(rules.length).toBeGreaterThanOrEqual(20);
    const env = kubernetesCelEnvironment();
    for (const { rule } of rules) expect(() => env.parse(rule), rule).not.toThrow();
  });

  it("hold for every default, which the API server checks when the CRD is created", () => {
    const env = kubernetesCelEnvironment();
    const failures: string[] = [];
    const visit = (node: unknown): void => {
      if (typeof node !== "object" || node === null) return;
      const record = node as Record<string, unknown>;
      const nodeRules = (record["x-kubernetes-validations"] as CelRule[] | undefined) ?? [];
      if ("default" in record)
        for (const { rule } of nodeRules.filter((r) => !r.rule.includes("oldSelf"))) {
          let result: unknown;
          try {
            result = env.evaluate(rule, { self: record.default });
          } catch (err) {
            result = err instanceof Error ? err.message : err;
          }
          if (result !== true)
            failures.push(`${rule} on ${JSON.stringify(record.default)}: ${String(result)}`);
        }
      for (const child of Object.values(record)) visit(child);
    };
    visit(JSON.parse(JSON.stringify(OntoPlatformSpecSchema)));
    expect(failures).toEqual([]);
  });
});

describe("validateOntoPlatform", () => {
  it("names apiVersion, kind, metadata.name and spec when they are wrong", () => {
    const issues = validateOntoPlatform({ apiVersion: "v1", kind: "Pod", metadata: { name: "Bad_Name" } });
    expect(issues.map((i) => i.path)).toEqual(["apiVersion", "kind", "metadata.name", "spec"]);
  });

  it("skips CEL rules on a wrongly typed spec, as the API server does", () => {
    const issues = validateSpec({
      version: "1.0.0",
      gateway: { replicas: "three", ingress: { enabled: true } },
    });
    expect(issues).toEqual([
      { path: "spec.gateway.replicas", message: "Expected integer" },
      { path: "", message: RULES_NOT_CHECKED },
    ]);
  });

  it("evaluates transition rules only when given the old object", () => {
    const before = platform({ version: "1.0.0", infrastructure: { kafka: { storage: "100Gi" } } });
    const after = platform({ version: "1.0.0", infrastructure: { kafka: { storage: "99Gi" } } });
    expect(validateOntoPlatform(after)).toEqual([]);
    expect(validateOntoPlatform(after, before).map((i) => i.path)).toEqual([
      "spec.infrastructure.kafka.storage",
    ]);
    expect(validateOntoPlatform(before, after)).toEqual([]);
  });

  it("accepts minReplicas <= maxReplicas and refuses the rest, for any pair", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 1, max: 100 }), (min, max) => {
        const issues = validateSpec({
          version: "1.0.0",
          gateway: { autoscaling: { enabled: true, minReplicas: min, maxReplicas: max } },
        });
        expect(issues.length === 0).toBe(min <= max);
      }),
    );
  });

  it("compares requests and limits as quantities, not strings", () => {
    const spec = (request: string, limit: string) => ({
      version: "1.0.0",
      gateway: { resources: { requests: { memory: request }, limits: { memory: limit } } },
    });
    expect(validateSpec(spec("900Mi", "1Gi"))).toEqual([]);
    expect(validateSpec(spec("1025Mi", "1Gi")).map((i) => i.path)).toEqual([
      "spec.gateway.resources.requests.memory",
    ]);
  });
});
