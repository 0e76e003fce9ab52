// Issue 18, releases as data, against the real API server: the product's shipped OntoRelease
// objects match the built-in releases; an object that shadows a built-in version without
// overrideBuiltIn is not used and says so; an unknown spec.version gives UnknownRelease and changes
// nothing; a release object added while the operator runs is upgraded to, and its digests are
// rendered; spec.global.imageMirror moves every image of the production sample under the mirror;
// an upgrade whose canary fails after a step marked irreversible is not rolled back (ForwardFix:
// condition, Event, metric, `onto status`, `onto upgrade --watch`), and a rollback by hand past it
// is refused with the reason.
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PLATFORM_REF, validateOntoRelease, type OntoPlatform } from "../../src/api/index.js";
import { runUpgrade } from "../../src/cli/commands/upgrade.js";
import { plain } from "../../src/cli/output.js";
import { formatStatus, type EventView } from "../../src/cli/status-view.js";
import type { RunningOperator } from "../../src/controllers/operator.js";
import { FORCE_ANNOTATION } from "../../src/controllers/upgrade/index.js";
import type { KubeClient, KubeObject } from "../../src/kube/index.js";
import { PRODUCT_RELEASES } from "../../src/release/index.js";
import { createTestNamespace, eventually } from "../support/cluster.js";
import {
  adminClient,
  installCrd,
  loadSample,
  readPlatform,
  startOperator,
  tlsSecret,
  waitForPhase,
} from "../support/platform.js";
import { applyReleases, deleteReleases, readReleases } from "../support/releases.js";
import { setVersion, upgradeSample, type Workload } from "./upgrade-support.js";

const CATALOG_FILE = new URL("../releases/catalog.yaml", import.meta.url).pathname;
const ADDED_FILE = new URL("../releases/added-at-runtime.yaml", import.meta.url).pathname;
const SHIPPED_DIR = new URL("../../deploy/releases/", import.meta.url).pathname;
const MIRROR = "mirror.test.local:5000/onto";
const RELEASE = { apiVersion: "onto.paas/v1alpha1", kind: "OntoRelease" } as const;

let client: KubeClient;
let operator: RunningOperator & { auditLog: string };
let added = "";
let catalogNs = "";
let mirrorNs = "";
let pointNs = "";
const created: string[] = [];

type Release = KubeObject & {
  status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
};

async function accepted(name: string): Promise<{ status: string; reason: string; message: string }> {
  return eventually(`OntoRelease ${name} to have an Accepted condition`, async () => {
    const r = await client.get<Release>({ ...RELEASE, name });
    return r.status?.conditions?.find((c) => c.type === "Accepted");
  });
}

async function workloads(ns: string): Promise<Workload[]> {
  const out: Workload[] = [];
  for (const kind of ["Deployment", "StatefulSet"])
    out.push(...(await client.list<Workload>("apps/v1", kind, { namespace: ns })).items);
  return out;
}

function image(w: Workload | undefined): string {
  return w?.spec?.template?.spec?.containers?.[0]?.image ?? "";
}

async function workload(ns: string, kind: string, name: string): Promise<Workload> {
  return client.get<Workload>({ apiVersion: "apps/v1", kind, namespace: ns, name });
}

beforeAll(async () => {
  client = adminClient();
  await installCrd(client);
  for (const r of PRODUCT_RELEASES) {
    await applyReleases(client, `${SHIPPED_DIR}${r.version}.yaml`);
    created.push(r.version);
  }
  created.push(...(await applyReleases(client, CATALOG_FILE)).map((r) => r.metadata.name));
  await deleteReleases(client, ["1.5.9-added"]); // left by an earlier run on a kept cluster
  catalogNs = await createTestNamespace("rel-catalog");
  mirrorNs = await createTestNamespace("rel-mirror");
  pointNs = await createTestNamespace("rel-pnr");
  await client.apply(await tlsSecret(mirrorNs, "onto-tls"));
  operator = await startOperator([catalogNs, mirrorNs, pointNs]);
  await client.apply(upgradeSample("minimal.yaml", catalogNs));
  await client.apply(upgradeSample("minimal.yaml", pointNs));
  const production = loadSample("production.yaml", mirrorNs);
  (production.spec.global as Record<string, unknown>).imageMirror = MIRROR;
  await client.apply(production);
  await Promise.all([
    waitForPhase(client, catalogNs, "onto-minimal", "Running"),
    waitForPhase(client, pointNs, "onto-minimal", "Running"),
    waitForPhase(client, mirrorNs, "onto-production", "Running"),
  ]);
});

