// The operator under its generated role, as installed: a ServiceAccount bound to the
// single-namespace roles (a Role in the watched namespace, the small ClusterRole, the leader
// election Role in its own namespace), a token from TokenRequest, never admin. It must win the
// election, bring the production sample to Running, and be refused nothing along the way; and it
// really is not admin (a read outside its namespace is refused).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningOperator } from "../../src/controllers/operator.js";
import { KubeApiError, type KubeClient, type KubeObject } from "../../src/kube/index.js";
import { grantOperatorAccess, type OperatorAccess } from "../../src/permissions/service-account-access.js";
import { createTestNamespace } from "../support/cluster.js";
import {
  adminClient,
  installCrd,
  loadSample,
  readPlatform,
  startOperator,
  tlsSecret,
  waitForPhase,
} from "../support/platform.js";

const NAME = "onto-production";
const LEASE = "onto-operator";
let admin: KubeClient;
let operatorNs = "";
let ns = "";
let access: OperatorAccess;
let operator: RunningOperator | undefined;
const refusedPaths: string[] = [];
const scratch = mkdtempSync(join(tmpdir(), "onto-sa-"));

beforeAll(async () => {
  admin = adminClient();
  await installCrd(admin);
  operatorNs = await createTestNamespace("op-sa");
  ns = await createTestNamespace("op-sa-watched");
  access = await grantOperatorAccess(admin, {
    namespace: operatorNs,
    serviceAccount: "onto-operator",
    // Cluster-scoped role names are shared by the whole cluster: unique per run.
    name: `onto-operator-${Date.now().toString(36)}`,
    watchNamespaces: [ns],
  });
  const kubeconfig = join(scratch, "kubeconfig");
  writeFileSync(kubeconfig, access.kubeconfig, { mode: 0o600 });
  await admin.apply(await tlsSecret(ns, "onto-tls"));
  operator = await startOperator([ns], {
    kubeconfig,
    leaderElection: { namespace: operatorNs, name: LEASE },
  });
  // Paths of refused requests from here on (the counters below cover the whole run).
  operator.manager.client.onRequest((r) => {
    if (r.code === "401" || r.code === "403") refusedPaths.push(`${r.method} ${r.path} ${r.code}`);
  });
  const started = Date.now();
  await admin.apply(loadSample("production.yaml", ns));
  try {
    await waitForPhase(admin, ns, NAME, "Running");
  } catch (err) {
    // Say why: the platform's status and every refused request, then fail.
    const platform = await readPlatform(admin, ns, NAME).catch(() => undefined);
    console.log(`[sa] status: ${JSON.stringify(platform?.status?.conditions ?? null)}`);
    const values = (await operator.manager.metrics.restClientRequests.get()).values;
    console.log(
      `[sa] requests by code: ${JSON.stringify(values.map((v) => [v.labels.method, v.labels.code, v.value]))}`,
    );
    throw err;
  }
  console.log(
    `[sa] production sample Running under the generated role in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
});

afterAll(async () => {
  await operator?.stop();
  await access?.revoke();
  rmSync(scratch, { recursive: true, force: true });
});

describe("the operator under its generated role (single-namespace install)", () => {
  it("is refused nothing while it brings the production sample to Running", async () => {
    if (!operator) throw new Error("operator not started");
    const requests = (await operator.manager.metrics.restClientRequests.get()).values;
    const total = requests.reduce((sum, v) => sum + v.value, 0);
    const refused = requests.filter((v) => v.labels.code === "403" || v.labels.code === "401");
    console.log(`[sa] ${total} API requests, ${refused.length} refused`);
    expect(total).toBeGreaterThan(20);
    expect(refusedPaths).toEqual([]);
    expect(refused).toEqual([]);
  });

  it("leads through the Lease in its own namespace", async () => {
    if (!operator) throw new Error("operator not started");
    expect(operator.manager.isLeader()).toBe(true);
    const lease = await admin.get<KubeObject & { spec?: { holderIdentity?: string } }>({
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      namespace: operatorNs,
      name: LEASE,
    });
    const ours = operator.manager.elector?.holder();
    expect(ours).toMatch(/./);
    expect(lease.spec?.holderIdentity).toBe(ours);
  });

  it("is not admin: reading Secrets outside its namespace is refused", async () => {
    if (!operator) throw new Error("operator not started");
    const client = operator.manager.client;
    const error = await client.list("v1", "Secret", { namespace: "kube-system" }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(KubeApiError);
    expect((error as KubeApiError).code).toBe(403);
  });
});
