import { describe, expect, it } from "vitest";
import { COMPONENTS } from "../api/index.js";
import {
  KNOWN_VERSIONS,
  PLATFORM_SERVICES,
  changedComponents,
  imageFor,
  isDowngrade,
  releaseFor,
  skippedMinors,
  skipsMinor,
} from "./index.js";

const REGISTRY = "registry.example.com/coomia-dip";

describe("release catalog", () => {
  it("knows the seed's versions and a few more, oldest first", () => {
    expect(KNOWN_VERSIONS).toContain("1.5.0");
    expect(KNOWN_VERSIONS).toContain("1.6.0");
    const sorted = [...KNOWN_VERSIONS].sort((a, b) => (isDowngrade(a, b) ? 1 : isDowngrade(b, a) ? -1 : 0));
    expect(KNOWN_VERSIONS).toEqual(sorted);
  });

  it("refuses an unknown version naming spec.version and listing known ones", () => {
    expect(() => releaseFor("9.9.9")).toThrow(/spec\.version.*9\.9\.9.*1\.5\.0/);
  });

  it("tags platform services with the platform version under the registry", () => {
    const r = releaseFor("1.5.0");
    for (const svc of PLATFORM_SERVICES) {
      expect(imageFor(r, svc, REGISTRY)).toBe(`${REGISTRY}/${svc}:1.5.0`);
    }
    expect(imageFor(r, "gateway", `${REGISTRY}/`)).toBe(`${REGISTRY}/gateway:1.5.0`);
  });

  it("pins infrastructure images independently of the registry", () => {
    const r = releaseFor("1.5.0");
    expect(imageFor(r, "postgres", REGISTRY)).toMatch(/^postgres:16\./);
    expect(imageFor(r, "redis", REGISTRY)).toMatch(/^redis:7\./);
    expect(imageFor(r, "kafka", REGISTRY)).toMatch(/^apache\/kafka:3\./);
    expect(imageFor(r, "minio", REGISTRY)).toMatch(/^minio\/minio:RELEASE\./);
    expect(imageFor(r, "minio-client", REGISTRY)).toMatch(/^minio\/mc:RELEASE\./);
    expect(imageFor(r, "nessie", REGISTRY)).toMatch(/^ghcr\.io\/projectnessie\/nessie:/);
    expect(imageFor(r, "temporal", REGISTRY)).toMatch(/^temporalio\//);
  });

  it("stays on one Postgres major line (a major upgrade is not an image swap)", () => {
    const majors = new Set(
      KNOWN_VERSIONS.map((v) => imageFor(releaseFor(v), "postgres", "r").split(/[:.]/)[1]),
    );
    expect(majors.size).toBe(1);
  });

  it("has an image for every component of the API in every release", () => {
    for (const version of KNOWN_VERSIONS) {
      for (const component of COMPONENTS) {
        expect(imageFor(releaseFor(version), component.name, REGISTRY)).toMatch(
          /^[a-z0-9./-]+:[A-Za-z0-9._-]+$/,
        );
      }
    }
  });

  it("refuses a component it has no image for", () => {
    expect(() => imageFor(releaseFor("1.5.0"), "mystery", REGISTRY)).toThrow(/mystery/);
  });
});

describe("upgrade path facts", () => {
  it("detects downgrades by semver, not string order", () => {
    expect(isDowngrade("1.6.0", "1.5.0")).toBe(true);
    expect(isDowngrade("1.5.0", "1.6.0")).toBe(false);
    expect(isDowngrade("1.10.0", "1.9.0")).toBe(true);
    expect(isDowngrade("1.6.0", "1.6.0")).toBe(false);
  });

  it("reports the minor lines in between that the catalog knows", () => {
    expect(skippedMinors("1.5.0", "1.6.0")).toEqual([]);
    expect(skippedMinors("1.6.0", "1.6.1")).toEqual([]);
    expect(skippedMinors("1.5.0", "1.7.0")).toEqual(["1.6"]);
    expect(skippedMinors("1.4.2", "1.7.0")).toEqual(["1.5", "1.6"]);
    expect(skipsMinor("1.5.0", "1.7.0")).toBe(true);
    expect(skipsMinor("1.6.1", "1.7.0")).toBe(false);
  });

  it("rejects a malformed version naming what it is", () => {
    expect(() => isDowngrade("1.5", "1.6.0")).toThrow(/current version.*"1\.5"/);
  });

  it("lists the components whose image changes", () => {
    const patch = changedComponents("1.6.0", "1.6.1", REGISTRY);
    expect(patch).toContain("redis");
    expect(patch).toContain("ontology-service");
    expect(patch).not.toContain("postgres");
    expect(patch).not.toContain("kafka");
    const minor = changedComponents("1.5.0", "1.6.0", REGISTRY);
    expect(minor).toEqual(expect.arrayContaining(["postgres", "kafka", "nessie", "temporal", "gateway"]));
    expect(changedComponents("1.6.0", "1.6.0", REGISTRY)).toEqual([]);
  });
});
