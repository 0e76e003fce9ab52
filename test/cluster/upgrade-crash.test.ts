// Issue 6, resumability: the operator runs as a child process and is SIGKILLed at chosen points
// of an upgrade (canary created, canary soaking, StatefulSet canary, right after a promotion,
// during a rollback); a fresh process takes over each time. The end states must be those of an
// uninterrupted run (upgrade-canary / upgrade-rollback): every component on the target (or back
// on the old version), all Ready, no canary left, and every canary created exactly once.
import { isPodReady } from "../../src/controllers/shared/kube-views.js";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  enabledComponents,
  resolveSpec,
  type ComponentInfo,
  type OntoPlatform,
} from "../../src/api/index.js";
import type { KubeClient } from "../../src/kube/index.js";
import { grantOperatorAccess } from "../../src/permissions/service-account-access.js";
import { imageFor } from "../../src/release/index.js";
import { catalogWithFile } from "../support/releases.js";
import { createTestNamespace, eventually } from "../support/cluster.js";
import { adminClient, installCrd, readPlatform } from "../support/platform.js";
import {
  FAULT_RELEASES_FILE,
  applyFaultReleases,
  auditLines,
  setVersion,
  upgradeSample,
  waitForUpgradeEnd,
  type Pod,
  type Workload,
} from "./upgrade-support.js";

const NAME = "onto-minimal";
const childScript = new URL("./upgrade-operator.child.ts", import.meta.url).pathname;
let client: KubeClient;
let ns = "";
let kubeconfig = "";
let auditLog = "";
let child: ChildProcess | undefined;
let revoke: (() => Promise<void>) | undefined;
const crashes: string[] = [];
/** Canaries the test saw in the API just before it killed the operator that made them: when that one had exited. */
const createdBeforeKill = new Map<string, number>();

async function startChild(): Promise<void> {
  const proc = spawn(process.execPath, ["--import", "tsx", childScript], {
    env: { ...process.env, NAMESPACE: ns, KUBECONFIG_PATH: kubeconfig, AUDIT_LOG: auditLog },
    stdio: ["ignore", "pipe", "pipe"],
  });
  proc.stderr.on("data", (d: Buffer) => process.stderr.write(`[operator] ${d.toString()}`));
  await new Promise<void>((resolve, reject) => {
    proc.stdout.on("data", (d: Buffer) => {
      if (d.toString().includes("started")) resolve();
    });
    proc.on("exit", (code) => reject(new Error(`operator child exited with ${code}`)));
  });
  child = proc;
}

async function kill(): Promise<void> {
  const proc = child;
  if (!proc) return;
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  proc.kill("SIGKILL");
  await exited;
  child = undefined;
}

/**
 * Kills the operator once `check` holds and starts a new one; resolves to when the killed one had
 * exited. Every audit line written after that is the new operator's: the killed one may still
 * write lines between the check and the signal.
 */
async function crashWhen(what: string, check: () => Promise<boolean>, timeoutMs = 120_000): Promise<number> {
  await eventually(what, async () => ((await check()) ? true : undefined), timeoutMs, 100);
  const at = Date.now();
  await kill();
  const exitedAt = Date.now();
  crashes.push(what);
  await startChild();
  console.log(`SIGKILL ${what}; new operator up in ${Date.now() - at} ms`);
  return exitedAt;
}

const deployment = (name: string) =>
  client.getIfExists<Workload>({ apiVersion: "apps/v1", kind: "Deployment", namespace: ns, name });
const statefulSet = (name: string) =>
  client.getIfExists<Workload>({ apiVersion: "apps/v1", kind: "StatefulSet", namespace: ns, name });
const pods = async (selector: string) =>
  (await client.list<Pod>("v1", "Pod", { namespace: ns, labelSelector: selector })).items.filter(
    (p) => !p.metadata?.deletionTimestamp,
  );
const image = (w: Workload | undefined) => w?.spec?.template?.spec?.containers?.[0]?.image ?? "";

let components: ComponentInfo[] = [];
const releases = catalogWithFile(FAULT_RELEASES_FILE);
let registry = "";

/** Every workload of the platform on `version`'s images, all replicas Ready, no canary. */
async function expectSettledOn(version: string): Promise<void> {
  const deployments = await client.list<Workload>("apps/v1", "Deployment", { namespace: ns });
  expect(
    deployments.items.filter((d) => d.metadata?.name?.endsWith("-canary")).map((d) => d.metadata?.name),
  ).toEqual([]);
  for (const c of components) {
    const w = c.kind === "Deployment" ? await deployment(c.name) : await statefulSet(c.name);
    expect(image(w), c.name).toBe(imageFor(releases.releaseFor(version), c.name, registry));
    const live = (await pods(`app.kubernetes.io/name=${c.name}`)).filter(
      (p) => !p.metadata?.name?.includes("-canary"),
    );
    expect(live.length, `${c.name} pods`).toBe(w?.spec?.replicas);
    expect(live.every(isPodReady), `${c.name} Ready`).toBe(true);
  }
}

