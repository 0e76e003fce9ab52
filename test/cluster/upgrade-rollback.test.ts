// Issue 6, the paths that fail: a canary that never becomes Ready is rolled back at the health
// timeout, one that crash-loops at once; the component is back on its old image with every replica
// Ready, later components are untouched, and nothing happens again until spec.version changes or
// the retry annotation is set. A StatefulSet canary (partition) is rolled back by reverting the
// template and replacing the stuck pod; rollbackScope Platform undoes the finished components in
// reverse order. The failing versions are test releases, OntoRelease objects applied before the
// operator starts (their images carry the KWOK fault suffixes); the product catalog is unchanged.
import { useOperator } from "../support/operator.js";
import { isPodReady } from "../../src/controllers/shared/kube-views.js";
import { beforeAll, describe, expect, it } from "vitest";
import { PLATFORM_REF, type OntoPlatform } from "../../src/api/index.js";
import { RETRY_ANNOTATION } from "../../src/controllers/upgrade/index.js";
import { eventually } from "../support/cluster.js";
import { readPlatform } from "../support/platform.js";
import {
  applyFaultReleases,
  auditLines,
  setVersion,
  upgradeSample,
  waitForUpgradeEnd,
  type Pod,
  type Workload,
} from "./upgrade-support.js";

const NAME = "onto-minimal";
const fx = useOperator({
  namespaces: ["upg-rollback"],
  before: ({ client }) => applyFaultReleases(client),
  platform: (namespace) => upgradeSample("minimal.yaml", namespace),
});
const { client, ns } = fx;

const upgradeLines = () => auditLines(fx.operator.auditLog).filter((l) => l.actor === "upgrade");

async function workload(kind: "Deployment" | "StatefulSet", name: string): Promise<Workload> {
  return client.get<Workload>({ apiVersion: "apps/v1", kind, namespace: ns, name });
}

/**
 * Every pod of a component runs `image` and is Ready, and there are `replicas` of them. Waits for
 * it (the canary's pod goes through garbage collection after its Deployment is pruned, which can
 * lag the rollback by a moment), then asserts each part so a failure says which.
 */
async function expectBackOn(name: string, image: RegExp): Promise<void> {
  const kind =
    name === "kafka" || name === "postgres" || name === "redis" || name === "minio"
      ? "StatefulSet"
      : "Deployment";
  const read = async () => {
    const pods = (
      await client.list<Pod>("v1", "Pod", { namespace: ns, labelSelector: `app.kubernetes.io/name=${name}` })
    ).items.filter((p) => !p.metadata?.deletionTimestamp);
    return { pods, w: await workload(kind, name) };
  };
  const settled = (s: Awaited<ReturnType<typeof read>>): boolean =>
    s.pods.length === s.w.spec?.replicas &&
    s.pods.every((p) => image.test(p.spec?.containers?.[0]?.image ?? "") && isPodReady(p));
  const { pods, w } = await eventually(
    `${name} back on ${String(image)}`,
    async () => {
      const s = await read();
      return settled(s) ? s : undefined;
    },
    30_000,
  ).catch(read);
  expect(w.spec?.template?.spec?.containers?.[0]?.image).toMatch(image);
  expect(pods.length).toBe(w.spec?.replicas);
  for (const p of pods) {
    expect(p.spec?.containers?.[0]?.image, p.metadata?.name).toMatch(image);
    expect(isPodReady(p), `${p.metadata?.name} Ready`).toBe(true);
  }
}

