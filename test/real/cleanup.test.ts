// `cluster down` after a crash: a second cluster with a real node (beside the shared one, on a
// network of its own) runs a pod with a memory volume, then every process the launcher started is
// SIGKILLed, leaving containerd's shims and the containers orphaned. `down` must still remove
// every process, mount, namespace, bridge, route, cgroup and claim it made, and leave the shared
// cluster's real node alone.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { nodeCgroupPids } from "../../src/localcluster/cgroups.js";
import { ensureImages, IMAGE_REFS } from "../../src/localcluster/images/index.js";
import { clusterDown, clusterStatus, clusterUp } from "../../src/localcluster/launcher.js";
import { mountsUnder } from "../../src/localcluster/mounts.js";
import { claimedNetworkIndex } from "../../src/localcluster/network.js";
import { REAL_NODE_SELECTOR, REAL_NODE_TOLERATION } from "../../src/localcluster/node-kind.js";
import { listRecords } from "../../src/localcluster/processes.js";
import { clusterStateDir, eventually } from "../support/cluster.js";

const stateDir = mkdtempSync(join(tmpdir(), "onto-real-down-"));
afterAll(async () => {
  await clusterDown({ stateDir });
  rmSync(stateDir, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

function succeeds(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

function cgroupDirs(root: string): string[] {
  return readdirSync("/sys/fs/cgroup")
    .map((h) => join("/sys/fs/cgroup", h, root))
    .filter((path) => existsSync(path));
}

describe("cluster down after a crashed run with a real node", () => {
  it("removes every process, mount, namespace, bridge, route, cgroup and claim", async () => {
    const info = await clusterUp({ stateDir, workers: 1, gpuNodes: 0, realNodes: 1 });
    const status = await clusterStatus({ stateDir });
    const shared = await clusterStatus({ stateDir: clusterStateDir() });
    const [node] = status.realNodes;
    const net = status.network;
    if (!node || !net) throw new Error("the second cluster has no real node");
    // Two clusters with real nodes side by side: their own index, bridge and ranges.
    expect(net.index).not.toBe(shared.network?.index);
    expect(net.clusterCidr).not.toBe(shared.network?.clusterCidr);

    await ensureImages(["busybox"], { stateDir });
    const kubectl = (args: string[], input?: string): string =>
      execFileSync(info.k8sBinary, ["kubectl", `--kubeconfig=${info.kubeconfigPath}`, ...args], {
        input,
        stdio: ["pipe", "pipe", "pipe"],
      }).toString();
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "orphan", namespace: "default" },
      spec: {
        nodeSelector: REAL_NODE_SELECTOR,
        tolerations: [REAL_NODE_TOLERATION],
        containers: [
          {
            name: "c",
            image: IMAGE_REFS.busybox,
            imagePullPolicy: "Never",
            command: ["sleep", "3600"],
            volumeMounts: [{ name: "mem", mountPath: "/mem" }],
          },
        ],
        volumes: [{ name: "mem", emptyDir: { medium: "Memory" } }],
      },
    };
    kubectl(["apply", "-f", "-"], JSON.stringify(pod));
    kubectl(["wait", "--for=condition=Ready", "pod/orphan", "--timeout=120s"]);

    const cgroupRoot = `/${node.netns}`;
    const pids = [...listRecords(stateDir).map((r) => r.pid), ...nodeCgroupPids(cgroupRoot)];
    const mounts = mountsUnder(stateDir);
    expect(mounts.length).toBeGreaterThan(0);
    expect(existsSync(`/run/netns/${node.netns}`)).toBe(true);
    expect(succeeds("ip", ["link", "show", "dev", net.bridge])).toBe(true);

    // The crash: SIGKILL to every process the launcher started (not to shims and containers).
    for (const record of listRecords(stateDir)) process.kill(record.pid, "SIGKILL");
    await eventually("the launcher's processes dead", async () =>
      listRecords(stateDir).every((r) => !alive(r.pid)) ? true : undefined,
    );
    expect(nodeCgroupPids(cgroupRoot).length).toBeGreaterThan(0); // orphaned shims and containers

    await clusterDown({ stateDir });

    expect(pids.filter(alive)).toEqual([]);
    expect(mountsUnder(stateDir)).toEqual([]);
    expect(readdirSync("/run/netns").filter((n) => n.startsWith(`onto${net.index}-`))).toEqual([]);
    expect(succeeds("ip", ["link", "show", "dev", net.bridge])).toBe(false);
    expect(execFileSync("ip", ["-4", "route"]).toString()).not.toContain(node.podCidr);
    expect(cgroupDirs(cgroupRoot)).toEqual([]);
    expect(claimedNetworkIndex(stateDir)).toBeUndefined();
    expect(existsSync(join(stateDir, "nodes"))).toBe(false);
    const links = existsSync("/var/log/containers") ? readdirSync("/var/log/containers") : [];
    expect(links.filter((l) => readlinkSync(join("/var/log/containers", l)).startsWith(stateDir))).toEqual(
      [],
    );

    // The shared cluster's real node is untouched.
    const after = await clusterStatus({ stateDir: clusterStateDir() });
    expect(after.realNodes.every((n) => n.ready)).toBe(true);
  });
});
