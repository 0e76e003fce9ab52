// Properties of render over generated valid specs (generated from the schema), with no cluster:
// whatever the spec, objects are unique by (kind, name), every name is a valid DNS name for its
// kind, every label is a valid label, every container has requests, and rendering is
// deterministic. What the API server says of the same objects: test/cluster/api-properties.test.ts.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { OntoPlatformSpecSchema, resolveSpec, type OntoPlatformSpec } from "../api/index.js";
import { validateSpec } from "../api/validate.js";
import { KNOWN_VERSIONS, releaseFor } from "../release/index.js";
import { renderPlatform, type RenderedObject } from "./index.js";
import { specArbitrary as schemaSpecArbitrary } from "../../test/support/spec-arbitrary.js";

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const dnsLabel = (max: number) =>
  fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$/).filter((s) => s.length <= max);

// Specs generated from the schema itself (test/support/spec-arbitrary.ts), kept when the offline
// validator accepts them: the API server agrees with it (test/cluster/api-properties.test.ts).
const generatedSpecs = fc.oneof(
  { weight: 3, arbitrary: schemaSpecArbitrary(KNOWN_VERSIONS, { absentWeight: 3 }) },
  { weight: 1, arbitrary: schemaSpecArbitrary(KNOWN_VERSIONS, { absentWeight: 1 }) },
);
const specArbitrary: fc.Arbitrary<OntoPlatformSpec> = generatedSpecs
  .filter(
    (spec) => validateSpec(spec).length === 0 && KNOWN_VERSIONS.includes((spec as OntoPlatformSpec).version),
  )
  .map((spec) => spec as OntoPlatformSpec);

const platformArbitrary = fc.record({
  name: fc.oneof(
    dnsLabel(63),
    fc.tuple(dnsLabel(20), dnsLabel(20)).map(([a, b]) => `${a}.${b}`),
  ),
  namespace: dnsLabel(63),
  uid: fc.uuid(),
});

function renderAll(
  raw: OntoPlatformSpec,
  platform: { name: string; namespace: string; uid: string },
): RenderedObject[] {
  const spec = resolveSpec(raw);
  return renderPlatform({
    platform,
    spec,
    release: releaseFor(spec.version),
    capabilities: { serviceMonitor: true, verticalPodAutoscaler: true },
    generateSecret: ({ length }) => "s".repeat(length),
  });
}

describe("render over generated valid specs", () => {
  it("the generator reaches nearly every field of the schema", () => {
    const leaves = (node: Record<string, unknown>, path: string, out: Set<string>): Set<string> => {
      const properties = node.properties as Record<string, Record<string, unknown>> | undefined;
      if (properties) for (const [k, child] of Object.entries(properties)) leaves(child, `${path}.${k}`, out);
      else if (node.type === "array" && (node.items as { properties?: unknown }).properties)
        leaves(node.items as Record<string, unknown>, `${path}[]`, out);
      else out.add(path);
      return out;
    };
    const present = (value: unknown, path: string, out: Set<string>): void => {
      if (Array.isArray(value) && value.some((v) => typeof v === "object" && v !== null && !Array.isArray(v)))
        for (const item of value) present(item, `${path}[]`, out);
      else if (
        typeof value === "object" &&
        value !== null &&
        !Array.isArray(value) &&
        !path.endsWith("nodeSelector") &&
        !path.endsWith("resourceQuota")
      )
        for (const [k, v] of Object.entries(value)) present(v, `${path}.${k}`, out);
      else out.add(path);
    };
    const all = leaves(
      JSON.parse(JSON.stringify(OntoPlatformSpecSchema)) as Record<string, unknown>,
      "spec",
      new Set(),
    );
    const seen = new Set<string>();
    for (const spec of fc.sample(generatedSpecs, { numRuns: 300, seed: 1 })) present(spec, "spec", seen);
    const missed = [...all].filter((p) => !seen.has(p));
    expect(missed.length / all.size, `never generated: ${missed.join(", ")}`).toBeLessThan(0.02);
  }, 120_000); // 300 generated specs on a loaded machine

  it("gives unique (kind, name), valid names and labels, and requests on every container", () => {
    fc.assert(
      fc.property(specArbitrary, platformArbitrary, (spec, platform) => {
        const objects = renderAll(spec, platform);
        const keys = objects.map((o) => `${o.kind}/${o.metadata.name}`);
        expect(new Set(keys).size).toBe(keys.length);
        for (const o of objects) {
          const name = o.metadata.name;
          expect(name.length).toBeLessThanOrEqual(o.kind === "Service" ? 63 : 253);
          expect(name).toMatch(
            o.kind === "Service" ? DNS_1035 : o.kind === "Job" ? DNS_LABEL : DNS_SUBDOMAIN,
          );
          expect(o.metadata.namespace).toBe(platform.namespace);
          for (const value of Object.values(o.metadata.labels)) {
            expect(value.length).toBeLessThanOrEqual(63);
            expect(value).toMatch(LABEL_VALUE);
          }
          const pod = (
            o.spec as { template?: { spec?: { containers: { resources: { requests: object } }[] } } }
          )?.template?.spec;
          for (const c of pod?.containers ?? [])
            expect(Object.keys(c.resources.requests)).toContain("memory");
        }
      }),
      { numRuns: 150 },
    );
  }, 120_000); // 150 renders of filtered specs: tens of seconds on a loaded 2-core machine

  it("is deterministic", () => {
    fc.assert(
      fc.property(specArbitrary, platformArbitrary, (spec, platform) => {
        expect(JSON.stringify(renderAll(spec, platform))).toBe(JSON.stringify(renderAll(spec, platform)));
      }),
      { numRuns: 30 },
    );
  }, 120_000);
});