beforeAll(async () => {
  client = adminClient();
  await installCrd(client);
  await applyFaultReleases(client);
  ns = await createTestNamespace("upg-crash");
  const dir = mkdtempSync(join(tmpdir(), "onto-upgrade-crash-"));
  auditLog = join(dir, "audit.log");
  const access = await grantOperatorAccess(client, {
    namespace: ns,
    serviceAccount: "onto-operator",
    name: `onto-operator-${ns}`.slice(0, 63),
    watchNamespaces: [ns],
  });
  revoke = () => access.revoke();
  kubeconfig = join(dir, "kubeconfig");
  writeFileSync(kubeconfig, access.kubeconfig, { mode: 0o600 });
  await startChild();
  // A longer soak than elsewhere, so "while the canary soaks" is a window a test can hit. A longer
  // health timeout too: it counts from the step's start, operator outages included, and each
  // restart here (tsx compiling the operator) took 30-36 s in a loaded CI, where the 30 s of the
  // other upgrade tests failed the upgrade on the outages alone.
  const sample = upgradeSample("minimal.yaml", ns, { soakSeconds: 3, healthTimeoutSeconds: 300 });
  const spec = resolveSpec(sample.spec);
  components = enabledComponents(spec);
  registry = spec.global.imageRegistry;
  await client.apply(sample);
  await eventually(
    "the platform to run 1.5.0",
    async () => ((await readPlatform(client, ns, NAME)).status?.version === "1.5.0" ? true : undefined),
    180_000,
  );
});

afterAll(async () => {
  await kill();
  await revoke?.().catch(() => undefined);
});

describe("an upgrade whose operator is SIGKILLed at every step", () => {
  let platform: OntoPlatform;
  beforeAll(async () => {
    await setVersion(client, ns, NAME, "1.6.0");
    // StatefulSet canary: kafka's highest ordinal on the new image, partition still set.
    await crashWhen("kafka partition canary on 1.6.0", async () => {
      const sts = await statefulSet("kafka");
      return (sts?.spec?.updateStrategy?.rollingUpdate?.partition ?? 0) > 0 && image(sts).endsWith(":3.8.1");
    });
    const killed = await crashWhen("after the ontology-service canary was created", async () =>
      Boolean(await deployment("ontology-service-canary")),
    );
    // Killed within 100 ms of the create showing in the API, the operator may not have reached its
    // audit line for it (written once the API server's answer is read): the canary is known created,
    // and the operator started after the kill must not create it again.
    createdBeforeKill.set("ontology-service-canary", killed);
    await crashWhen("while the schema-registry canary soaks (Ready, soak not over)", async () => {
      const canary = await pods("app.kubernetes.io/name=schema-registry,onto.paas/track=canary");
      return canary.some(isPodReady);
    });
    await crashWhen("right after auth-service was promoted (rollout not finished)", async () => {
      const d = await deployment("auth-service");
      return image(d).endsWith(":1.6.0") && (d?.status?.updatedReplicas ?? 0) < (d?.spec?.replicas ?? 0);
    });
    platform = await waitForUpgradeEnd(client, ns, NAME, "1.6.0", 300_000);
  }, 600_000);

  it("ends as an uninterrupted upgrade does: 1.6.0 everywhere, Running", async () => {
    expect(platform.status?.version).toBe("1.6.0");
    expect(platform.status?.upgrade).toMatchObject({ phase: "Succeeded", from: "1.5.0", to: "1.6.0" });
    await expectSettledOn("1.6.0");
  });

  it("created each canary once and upgraded each component once, in order", () => {
    const lines = auditLines(auditLog);
    const created = lines
      .filter((l) => l.verb === "create" && l.object.name.endsWith("-canary"))
      .map((l) => l.object.name);
    expect(created.length).toBe(new Set(created).size);
    for (const c of components.filter((x) => x.kind === "Deployment")) {
      const canary = `${c.name}-canary`;
      const killedAt = createdBeforeKill.get(canary);
      if (killedAt === undefined) expect(created, c.name).toContain(canary);
      else
        expect(
          lines.filter(
            (l) => l.verb === "create" && l.object.name === canary && Date.parse(l.time) > killedAt,
          ),
          `${canary} created again after the kill`,
        ).toEqual([]);
    }
    const upgraded = lines.filter((l) => l.reason === "ComponentUpgraded").map((l) => l.object.name);
    expect(upgraded).toEqual(components.map((c) => c.name));
    console.log(`crash points tried: ${crashes.join("; ")}`);
  });
});

describe("a rollback whose operator is SIGKILLed", () => {
  let platform: OntoPlatform;
  beforeAll(async () => {
    await setVersion(client, ns, NAME, "1.6.1-kafka-crashloop");
    await crashWhen("during the kafka rollback", async () => {
      const p = await readPlatform(client, ns, NAME);
      return p.status?.upgrade?.to === "1.6.1-kafka-crashloop" && p.status.upgrade.phase === "RollingBack";
    });
    platform = await waitForUpgradeEnd(client, ns, NAME, "1.6.1-kafka-crashloop", 300_000);
  }, 300_000);

  it("ends as an uninterrupted rollback does: kafka back on 1.6.0's image, the rest untouched", async () => {
    expect(platform.status?.upgrade).toMatchObject({
      phase: "Failed",
      failure: { component: "kafka", reason: "CrashLoopBackOff" },
    });
    expect(platform.status?.version).toBe("1.6.0");
    expect(platform.status?.conditions?.find((c) => c.type === "Upgrading")).toMatchObject({
      status: "False",
      reason: "UpgradeFailed",
    });
    await expectSettledOn("1.6.0");
    const sts = await statefulSet("kafka");
    expect(sts?.spec?.updateStrategy?.rollingUpdate?.partition).toBe(0);
    console.log(`crash points tried: ${crashes.join("; ")}`);
  });
});
