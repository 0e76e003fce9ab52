// samples/real.yaml with the test releases of samples/releases/local.yaml: valid, and rendered so
// that exactly the stateful infrastructure goes to the real node, from images built here, with
// requests the 2-core machine's real node can hold.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Quantity, resolveSpec, type OntoPlatform } from "../api/index.js";
import { validateYamlStream } from "../api/documents.js";
import { renderPlatform, type RenderedObject } from "./index.js";
import { IMAGE_REFS, TEST_RELEASE_IMAGES, UPGRADE_RELEASE_IMAGES } from "../localcluster/images/index.js";
import { TEST_RELEASE_VERSIONS } from "../localcluster/images/versions.js";
import { LOCAL_CATALOG, localReleases } from "../../test/support/local-releases.js";

const text = readFileSync(join(import.meta.dirname, "../../samples/real.yaml"), "utf8");
const REAL = "onto.paas/node-kind";

interface Pod {
  nodeSelector?: Record<string, string>;
  tolerations?: { key?: string }[];
  containers: { image: string; resources: { requests: Record<string, string> } }[];
}
const podOf = (o: RenderedObject): Pod => (o.spec as { template: { spec: Pod } }).template.spec;
const replicasOf = (o: RenderedObject): number => (o.spec as { replicas?: number }).replicas ?? 1;

function render(version?: string): RenderedObject[] {
  const platform = validateYamlStream(text)[0]?.object as OntoPlatform;
  const spec = resolveSpec({ ...platform.spec, ...(version ? { version } : {}) });
  return renderPlatform({
    platform: { name: "onto-real", namespace: "onto-real", uid: "00000000-0000-0000-0000-0000000000aa" },
    spec,
    release: LOCAL_CATALOG.releaseFor(spec.version),
    releaseOf: (v) => LOCAL_CATALOG.releaseFor(v),
    capabilities: { serviceMonitor: false, verticalPodAutoscaler: false },
    generateSecret: ({ length }) => "x".repeat(length),
  });
}

describe("the real-node sample and its test releases", () => {
  it("is valid", () => {
    expect(validateYamlStream(text)[0]?.issues).toEqual([]);
  });

  it("puts Postgres, Redis, MinIO (and the bucket Job) and the two stand-in services on the real node, nothing else", () => {
    const pods = render().filter((o) => ["Deployment", "StatefulSet", "Job"].includes(o.kind));
    const onReal = pods.filter((o) => podOf(o).nodeSelector?.[REAL] === "real").map((o) => o.metadata.name);
    expect(onReal.map((n) => n.replace(/-[0-9a-f]{8}$/, "")).sort()).toEqual([
      "auth-service",
      "data-service",
      "minio",
      "minio-buckets",
      "postgres",
      "redis",
    ]);
    for (const o of pods) {
      const tolerates = podOf(o).tolerations?.some((t) => t.key === REAL) ?? false;
      expect(tolerates).toBe(onReal.includes(o.metadata.name));
    }
  });

  it("runs the real node's pods from images built here, named for what they are", () => {
    const real = render().filter(
      (o) =>
        ["Deployment", "StatefulSet", "Job"].includes(o.kind) && podOf(o).nodeSelector?.[REAL] === "real",
    );
    const images = new Set(real.flatMap((o) => podOf(o).containers.map((c) => c.image)));
    expect([...images].sort()).toEqual([
      "onto.local/coomia-dip/auth-service:1.5.0-local.1",
      "onto.local/coomia-dip/data-service:1.5.0-local.1",
      "onto.local/minio:20260212201848-debian12",
      "onto.local/postgres:15-debian12",
      "onto.local/redis:7.0-debian12",
    ]);
  });

  it("asks of the real node less CPU than its 2 cores, leaving room for an upgrade's extra pod", () => {
    let millicores = 0;
    const workloads = ["Deployment", "StatefulSet"];
    for (const o of render().filter((w) => workloads.includes(w.kind) && podOf(w).nodeSelector?.[REAL])) {
      for (const c of podOf(o).containers)
        millicores += Quantity.parse(c.resources.requests.cpu ?? "0").toNumber() * 1000 * replicasOf(o);
    }
    expect(millicores).toBeLessThanOrEqual(1200);
  });

  it("has a second release that changes every real image, for the upgrade between them", () => {
    const [first, second] = localReleases().map((r) => LOCAL_CATALOG.releaseFor(r.spec.version));
    expect(first?.version).toBe("1.5.0-local.1");
    expect(second?.version).toBe("1.5.0-local.2");
    for (const role of ["postgres", "redis", "minio", "minio-client"] as const)
      expect(second?.images[role]).not.toEqual(first?.images[role]);
    const upgraded = render("1.5.0-local.2").find(
      (o) => o.kind === "StatefulSet" && o.metadata.name === "postgres",
    );
    expect(upgraded && podOf(upgraded).containers[0]?.image).toBe("onto.local/postgres:15-debian12-2");
  });

  it("names on the real node, in both releases, only images the local builder has a recipe for", () => {
    expect(localReleases().map((r) => r.spec.version)).toEqual([...TEST_RELEASE_VERSIONS]);
    for (const [version, names] of [
      ["1.5.0-local.1", TEST_RELEASE_IMAGES],
      ["1.5.0-local.2", UPGRADE_RELEASE_IMAGES],
    ] as const) {
      const real = render(version).filter(
        (o) =>
          ["Deployment", "StatefulSet", "Job"].includes(o.kind) && podOf(o).nodeSelector?.[REAL] === "real",
      );
      const images = new Set(real.flatMap((o) => podOf(o).containers.map((c) => c.image)));
      const built = new Set(names.map((n) => IMAGE_REFS[n]));
      for (const image of images) expect(built, `${version}: ${image}`).toContain(image);
    }
  });
});
