// Every sample against the offline validator: the valid ones pass, each invalid one is refused
// with an issue on the field its `# field:` header names.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { validateYamlStream } from "./documents.js";
import { resolveSpec } from "./defaults.js";
import type { OntoPlatform } from "./schema.js";

const samples = join(import.meta.dirname, "../../samples");
const read = (path: string) => readFileSync(join(samples, path), "utf8");
const invalid = readdirSync(join(samples, "invalid")).filter((f) => f.endsWith(".yaml"));

describe("valid samples", () => {
  for (const file of ["production.yaml", "minimal.yaml", "tenant.yaml"]) {
    it(`${file} passes offline validation`, () => {
      const reports = validateYamlStream(read(file));
      expect(reports).toHaveLength(1);
      expect(reports[0]?.issues).toEqual([]);
    });
  }

  it("production.yaml keeps the seed's values through defaulting", () => {
    const platform = validateYamlStream(read("production.yaml"))[0]?.object as OntoPlatform;
    const spec = resolveSpec(platform.spec);
    expect(spec.infrastructure.kafka.topics).toEqual([
      { name: "ontology-events", partitions: 12, replicationFactor: 3 },
    ]);
    expect(spec.intelligencePlane.reasoningService.gpu).toEqual({
      enabled: true,
      count: 1,
      type: "nvidia.com/gpu",
    });
    expect(spec.gateway.ingress).toEqual({ enabled: true, host: "platform.example.com", tls: true });
    expect(spec.infrastructure.redis.mode).toBe("sentinel");
  });
});

describe("invalid samples", () => {
  it("has one file per rule (at least 30)", () => {
    expect(invalid.length).toBeGreaterThanOrEqual(30);
  });

  for (const file of invalid) {
    it(`${file} is refused on the field it names`, () => {
      const text = read(join("invalid", file));
      const field = /^# field: (\S+)$/m.exec(text)?.[1];
      expect(field, "the file names its field in a '# field:' header").toBeDefined();
      const issues = validateYamlStream(text).flatMap((r) => r.issues);
      expect(issues.map((i) => i.path)).toContain(field);
    });
  }
});
