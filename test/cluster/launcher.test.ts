// The launcher's promises: `up` twice is safe, `down` leaves no process behind and is safe twice.
// Runs a second, small control plane in a temporary folder beside the shared test cluster.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { clusterDown, clusterStatus, clusterUp } from "../../src/localcluster/launcher.js";
import { MONITORING_PROCESSES } from "../../src/localcluster/monitoring.js";
import { readRecord } from "../../src/localcluster/processes.js";

const stateDir = mkdtempSync(join(tmpdir(), "onto-launcher-"));
afterAll(async () => {
  await clusterDown({ stateDir });
  rmSync(stateDir, { recursive: true, force: true });
});

function running(pid: number): boolean {
  if (!existsSync(`/proc/${pid}/stat`)) return false;
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  return state !== "Z" && state !== "X";
}

describe("local cluster launcher", () => {
  it("starts, reuses a running cluster, and stops without leaving a process", async () => {
    const first = await clusterUp({ stateDir, workers: 3, gpuNodes: 1 });
    expect(first.started).toBe(true);
    expect(first.nodes).toHaveLength(4);

    const second = await clusterUp({ stateDir, workers: 3, gpuNodes: 1 });
    expect(second.started).toBe(false);
    expect(second.server).toBe(first.server);

    const status = await clusterStatus({ stateDir });
    expect(status.ready).toBe(true);
    expect(status.readyNodes).toBe(4);
    const pids = status.components.map((c) => c.pid).filter((p): p is number => p !== undefined);
    expect(pids).toHaveLength(5);
    expect(pids.every(running)).toBe(true);
    // The metrics pipeline and the VPA recommender run beside the control plane, and stop with it.
    const monitoring = MONITORING_PROCESSES.map((name) => readRecord(stateDir, name)?.pid);
    expect(monitoring.every((pid) => pid !== undefined && running(pid))).toBe(true);

    await clusterDown({ stateDir });
    expect(pids.filter(running)).toEqual([]);
    expect(monitoring.filter((pid) => pid !== undefined && running(pid))).toEqual([]);
    expect((await clusterStatus({ stateDir })).exists).toBe(false);
    await clusterDown({ stateDir });
  });
});
