// The operator's own image, built here (src/localcluster/images: Node.js 20 and the compiled
// JavaScript with its production node_modules), installed by the Helm chart onto the real node:
// the pod runs there as the chart's non-root user with a read-only root filesystem, and brings a
// platform to Running from inside the cluster, under the RBAC the chart generates (a Role in the
// watched namespace, no more). The platform (samples/minimal.yaml) runs on the simulated nodes:
// what is tested is the operator running in a pod, not the platform's programs.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFile } from "node:child_process";
import { stringify } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IMAGE_REFS } from "../../src/localcluster/images/index.js";
import { ensureHelm } from "../../src/localcluster/helm.js";
import { REAL_NODE_SELECTOR, REAL_NODE_TOLERATION } from "../../src/localcluster/node-kind.js";
import { createTestNamespace, eventually, kubeconfigPath } from "../support/cluster.js";
import { adminClient, installCrd, loadSample, waitForPhase } from "../support/platform.js";
import { coreApi, kubectl, loadImages, realNodes } from "./support.js";

const RELEASE = "onto-operator";
const chart = join(import.meta.dirname, "../../charts/onto-operator");
const work = mkdtempSync(join(tmpdir(), "onto-operator-image-"));
let helm = "";
let operatorNs = "";
let platformNs = "";
let installed = false;

function run(command: string, args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: 300_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` });
    });
  });
}

beforeAll(async () => {
  realNodes();
  await loadImages(["operator"]);
  helm = await ensureHelm((line) => console.log(`[helm] ${line}`));
  await installCrd(adminClient());
  operatorNs = await createTestNamespace("real-operator");
  platformNs = await createTestNamespace("real-operator-platform");
}, 600_000);

afterAll(async () => {
  if (installed) {
    const logs = await kubectl(["logs", "-n", operatorNs, "deploy/onto-operator", "--tail", "5"]);
    console.log(`[operator-image] last log lines:\n${logs.stdout}`);
    await run(helm, ["uninstall", RELEASE, "-n", operatorNs, "--kubeconfig", kubeconfigPath(), "--wait"]);
  }
  rmSync(work, { recursive: true, force: true });
});

describe("the operator's image installed by the Helm chart on the real node", () => {
  it("runs there and reconciles a platform to Running from inside the cluster", async () => {
    const [repository, tag] = IMAGE_REFS.operator.split(":");
    const values = join(work, "values.yaml");
    writeFileSync(
      values,
      stringify({
        image: { repository, tag, pullPolicy: "Never" },
        replicas: 1,
        watchNamespaces: [platformNs],
        // The cluster has other tests' releases; this install manages none of them.
        releases: { install: false },
        nodeSelector: REAL_NODE_SELECTOR,
        tolerations: [REAL_NODE_TOLERATION],
        logLevel: "debug",
      }),
    );
    const install = await run(helm, [
      "install",
      RELEASE,
      chart,
      "-n",
      operatorNs,
      "--kubeconfig",
      kubeconfigPath(),
      "-f",
      values,
    ]);
    expect(install.code, install.out).toBe(0);
    installed = true;

    const pod = await eventually(
      "the operator pod Ready on the real node",
      async () => {
        const list = await coreApi().listNamespacedPod({
          namespace: operatorNs,
          labelSelector: "app.kubernetes.io/name=onto-operator",
        });
        const ready = list.items.find((p) =>
          p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
        );
        return ready;
      },
      180_000,
      1000,
    );
    expect(pod.spec?.nodeName).toBe(realNodes()[0]);
    expect(pod.status?.containerStatuses?.[0]?.image).toContain("onto.local/onto-operator");
    expect(pod.spec?.securityContext?.runAsUser).toBe(65532);

    const client = adminClient();
    const platform = loadSample("minimal.yaml", platformNs);
    await client.apply(platform);
    const running = await waitForPhase(client, platformNs, platform.metadata.name, "Running", 300_000);
    expect(running.status?.version).toBe(platform.spec.version);

    // It was the pod: its log has the reconcile of this platform.
    const logs = await kubectl(["logs", "-n", operatorNs, pod.metadata?.name ?? "", "--tail", "-1"]);
    expect(logs.stdout).toContain(platformNs);
  });
});