describe("a canary that never becomes Ready", () => {
  let platform: OntoPlatform;
  let seconds = 0;
  beforeAll(async () => {
    const started = Date.now();
    await setVersion(client, ns, NAME, "1.5.1-never-ready");
    platform = await waitForUpgradeEnd(client, ns, NAME, "1.5.1-never-ready");
    seconds = (Date.now() - started) / 1000;
    console.log(
      `never-ready canary: failed and rolled back in ${seconds.toFixed(1)} s (healthTimeoutSeconds 30)`,
    );
  });

  it("fails at the health timeout, naming ontology-service and why", () => {
    expect(platform.status?.upgrade).toMatchObject({
      phase: "Failed",
      from: "1.5.0",
      to: "1.5.1-never-ready",
      failure: { component: "ontology-service", reason: "CanaryNotReady" },
    });
    expect(platform.status?.upgrade?.failure?.message).toMatch(
      /not healthy after 30 s: pod ontology-service-canary-.*Ready=False/,
    );
    const upgrading = platform.status?.conditions?.find((c) => c.type === "Upgrading");
    expect(upgrading).toMatchObject({ status: "False", reason: "UpgradeFailed" });
    expect(upgrading?.message).toMatch(/failed at ontology-service: CanaryNotReady/);
    expect(platform.status?.version).toBe("1.5.0");
    expect(seconds).toBeGreaterThanOrEqual(30);
  });

  it("puts ontology-service back on its old image with every replica Ready, canary gone", async () => {
    await expectBackOn("ontology-service", /ontology-service:1\.5\.0$/);
    const canary = await client.getIfExists({
      apiVersion: "apps/v1",
      kind: "Deployment",
      namespace: ns,
      name: "ontology-service-canary",
    });
    expect(canary).toBeUndefined();
  });

  it("leaves the later components untouched", async () => {
    for (const name of ["schema-registry", "auth-service", "data-service", "gateway"]) {
      const w = await workload("Deployment", name);
      expect(w.spec?.template?.spec?.containers?.[0]?.image).toMatch(/:1\.5\.0$/);
      expect(w.metadata?.labels?.["app.kubernetes.io/version"]).toBe("1.5.0");
    }
    const touched = upgradeLines().filter((l) => l.object.name.startsWith("schema-registry"));
    expect(touched).toEqual([]);
  });

  it("does not retry by itself", async () => {
    const before = upgradeLines().length;
    await new Promise((r) => setTimeout(r, 5_000));
    expect(upgradeLines().length).toBe(before);
    expect((await readPlatform(client, ns, NAME)).status?.upgrade?.phase).toBe("Failed");
  });
});

describe("a crash-looping canary", () => {
  let platform: OntoPlatform;
  let seconds = 0;
  beforeAll(async () => {
    const started = Date.now();
    await setVersion(client, ns, NAME, "1.5.1-crashloop");
    platform = await waitForUpgradeEnd(client, ns, NAME, "1.5.1-crashloop");
    seconds = (Date.now() - started) / 1000;
    console.log(`crash-looping canary: failed and rolled back in ${seconds.toFixed(1)} s`);
  });

  it("fails fast, well before the timeout, with the container's exit code", async () => {
    expect(seconds).toBeLessThan(20);
    expect(platform.status?.upgrade?.failure).toMatchObject({
      component: "ontology-service",
      reason: "CrashLoopBackOff",
    });
    expect(platform.status?.upgrade?.failure?.message).toMatch(/exited with code 1/);
    await expectBackOn("ontology-service", /ontology-service:1\.5\.0$/);
  });

  it("tries again once when the retry annotation is set", async () => {
    const startedBefore = upgradeLines().filter((l) => l.reason === "UpgradeStarted").length;
    await client.mergePatch(
      { ...PLATFORM_REF, namespace: ns, name: NAME },
      { metadata: { annotations: { [RETRY_ANNOTATION]: "attempt-2" } } },
    );
    await eventually("the retried upgrade to fail again", async () => {
      const p = await readPlatform(client, ns, NAME);
      return p.status?.upgrade?.retryRequest === "attempt-2" && p.status.upgrade.phase === "Failed"
        ? p
        : undefined;
    });
    const started = upgradeLines().filter((l) => l.reason === "UpgradeStarted");
    expect(started.length).toBe(startedBefore + 1);
    expect(started.at(-1)?.message).toMatch(/again/);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(upgradeLines().filter((l) => l.reason === "UpgradeStarted").length).toBe(startedBefore + 1);
  });
});

describe("an OOM-killed canary", () => {
  it("fails fast with reason OOMKilled and exit code 137", async () => {
    const started = Date.now();
    await setVersion(client, ns, NAME, "1.5.1-oom");
    const platform = await waitForUpgradeEnd(client, ns, NAME, "1.5.1-oom");
    const seconds = (Date.now() - started) / 1000;
    console.log(`OOM-killed canary: failed and rolled back in ${seconds.toFixed(1)} s`);
    expect(seconds).toBeLessThan(20);
    expect(platform.status?.upgrade?.failure).toMatchObject({
      component: "ontology-service",
      reason: "OOMKilled",
    });
    expect(platform.status?.upgrade?.failure?.message).toMatch(/exit code 137/);
    // The upgrade judges the canary; the healer does not raise memory for it (which would restart
    // the stable pods while they are being rolled back to).
    expect(platform.status?.healing?.memoryOverrides?.["ontology-service"]).toBeUndefined();
    const raised = auditLines(fx.operator.auditLog).filter(
      (l) => l.actor === "healer" && l.reason === "OOMKilled",
    );
    expect(raised).toEqual([]);
    await expectBackOn("ontology-service", /ontology-service:1\.5\.0$/);
  });
});

