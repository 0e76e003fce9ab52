// The demo's background operator (src/localcluster/operator-process.ts): started detached with
// its log and audit files in the cluster's state folder, ready when /readyz passes, reused by a
// second call, and stopped by `clusterDown` like the control-plane processes. It watches only a
// namespace of this file, so it never touches other files' platforms in the shared cluster.
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { clusterDown } from "../../src/localcluster/launcher.js";
import {
  OPERATOR_PROCESS,
  ensureOperatorProcess,
  stopOperatorProcess,
} from "../../src/localcluster/operator-process.js";
import { isAlive, readRecord } from "../../src/localcluster/processes.js";
import { createTestNamespace, kubeconfigPath } from "../support/cluster.js";

// Only a run/ and logs/ folder of its own: clusterDown on it stops the operator and nothing else.
const stateDir = mkdtempSync(join(tmpdir(), "onto-operator-process-"));

afterAll(async () => {
  await stopOperatorProcess(stateDir);
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
});