afterAll(async () => {
  await operator?.stop();
  await deleteReleases(client, [...created, ...(added ? [added] : [])]);
});

describe("release objects", () => {
  it("the product's shipped objects match the built-in releases", async () => {
    for (const r of PRODUCT_RELEASES)
      expect(await accepted(r.version)).toMatchObject({ status: "True", reason: "MatchesBuiltIn" });
  });

  it("an object shadowing a built-in version without overrideBuiltIn is not used, and says why", async () => {
    const verdict = await accepted("shadows-1.6.1");
    expect(verdict).toMatchObject({ status: "False", reason: "ShadowsBuiltIn" });
    expect(verdict.message).toMatch(/set spec\.overrideBuiltIn: true/);
    expect(await accepted("1.6.0-point-of-no-return")).toMatchObject({ status: "True", reason: "Added" });
  });
});

describe("the OntoRelease schema", () => {
  it("is enforced by the API server, naming the field, the same as offline validation", async () => {
    const [base] = readReleases(ADDED_FILE);
    if (!base) throw new Error("no release in the file");
    const bad = {
      ...base,
      metadata: { name: "invalid-release" },
      spec: {
        ...base.spec,
        version: "1.5.9-invalid",
        upgradeFrom: [{ versions: "*", path: "Refused" }],
        images: { ...base.spec.images, redis: { repository: "redis", tag: "7.2.5", digest: "md5:abc" } },
      },
    };
    const offline = validateOntoRelease(bad).map((i) => i.path);
    expect(offline).toEqual(expect.arrayContaining(["spec.images.redis.digest"]));
    await expect(client.apply(bad as unknown as KubeObject)).rejects.toThrow(/spec\.images\.redis\.digest/);
    const noReason = { ...bad, spec: { ...bad.spec, images: base.spec.images } };
    expect(validateOntoRelease(noReason).map((i) => `${i.path}: ${i.message}`)).toEqual([
      "spec.upgradeFrom[0].reason: a path that is ForceRequired or Refused needs a reason",
    ]);
    await expect(client.apply(noReason as unknown as KubeObject)).rejects.toThrow(
      /spec\.upgradeFrom\[0\]\.reason: Required value: a path that is ForceRequired or Refused needs a reason/,
    );
  });
});