describe("a StatefulSet canary that crash-loops", () => {
  let platform: OntoPlatform;
  beforeAll(async () => {
    await setVersion(client, ns, NAME, "1.5.2-kafka-crashloop");
    platform = await waitForUpgradeEnd(client, ns, NAME, "1.5.2-kafka-crashloop");
  });

  it("took only the highest ordinal, then reverted it and the pod came back on the old revision", async () => {
    expect(platform.status?.upgrade?.failure).toMatchObject({
      component: "kafka",
      reason: "CrashLoopBackOff",
    });
    expect(platform.status?.upgrade?.failure?.message).toMatch(/pod kafka-2/);
    // Whether the operator had to delete the stuck pod depends on the StatefulSet controller's
    // version (newer ones replace a pod of another revision even when it is not Ready).
    const deleted = auditLines(fx.operator.auditLog).filter((l) => l.reason === "RollbackStuckPod");
    console.log(
      `stuck StatefulSet pods the operator deleted: ${deleted.map((l) => l.object.name).join(", ") || "none"}`,
    );
    expect(deleted.every((l) => l.object.name === "kafka-2")).toBe(true);
    await expectBackOn("kafka", /apache\/kafka:3\.7\.1$/);
    const sts = await workload("StatefulSet", "kafka");
    expect(sts.spec?.updateStrategy?.rollingUpdate?.partition).toBe(0);
  });
});

describe("rollbackScope Platform", () => {
  let platform: OntoPlatform;
  beforeAll(async () => {
    await client.mergePatch(
      { ...PLATFORM_REF, namespace: ns, name: NAME },
      { spec: { version: "1.6.0-crashloop", upgradeStrategy: { rollbackScope: "Platform" } } },
    );
    platform = await waitForUpgradeEnd(client, ns, NAME, "1.6.0-crashloop", 180_000);
  });

  it("undoes the components already upgraded, in reverse order", async () => {
    expect(platform.status?.upgrade).toMatchObject({
      phase: "Failed",
      completedComponents: [],
      failure: { component: "ontology-service", reason: "CrashLoopBackOff" },
    });
    const lines = upgradeLines();
    const since = lines.findIndex(
      (l) => l.reason === "UpgradeStarted" && l.message.includes("1.6.0-crashloop"),
    );
    const upgraded = lines
      .slice(since)
      .filter((l) => l.reason === "ComponentUpgraded")
      .map((l) => l.object.name);
    expect(upgraded).toEqual(["postgres", "redis", "minio", "kafka"]);
    const rolledBack = lines
      .slice(since)
      .filter((l) => l.reason === "RolledBack")
      .map((l) => l.object.name);
    expect(rolledBack).toEqual(["ontology-service", "kafka", "minio", "redis", "postgres"]);
    await expectBackOn("postgres", /postgres:16\.4$/);
    await expectBackOn("kafka", /apache\/kafka:3\.7\.1$/);
    expect(platform.status?.version).toBe("1.5.0");
  });
});

describe("guard rails", () => {
  it("refuses a downgrade and a skipped minor, naming why (the target's upgrade graph), and changes nothing", async () => {
    const before = await workload("Deployment", "ontology-service");
    for (const [version, why] of [
      ["1.4.2", "upgrade 1.5.0 -> 1.4.2: a downgrade"],
      ["1.7.0", "upgrade 1.5.0 -> 1.7.0: skips the 1.6 line and its migrations: needs force"],
    ] as const) {
      await setVersion(client, ns, NAME, version);
      const p = await eventually(`the refusal of ${version}`, async () => {
        const platform = await readPlatform(client, ns, NAME);
        const c = platform.status?.conditions?.find((x) => x.type === "Upgrading");
        return c?.reason === "UpgradeRefused" && c.message.startsWith(why) ? platform : undefined;
      });
      expect(p.status?.version).toBe("1.5.0");
      expect(p.status?.phase).toBe("Running");
      const after = await workload("Deployment", "ontology-service");
      expect(after.metadata?.generation).toBe(before.metadata?.generation);
      expect(after.metadata?.labels?.["app.kubernetes.io/version"]).toBe("1.5.0");
    }
  });
});
