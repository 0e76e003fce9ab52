// Properties of render over generated valid specs: whatever the spec, objects are unique by
// (kind, name), every name is a valid DNS name for its kind, every label is a valid label,
// every container has requests, and rendering is deterministic.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resolveSpec, type OntoPlatformSpec } from "../api/index.js";
import { validateSpec } from "../api/validate.js";
import { releaseFor } from "../release/index.js";
import { dnsLabel, specArbitrary } from "../../test/support/spec-arbitrary.js";
import { renderPlatform, type RenderedObject } from "./index.js";

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

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
  it("the generator only produces specs the schema accepts", () => {
    fc.assert(
      fc.property(specArbitrary, (spec) => {
        expect(validateSpec(spec)).toEqual([]);
      }),
      { numRuns: 50 },
    );
  });

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
  }, 60_000); // 150 renders: seconds on a loaded 2-core machine, not the 5 s default

  it("is deterministic", () => {
    fc.assert(
      fc.property(specArbitrary, platformArbitrary, (spec, platform) => {
        expect(JSON.stringify(renderAll(spec, platform))).toBe(JSON.stringify(renderAll(spec, platform)));
      }),
      { numRuns: 30 },
    );
  });
});
