// The demo's background operator (src/localcluster/operator-process.ts): started detached with
// its log and audit files in the cluster's state folder, ready when /readyz passes, reused by a
// second call, and stopped by `clusterDown` like the control-plane processes. It watches only a
// namespace of this file, so it never touches other files' platforms in the shared cluster.
// The second case has that process reconcile a platform: the operator as `onto operator` runs it
// from the code bin/onto.js picks (the bundle in dist-bundle/ after `npm run build`, else dist/
// or the sources), so with a fresh build this proves the bundled operator works end to end.
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chooseEntry } from "../../bin/entry.js";
import { INSTANCE_LABEL } from "../../src/api/index.js";
import { clusterDown } from "../../src/localcluster/launcher.js";
import {
  OPERATOR_PROCESS,
  ensureOperatorProcess,
  stopOperatorProcess,
} from "../../src/localcluster/operator-process.js";
import { isAlive, readRecord } from "../../src/localcluster/processes.js";
import { createTestNamespace, eventually, kubeconfigPath } from "../support/cluster.js";
import { adminClient, installCrd, loadSample, readPlatform } from "../support/platform.js";

// Only a run/ and logs/ folder of its own: clusterDown on it stops the operator and nothing else.
const stateDir = mkdtempSync(join(tmpdir(), "onto-operator-process-"));
const reconcileStateDir = mkdtempSync(join(tmpdir(), "onto-operator-process-"));

// The operator becomes ready once its caches sync, which needs the CRDs served.
beforeAll(async () => {
  await installCrd(adminClient());
});

afterAll(async () => {
  await stopOperatorProcess(stateDir);
  await stopOperatorProcess(reconcileStateDir);
});

describe("the demo's background operator", () => {
  it("starts detached and ready, is reused, and is stopped by cluster down", async () => {
    const ns = await createTestNamespace("opproc");
    const first = await ensureOperatorProcess({ stateDir, kubeconfig: kubeconfigPath(), namespaces: [ns] });
    expect(first.started).toBe(true);
    expect(isAlive(first.record)).toBe(true);
    expect(first.logFile).toBe(join(stateDir, "logs", `${OPERATOR_PROCESS}.log`));
    expect(first.auditLog).toBe(join(stateDir, "logs", `${OPERATOR_PROCESS}-audit.log`));
    expect(readFileSync(first.logFile, "utf8")).toContain('"msg":"manager started"');
    expect(first.record.args).toEqual(expect.arrayContaining(["operator", "--namespaces", ns]));
    const metrics = await fetch(first.metricsUrl);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain("controller_runtime_reconcile_total");

    const second = await ensureOperatorProcess({ stateDir, kubeconfig: kubeconfigPath(), namespaces: [ns] });
    expect(second.started).toBe(false);
    expect(second.record.pid).toBe(first.record.pid);

    await clusterDown({ stateDir });
    expect(isAlive(first.record)).toBe(false);
    expect(readRecord(stateDir, OPERATOR_PROCESS)).toBeUndefined();
    expect(existsSync(first.logFile)).toBe(true); // logs stay for a post-mortem
  });

  it("reconciles a platform from the code bin/onto.js picks (the bundle when built)", async () => {
    const ns = await createTestNamespace("opproc");
    const expected = chooseEntry(process.cwd());
    // bin/onto.js names the entry point it runs on stderr, which goes to the operator's log.
    process.env.ONTO_DEBUG_ENTRY = "1";
    const operator = await ensureOperatorProcess({
      stateDir: reconcileStateDir,
      kubeconfig: kubeconfigPath(),
      namespaces: [ns],
    }).finally(() => delete process.env.ONTO_DEBUG_ENTRY);
    const firstLine = readFileSync(operator.logFile, "utf8").split("\n")[0] ?? "";
    console.log(`operator process: ${firstLine}`);
    expect(firstLine).toContain(`onto: running ${expected.path}`);

    const client = adminClient();
    const platform = loadSample("minimal.yaml", ns);
    await client.apply(platform);
    const reconciled = await eventually(
      "the platform's status to report its current generation",
      async () => {
        const live = await readPlatform(client, ns, platform.metadata.name);
        return live.status?.phase !== undefined && live.status.observedGeneration === live.metadata.generation
          ? live
          : undefined;
      },
      120_000,
      500,
    );
    expect(reconciled.status?.componentStatuses?.postgres).toBeDefined();
    const { items: deployments } = await client.list("apps/v1", "Deployment", {
      namespace: ns,
      labelSelector: `${INSTANCE_LABEL}=${platform.metadata.name}`,
    });
    expect(deployments.length).toBeGreaterThan(0);
    console.log(
      `phase ${reconciled.status?.phase}, ${deployments.length} Deployments of ${platform.metadata.name}`,
    );
  });
});
