// completeResources: every container ends up with requests and limits, never a default above
// what the user set, with the healer's memory override on top.
import { describe, expect, it } from "vitest";
import { completeResources } from "./resources.js";

const FALLBACK = { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "1", memory: "1Gi" } };
const FIELD = "spec.controlPlane.ontologyService.resources";

describe("completeResources", () => {
  it("keeps what the user wrote", () => {
    const spec = { requests: { cpu: "2", memory: "4Gi" }, limits: { cpu: "4", memory: "8Gi" } };
    expect(completeResources(spec, FALLBACK, FIELD)).toEqual(spec);
  });

  it("fills absent values from the fallback", () => {
    expect(completeResources(undefined, FALLBACK, FIELD)).toEqual(FALLBACK);
  });

  it("raises a default limit to meet a larger request (exact quantity comparison)", () => {
    const out = completeResources({ requests: { cpu: "1500m", memory: "1025Mi" } }, FALLBACK, FIELD);
    expect(out.limits).toEqual({ cpu: "1500m", memory: "1025Mi" });
    const small = completeResources({ requests: { cpu: "500m", memory: "1Gi" } }, FALLBACK, FIELD);
    expect(small.limits).toEqual({ cpu: "1", memory: "1Gi" });
  });

  it("lowers a default request below a smaller user limit", () => {
    const out = completeResources({ limits: { cpu: "50m", memory: "64Mi" } }, FALLBACK, FIELD);
    expect(out.requests).toEqual({ cpu: "50m", memory: "64Mi" });
  });

  it("puts the healer's memory limit (and request) over the spec", () => {
    const spec = { requests: { cpu: "1", memory: "2Gi" }, limits: { cpu: "2", memory: "4Gi" } };
    expect(completeResources(spec, FALLBACK, FIELD, { memoryLimit: "6Gi" })).toEqual({
      requests: { cpu: "1", memory: "2Gi" },
      limits: { cpu: "2", memory: "6Gi" },
    });
    expect(
      completeResources(spec, FALLBACK, FIELD, { memoryLimit: "6Gi", memoryRequest: "3Gi" }).requests.memory,
    ).toBe("3Gi");
  });

  it("names the field when a quantity cannot be read", () => {
    expect(() => completeResources({ requests: { cpu: "lots" } }, FALLBACK, FIELD)).toThrow(
      /spec\.controlPlane\.ontologyService\.resources\.requests\.cpu.*lots/,
    );
  });
});