describe("an unknown spec.version, then its release added at runtime", () => {
  let before: Map<string, string>;
  let unknown: OntoPlatform;

  beforeAll(async () => {
    before = new Map(
      (await workloads(catalogNs)).map((w) => [w.metadata?.name ?? "", w.metadata?.resourceVersion ?? ""]),
    );
    await setVersion(client, catalogNs, "onto-minimal", "1.5.9-added");
    unknown = await eventually("the UnknownRelease condition", async () => {
      const p = await readPlatform(client, catalogNs, "onto-minimal");
      const degraded = p.status?.conditions?.find((c) => c.type === "Degraded");
      return degraded?.reason === "UnknownRelease" && p.status?.observedGeneration === p.metadata.generation
        ? p
        : undefined;
    });
  });

  it("gives a condition naming the version, and changes nothing", async () => {
    const degraded = unknown.status?.conditions?.find((c) => c.type === "Degraded");
    expect(degraded).toMatchObject({ status: "True", reason: "UnknownRelease" });
    expect(degraded?.message).toMatch(/"1\.5\.9-added" \(spec\.version\) not in the release catalog/);
    expect(degraded?.message).toMatch(/nothing is changed until it is/);
    expect(unknown.status?.version).toBe("1.5.0");
    await new Promise((r) => setTimeout(r, 3_000));
    const after = new Map(
      (await workloads(catalogNs)).map((w) => [w.metadata?.name ?? "", w.metadata?.resourceVersion ?? ""]),
    );
    expect(after).toEqual(before);
  });

  it("is upgraded to once the release object is created, and renders its digests", async () => {
    const started = Date.now();
    added = (await applyReleases(client, ADDED_FILE))[0]?.metadata.name ?? "";
    const done = await eventually(
      "the upgrade to the added release",
      async () => {
        const p = await readPlatform(client, catalogNs, "onto-minimal");
        return p.status?.version === "1.5.9-added" && p.status.upgrade?.phase === "Succeeded" ? p : undefined;
      },
      240_000,
      500,
    );
    console.log(
      `release added at runtime: upgraded to it in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    expect(done.status?.upgrade).toMatchObject({ from: "1.5.0", to: "1.5.9-added" });
    expect(done.status?.conditions?.find((c) => c.type === "Degraded")?.reason).not.toBe("UnknownRelease");
    expect(await accepted("1.5.9-added")).toMatchObject({ status: "True", reason: "Added" });
    expect(image(await workload(catalogNs, "StatefulSet", "redis"))).toBe(
      `redis:7.2.5@sha256:${"1f".repeat(32)}`,
    );
    expect(image(await workload(catalogNs, "Deployment", "ontology-service"))).toBe(
      `registry.example.com/coomia-dip/ontology-service:1.5.9-added@sha256:${"2e".repeat(32)}`,
    );
    expect(image(await workload(catalogNs, "Deployment", "gateway"))).toBe(
      "registry.example.com/coomia-dip/gateway:1.5.9-added",
    );
    // Postgres's image is the same as 1.5.0's: not touched.
    expect(image(await workload(catalogNs, "StatefulSet", "postgres"))).toBe("postgres:16.4");
  });
});

describe("spec.global.imageMirror", () => {
  it("moves every image of the production sample under the mirror (workloads, Jobs and pods)", async () => {
    const images: { where: string; image: string }[] = [];
    type PodSpec = { containers?: { image?: string }[]; initContainers?: { image?: string }[] };
    const collect = (where: string, spec: PodSpec | undefined): void => {
      for (const c of [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])])
        images.push({ where, image: c.image ?? "" });
    };
    for (const [apiVersion, kind] of [
      ["apps/v1", "Deployment"],
      ["apps/v1", "StatefulSet"],
      ["batch/v1", "Job"],
    ] as const) {
      for (const o of (
        await client.list<KubeObject & { spec?: { template?: { spec?: PodSpec } } }>(apiVersion, kind, {
          namespace: mirrorNs,
        })
      ).items)
        collect(`${kind}/${o.metadata?.name ?? ""}`, o.spec?.template?.spec);
    }
    for (const p of (await client.list<KubeObject & { spec?: PodSpec }>("v1", "Pod", { namespace: mirrorNs }))
      .items)
      collect(`Pod/${p.metadata?.name ?? ""}`, p.spec);
    console.log(
      `imageMirror: ${images.length} container images in ${new Set(images.map((i) => i.where)).size} objects`,
    );
    expect(images.length).toBeGreaterThan(20);
    expect(images.filter((i) => !i.image.startsWith(`${MIRROR}/`))).toEqual([]);
    const distinct = new Set(images.map((i) => i.image));
    expect(distinct).toContain(`${MIRROR}/library/postgres:16.4`);
    expect(distinct).toContain(`${MIRROR}/projectnessie/nessie:0.95.0`);
    expect(distinct).toContain(`${MIRROR}/coomia-dip/gateway:1.5.0`);
  });
});

describe("an upgrade that fails after a point of no return", () => {
  const TARGET = "1.6.0-point-of-no-return";
  let stopped: OntoPlatform;

  beforeAll(async () => {
    const started = Date.now();
    await setVersion(client, pointNs, "onto-minimal", TARGET);
    stopped = await eventually(
      "the upgrade to stop in ForwardFix",
      async () => {
        const p = await readPlatform(client, pointNs, "onto-minimal");
        return p.status?.upgrade?.phase === "ForwardFix" ? p : undefined;
      },
      300_000,
      500,
    );
    console.log(`point of no return: ForwardFix after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });

  it("is not rolled back and says why (status, condition, phase)", () => {
    expect(stopped.status?.upgrade).toMatchObject({
      phase: "ForwardFix",
      from: "1.5.0",
      to: TARGET,
      failure: { component: "ontology-service", reason: "CrashLoopBackOff" },
      pointOfNoReturn: { component: "kafka", step: "Rollout", version: TARGET },
    });
    const upgrading = stopped.status?.conditions?.find((c) => c.type === "Upgrading");
    expect(upgrading).toMatchObject({ status: "False", reason: "ForwardFixRequired" });
    expect(upgrading?.message).toMatch(
      /failed at ontology-service: CrashLoopBackOff.*not rolled back: kafka Rollout of 1\.6\.0-point-of-no-return cannot be undone \(the rollout raises Kafka's metadata\.version/,
    );
  });

  it("leaves everything where the failure left it: Kafka on the new image, the canary in place", async () => {
    await eventually("the platform phase Degraded", async () =>
      (await readPlatform(client, pointNs, "onto-minimal")).status?.phase === "Degraded" ? true : undefined,
    );
    await new Promise((r) => setTimeout(r, 3_000));
    expect(image(await workload(pointNs, "StatefulSet", "kafka"))).toBe("apache/kafka:3.8.1");
    expect(image(await workload(pointNs, "Deployment", "ontology-service"))).toBe(
      "registry.example.com/coomia-dip/ontology-service:1.5.0",
    );
    expect(image(await workload(pointNs, "Deployment", "ontology-service-canary"))).toBe(
      "registry.example.com/coomia-dip/ontology-service:1.6.0-pnr-crashloop",
    );
    expect((await readPlatform(client, pointNs, "onto-minimal")).status?.upgrade?.phase).toBe("ForwardFix");
  });

  it("emits a Warning Event and sets the forward-fix metric", async () => {
    const events = await eventually("a ForwardFixRequired Event", async () => {
      const list = await client.list<KubeObject & EventView>("events.k8s.io/v1", "Event", {
        namespace: pointNs,
      });
      const found = list.items.filter((e) => e.reason === "ForwardFixRequired");
      return found.length > 0 ? found : undefined;
    });
    expect(events[0]?.type).toBe("Warning");
    expect(events[0]?.note).toMatch(/not rolled back/);
    const metrics =
      await operator.manager.metrics.registry.getSingleMetricAsString("onto_upgrade_forward_fix");
    expect(metrics).toContain(
      `onto_upgrade_forward_fix{platform_namespace="${pointNs}",platform="onto-minimal"} 1`,
    );
  });

  it("`onto status` and `onto upgrade --watch` say it", async () => {
    const platform = await readPlatform(client, pointNs, "onto-minimal");
    const text = formatStatus({ platform, events: [] }, { now: new Date(), colors: plain });
    expect(text).toMatch(/ForwardFix/);
    expect(text).toMatch(
      /not rolled back, waiting for a forward fix: kafka Rollout of 1\.6\.0-point-of-no-return/,
    );
    const out = new PassThrough();
    let written = "";
    out.on("data", (chunk: Buffer) => (written += chunk.toString()));
    const code = await runUpgrade({
      client,
      namespace: pointNs,
      name: "onto-minimal",
      to: TARGET,
      force: false,
      watch: true,
      timeoutMs: 30_000,
      intervalMs: 200,
      out: out as unknown as NodeJS.WriteStream,
    });
    expect(code).toBe(1);
    expect(written).toMatch(/forward fix needed to 1\.6\.0-point-of-no-return/);
    expect(written).toMatch(
      /upgrade stopped, not rolled back: .*kafka Rollout of 1\.6\.0-point-of-no-return cannot be undone/,
    );
  });

  it("refuses a rollback by hand, even forced, with the reason, and changes nothing", async () => {
    await expect(
      runUpgrade({
        client,
        namespace: pointNs,
        name: "onto-minimal",
        to: "1.5.0",
        force: true,
        watch: false,
      }),
    ).rejects.toThrow(/refusing 1\.6\.0-point-of-no-return -> 1\.5\.0: it would undo .*kafka Rollout/);
    // The same request past the CLI: the operator refuses it too.
    await client.mergePatch(
      { ...PLATFORM_REF, namespace: pointNs, name: "onto-minimal" },
      { metadata: { annotations: { [FORCE_ANNOTATION]: "true" } }, spec: { version: "1.5.0" } },
    );
    const refused = await eventually("the RollbackRefused condition", async () => {
      const p = await readPlatform(client, pointNs, "onto-minimal");
      const c = p.status?.conditions?.find((x) => x.type === "Upgrading");
      return c?.reason === "RollbackRefused" ? c : undefined;
    });
    expect(refused.message).toMatch(/Not even force allows it/);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(image(await workload(pointNs, "StatefulSet", "kafka"))).toBe("apache/kafka:3.8.1");
    expect((await readPlatform(client, pointNs, "onto-minimal")).status?.upgrade?.phase).toBe("ForwardFix");
  });
});
