import { describe, expect, it } from "vitest";
import { COMPONENTS, resolveRelease, validateOntoRelease, type OntoRelease } from "../api/index.js";
import {
  BUILT_IN_RELEASES,
  KNOWN_VERSIONS,
  PLATFORM_SERVICES,
  PRODUCT_RELEASES,
  catalogFrom,
  changedComponents,
  compareVersions,
  imageFor,
  isDowngrade,
  mirroredImage,
  pointsUndoneBy,
  releaseFor,
  releaseObject,
  unknownReleases,
  upgradePath,
  versionsInUse,
} from "./index.js";

const REGISTRY = "registry.example.com/coomia-dip";
const DIGEST = `sha256:${"ab".repeat(32)}`;

/** A user's OntoRelease object: 1.5.0's images under another version, or with changes. */
function object(name: string, spec: Partial<OntoRelease["spec"]> = {}): OntoRelease {
  const base = releaseObject(releaseFor("1.5.0"));
  return { ...base, metadata: { name }, spec: { ...base.spec, ...spec } };
}

describe("the product's releases", () => {
  it("know the seed's versions and a few more, oldest first", () => {
    expect(KNOWN_VERSIONS).toContain("1.5.0");
    expect(KNOWN_VERSIONS).toContain("1.6.0");
    expect([...KNOWN_VERSIONS].sort(compareVersions)).toEqual(KNOWN_VERSIONS);
  });

  it("are valid OntoRelease objects (the schema the API server checks)", () => {
    for (const release of PRODUCT_RELEASES) expect(validateOntoRelease(releaseObject(release))).toEqual([]);
  });

  it("refuse an unknown version naming spec.version and listing the known ones", () => {
    expect(() => releaseFor("9.9.9")).toThrow(/spec\.version.*9\.9\.9.*1\.5\.0/);
  });

  it("tag platform services with the platform version under the registry", () => {
    const r = releaseFor("1.5.0");
    for (const svc of PLATFORM_SERVICES) expect(imageFor(r, svc, REGISTRY)).toBe(`${REGISTRY}/${svc}:1.5.0`);
    expect(imageFor(r, "gateway", `${REGISTRY}/`)).toBe(`${REGISTRY}/gateway:1.5.0`);
  });

  it("pin infrastructure images independently of the registry", () => {
    const r = releaseFor("1.5.0");
    expect(imageFor(r, "postgres", REGISTRY)).toMatch(/^postgres:16\./);
    expect(imageFor(r, "redis", REGISTRY)).toMatch(/^redis:7\./);
    expect(imageFor(r, "kafka", REGISTRY)).toMatch(/^apache\/kafka:3\./);
    expect(imageFor(r, "minio", REGISTRY)).toMatch(/^minio\/minio:RELEASE\./);
    expect(imageFor(r, "minio-client", REGISTRY)).toMatch(/^minio\/mc:RELEASE\./);
    expect(imageFor(r, "nessie", REGISTRY)).toMatch(/^ghcr\.io\/projectnessie\/nessie:/);
    expect(imageFor(r, "temporal", REGISTRY)).toMatch(/^temporalio\//);
  });

  it("stay on one Postgres major line (a major upgrade is not an image swap)", () => {
    const majors = new Set(KNOWN_VERSIONS.map((v) => releaseFor(v).images.postgres.tag.split(".")[0]));
    expect(majors.size).toBe(1);
  });

  it("have an image for every component of the API in every release", () => {
    for (const version of KNOWN_VERSIONS) {
      for (const component of COMPONENTS) {
        expect(imageFor(releaseFor(version), component.name, REGISTRY)).toMatch(
          /^[a-z0-9./-]+:[A-Za-z0-9._-]+$/,
        );
      }
    }
  });

  it("refuse a component they have no image for", () => {
    expect(() => imageFor(releaseFor("1.5.0"), "mystery", REGISTRY)).toThrow(/mystery/);
  });
});

describe("digests and mirrors", () => {
  it("renders repository:tag@digest when a release pins a digest", () => {
    const spec = resolveRelease({
      ...releaseObject(releaseFor("1.5.0")).spec,
      version: "1.5.0-pinned",
    });
    spec.images.redis = { repository: "redis", tag: "7.2.5", digest: DIGEST };
    spec.images.gateway = { tag: "1.5.0", digest: DIGEST };
    const r = { ...spec, source: { kind: "object" as const, name: "pinned" } };
    expect(imageFor(r, "redis", REGISTRY)).toBe(`redis:7.2.5@${DIGEST}`);
    expect(imageFor(r, "gateway", REGISTRY)).toBe(`${REGISTRY}/gateway:1.5.0@${DIGEST}`);
  });

  it("moves every image under the mirror, keeping the repository path and the tag or digest", () => {
    const mirror = "mirror.corp.example:5000/onto";
    expect(mirroredImage("postgres:16.6", mirror)).toBe(`${mirror}/library/postgres:16.6`);
    expect(mirroredImage("minio/minio:RELEASE.2024-11-07T00-52-20Z", mirror)).toBe(
      `${mirror}/minio/minio:RELEASE.2024-11-07T00-52-20Z`,
    );
    expect(mirroredImage("ghcr.io/projectnessie/nessie:0.99.0", mirror)).toBe(
      `${mirror}/projectnessie/nessie:0.99.0`,
    );
    expect(mirroredImage(`redis:7.2.5@${DIGEST}`, `${mirror}/`)).toBe(
      `${mirror}/library/redis:7.2.5@${DIGEST}`,
    );
    const r = releaseFor("1.6.0");
    for (const name of [...COMPONENTS.map((c) => c.name), "minio-client"])
      expect(imageFor(r, name, { registry: REGISTRY, mirror })).toMatch(
        /^mirror\.corp\.example:5000\/onto\//,
      );
    expect(imageFor(r, "gateway", { registry: REGISTRY, mirror })).toBe(`${mirror}/coomia-dip/gateway:1.6.0`);
  });
});

describe("the upgrade graph", () => {
  it("detects downgrades by semver, not string order", () => {
    expect(isDowngrade("1.6.0", "1.5.0")).toBe(true);
    expect(isDowngrade("1.5.0", "1.6.0")).toBe(false);
    expect(isDowngrade("1.10.0", "1.9.0")).toBe(true);
    expect(isDowngrade("1.6.0", "1.6.0")).toBe(false);
    expect(() => isDowngrade("1.5", "1.6.0")).toThrow(/current version.*"1\.5"/);
  });

  it("decides by the first rule of the target that covers the running version", () => {
    expect(upgradePath(releaseFor("1.6.0"), "1.5.0").path).toBe("Allowed");
    expect(upgradePath(releaseFor("1.6.1"), "1.6.0").path).toBe("Allowed");
    expect(upgradePath(releaseFor("1.7.0"), "1.6.1").path).toBe("Allowed");
    expect(upgradePath(releaseFor("1.7.0"), "1.5.0")).toMatchObject({
      path: "ForceRequired",
      message: "1.5.0 -> 1.7.0: skips the 1.6 line and its migrations",
    });
    expect(upgradePath(releaseFor("1.5.0"), "1.6.0")).toMatchObject({ path: "ForceRequired" });
    expect(upgradePath(releaseFor("1.4.2"), "1.3.0").path).toBe("Refused");
  });

  it("lets pre-release versions match ranges (test and candidate releases)", () => {
    expect(upgradePath(releaseFor("1.6.0"), "1.5.1-crashloop").path).toBe("Allowed");
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

describe("points of no return", () => {
  const catalog = catalogFrom(BUILT_IN_RELEASES, []).catalog;
  it("a downgrade across a release that marks an enabled component irreversible undoes its step", () => {
    expect(pointsUndoneBy(catalog, "1.6.1", "1.5.0", ["temporal", "kafka"])).toEqual([
      expect.objectContaining({ version: "1.6.0", component: "temporal", step: "Canary" }),
    ]);
    expect(pointsUndoneBy(catalog, "1.6.1", "1.6.0", ["temporal"])).toEqual([]);
    expect(pointsUndoneBy(catalog, "1.6.1", "1.5.0", ["kafka"])).toEqual([]);
    expect(pointsUndoneBy(catalog, "1.5.0", "1.6.0", ["temporal"])).toEqual([]);
  });
});

describe("catalogFrom: built-in releases and the cluster's objects", () => {
  it("adds a version from an object", () => {
    const { catalog, verdicts } = catalogFrom(BUILT_IN_RELEASES, [object("mine", { version: "1.5.7" })]);
    expect(catalog.versions).toContain("1.5.7");
    expect(catalog.releaseFor("1.5.7").source).toEqual({ kind: "object", name: "mine" });
    expect(verdicts.get("mine")).toMatchObject({ accepted: true, reason: "Added" });
  });

  it("accepts the product's own objects as matching the built-in releases", () => {
    const shipped = PRODUCT_RELEASES.map(releaseObject);
    const { catalog, verdicts } = catalogFrom(BUILT_IN_RELEASES, shipped);
    for (const r of shipped) expect(verdicts.get(r.metadata.name)?.reason).toBe("MatchesBuiltIn");
    expect(catalog.releaseFor("1.6.0").source.kind).toBe("built-in");
  });

  it("overrides a built-in release only when the object says so", () => {
    const patched = releaseObject(releaseFor("1.6.0"));
    patched.spec = {
      ...patched.spec,
      images: { ...patched.spec.images, postgres: { repository: "postgres", tag: "16.7" } },
    };
    const silent = { ...patched, metadata: { name: "quiet" } };
    const said = { ...patched, metadata: { name: "loud" }, spec: { ...patched.spec, overrideBuiltIn: true } };

    const without = catalogFrom(BUILT_IN_RELEASES, [silent]);
    expect(without.catalog.releaseFor("1.6.0").images.postgres.tag).toBe("16.6");
    expect(without.verdicts.get("quiet")).toMatchObject({ accepted: false, reason: "ShadowsBuiltIn" });
    expect(without.verdicts.get("quiet")?.message).toMatch(/overrideBuiltIn: true/);

    const withFlag = catalogFrom(BUILT_IN_RELEASES, [silent, said]);
    expect(withFlag.catalog.releaseFor("1.6.0").images.postgres.tag).toBe("16.7");
    expect(withFlag.verdicts.get("loud")).toMatchObject({ accepted: true, reason: "OverridesBuiltIn" });
  });

  it("uses neither of two objects of one new version, and says so", () => {
    const { catalog, verdicts } = catalogFrom(BUILT_IN_RELEASES, [
      object("a", { version: "1.8.0" }),
      object("b", { version: "1.8.0" }),
    ]);
    expect(catalog.find("1.8.0")).toBeUndefined();
    expect(verdicts.get("a")).toMatchObject({ accepted: false, reason: "Conflict" });
    expect(catalog.whyMissing?.("1.8.0")).toMatch(/a, b all name version 1\.8\.0/);
  });

  it("refuses an object whose upgrade graph does not parse", () => {
    const bad = object("bad", {
      version: "1.8.1",
      upgradeFrom: [{ versions: "not a range!", path: "Allowed" }],
    });
    const { catalog, verdicts } = catalogFrom(BUILT_IN_RELEASES, [bad]);
    expect(catalog.find("1.8.1")).toBeUndefined();
    expect(verdicts.get("bad")).toMatchObject({ accepted: false, reason: "Invalid" });
  });

  it("ignores an object being deleted", () => {
    const going = object("going", { version: "1.8.2" });
    going.metadata.deletionTimestamp = "2025-01-01T00:00:00Z";
    expect(catalogFrom(BUILT_IN_RELEASES, [going]).catalog.find("1.8.2")).toBeUndefined();
  });
});

describe("the releases a platform needs", () => {
  it("are spec.version, the version it runs, and those its last upgrade left components on", () => {
    expect(versionsInUse("1.6.0", { version: "1.5.0" })).toEqual(["1.6.0", "1.5.0"]);
    const failed = {
      version: "1.5.0",
      upgrade: {
        from: "1.5.0",
        to: "1.5.1-x",
        phase: "Failed" as const,
        startedAt: "2025-01-01T00:00:00Z",
        completedComponents: [],
        planned: { "ontology-service": "1.5.0" },
      },
    };
    expect(versionsInUse("1.5.1-x", failed)).toEqual(["1.5.1-x", "1.5.0"]);
    expect(unknownReleases(catalogFrom(BUILT_IN_RELEASES, []).catalog, "1.5.1-x", failed)).toMatch(
      /"1\.5\.1-x" \(spec\.version\) not in the release catalog/,
    );
    expect(unknownReleases(catalogFrom(BUILT_IN_RELEASES, []).catalog, "1.6.0", { version: "1.5.0" })).toBe(
      undefined,
    );
  });
});
