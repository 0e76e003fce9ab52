// The real nodes of the local cluster: on each, containerd (runc from Debian, CNI bridge
// networking), the kubelet and kube-proxy (iptables), all three in the node's network namespace
// (see ./network.ts) and the host's mount namespace, in the node's cgroup subtree (./cgroups.ts),
// with every file under <state>/nodes/<name>/. The kubelet registers the node labelled and
// tainted as ./node-kind.ts declares. Stopping removes every process, mount, namespace, route,
// cgroup and file they made, also after a crashed run.
import { existsSync, mkdirSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join, resolve } from "node:path";
import { stringify } from "yaml";
import type { Binaries, NodeBinaries } from "./build.js";
import { createNodeCgroup, leftoverNodeCgroups, placeInNodeCgroup, removeNodeCgroup } from "./cgroups.js";
import { IMAGE_REFS } from "./images/recipes.js";
import { unmountAllUnder } from "./mounts.js";
import {
  DNS_SERVICE_IP,
  SERVICE_CIDR,
  tearDownNetwork,
  type ClusterNetwork,
  type RealNodeNetwork,
} from "./network.js";
import { NODE_KIND_LABEL, REAL_NODE_KIND, REAL_NODE_TAINT } from "./node-kind.js";
import type { ExtraIdentity, Pki } from "./pki.js";
import { isAlive, listRecords, logTail, startProcess, stopProcess, type ProcessRecord } from "./processes.js";

/** What runs on each real node, in start order (stop order is the reverse). */
export const NODE_COMPONENTS = ["containerd", "kubelet", "kube-proxy"] as const;
export type NodeComponent = (typeof NODE_COMPONENTS)[number];

const RUNC = "/usr/sbin/runc";
/** Where the kubelet links every container's log (a fixed path in the kubelet). */
const CONTAINER_LOG_LINKS = "/var/log/containers";
/** Where containerd shims put their sockets (a fixed path in containerd). */
const SHIM_SOCKETS = "/run/containerd/s";

export function nodeDir(stateDir: string, node: string): string {
  return join(stateDir, "nodes", node);
}

export function containerdSocket(stateDir: string, node: string): string {
  return join(nodeDir(stateDir, node), "containerd.sock");
}

/** The node's cgroup root in every hierarchy, e.g. `/onto7-real-1`. */
export function nodeCgroupRoot(node: RealNodeNetwork): string {
  return `/${node.netns}`;
}

export function recordName(node: string, component: NodeComponent): string {
  return `${node}-${component}`;
}

/** Token identities of the nodes' kubelets (Node authorizer names) and of kube-proxy. */
export function realNodeIdentities(net: ClusterNetwork): Record<string, ExtraIdentity> {
  const identities: Record<string, ExtraIdentity> = {
    "kube-proxy": { user: "system:kube-proxy", groups: [] },
  };
  for (const node of net.nodes) {
    identities[`node-${node.name}`] = { user: `system:node:${node.name}`, groups: ["system:nodes"] };
  }
  return identities;
}

function kubeconfig(server: string, pki: Pki, token: string): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "onto-local", cluster: { server, "certificate-authority": pki.caCert } }],
    users: [{ name: "node", user: { token } }],
    contexts: [{ name: "onto-local", context: { cluster: "onto-local", user: "node" } }],
    "current-context": "onto-local",
  });
}

function containerdConfig(dir: string, cniDir: string): string {
  // containerd's configuration format v3 (containerd 2.x).
  return `version = 3
root = "${dir}/containerd/root"
state = "${dir}/containerd/state"

[grpc]
  address = "${dir}/containerd.sock"

[ttrpc]
  address = "${dir}/containerd.sock.ttrpc"

[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "${IMAGE_REFS.pause}"

[plugins.'io.containerd.cri.v1.runtime']
  # No CAP_SYS_RESOURCE here: pod oom_score_adj values below containerd's own are raised to it.
  restrict_oom_score_adj = true
  # Pod network namespaces under this node's folder, not the host's /run/netns.
  netns_mounts_under_state_dir = true
  enable_unprivileged_ports = true
  enable_unprivileged_icmp = true
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["${cniDir}"]
    conf_dir = "${dir}/cni/net.d"
  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
    BinaryName = "${RUNC}"
    Root = "${dir}/runc"
    SystemdCgroup = false
`;
}

function cniConfig(dir: string, node: RealNodeNetwork, net: ClusterNetwork): string {
  return JSON.stringify(
    {
      cniVersion: "1.0.0",
      name: "onto",
      plugins: [
        {
          type: "bridge",
          bridge: "cni0",
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: "host-local",
            dataDir: join(dir, "cni", "ipam"),
            ranges: [[{ subnet: node.podCidr, gateway: node.podGateway }]],
            // Routes to the cluster only: no default route, so nothing leaves the machine.
            routes: [{ dst: net.clusterCidr }, { dst: SERVICE_CIDR }],
          },
        },
        { type: "portmap", capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  );
}

function kubeletConfig(stateDir: string, node: RealNodeNetwork, pki: Pki): Record<string, unknown> {
  const dir = nodeDir(stateDir, node.name);
  return {
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    kind: "KubeletConfiguration",
    // This host runs cgroup v1 without systemd; since Kubernetes 1.35 the kubelet refuses cgroup
    // v1 unless told otherwise (it then warns that v1 is deprecated).
    failCgroupV1: false,
    cgroupDriver: "cgroupfs",
    cgroupRoot: nodeCgroupRoot(node),
    containerRuntimeEndpoint: `unix://${containerdSocket(stateDir, node.name)}`,
    address: node.address,
    readOnlyPort: 0,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: pki.caCert },
    },
    authorization: { mode: "Webhook" },
    clusterDomain: "cluster.local",
    clusterDNS: [DNS_SERVICE_IP],
    // No upstream resolvers: names outside the cluster do not resolve (nothing leaves the machine).
    resolvConf: "",
    podLogsDir: join(dir, "pod-logs"),
    registerWithTaints: [REAL_NODE_TAINT],
    failSwapOn: false,
    // Without CAP_SYS_RESOURCE the kubelet cannot lower its own oom_score_adj.
    oomScoreAdj: 0,
    serializeImagePulls: false,
    // Images are imported, never pulled: keep them, and evict only when the disk is really full.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: {
      "memory.available": "100Mi",
      "nodefs.available": "2%",
      "imagefs.available": "2%",
      "nodefs.inodesFree": "2%",
    },
    nodeStatusReportFrequency: "10s",
    syncFrequency: "10s",
  };
}

function kubeProxyConfig(
  stateDir: string,
  node: RealNodeNetwork,
  net: ClusterNetwork,
): Record<string, unknown> {
  return {
    apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
    kind: "KubeProxyConfiguration",
    mode: "iptables",
    clientConnection: { kubeconfig: join(nodeDir(stateDir, node.name), "kube-proxy.kubeconfig") },
    hostnameOverride: node.name,
    clusterCIDR: net.clusterCidr,
    healthzBindAddress: "127.0.0.1:10256",
    metricsBindAddress: "127.0.0.1:10249",
    // The conntrack table is the host's (not per namespace): leave its size and timeouts alone.
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: "0s", tcpCloseWaitTimeout: "0s" },
  };
}

interface NodeStart {
  stateDir: string;
  net: ClusterNetwork;
  node: RealNodeNetwork;
  binaries: Binaries;
  nodeBinaries: NodeBinaries;
  pki: Pki;
  /** API server URL reachable from the node namespace. */
  server: string;
}

/** Writes every configuration file of a node. */
function writeNodeFiles(start: NodeStart): void {
  const { stateDir, node, net, pki, server } = start;
  const dir = nodeDir(stateDir, node.name);
  for (const sub of ["containerd", "runc", "cni/net.d", "cni/ipam", "kubelet", "pod-logs"])
    mkdirSync(join(dir, sub), { recursive: true });
  writeFileSync(join(dir, "containerd.toml"), containerdConfig(dir, start.nodeBinaries.cniDir));
  writeFileSync(join(dir, "cni", "net.d", "10-onto.conflist"), cniConfig(dir, node, net));
  writeFileSync(join(dir, "kubelet.yaml"), stringify(kubeletConfig(stateDir, node, pki)));
  writeFileSync(join(dir, "kube-proxy.yaml"), stringify(kubeProxyConfig(stateDir, node, net)));
  const nodeToken = pki.tokens[`node-${node.name}`];
  const proxyToken = pki.tokens["kube-proxy"];
  if (!nodeToken || !proxyToken)
    throw new Error(`no token for ${node.name}: the PKI lacks the real-node identities`);
  writeFileSync(join(dir, "kubelet.kubeconfig"), kubeconfig(server, pki, nodeToken), { mode: 0o600 });
  writeFileSync(join(dir, "kube-proxy.kubeconfig"), kubeconfig(server, pki, proxyToken), { mode: 0o600 });
}

function componentCommand(start: NodeStart, component: NodeComponent): { command: string; args: string[] } {
  const { stateDir, node } = start;
  const dir = nodeDir(stateDir, node.name);
  switch (component) {
    case "containerd":
      return {
        command: join(start.nodeBinaries.containerdDir, "containerd"),
        args: ["--config", join(dir, "containerd.toml")],
      };
    case "kubelet":
      return {
        command: start.binaries.k8s,
        args: [
          "kubelet",
          `--config=${join(dir, "kubelet.yaml")}`,
          `--kubeconfig=${join(dir, "kubelet.kubeconfig")}`,
          `--root-dir=${join(dir, "kubelet")}`,
          `--hostname-override=${node.name}`,
          `--node-ip=${node.address}`,
          `--node-labels=${NODE_KIND_LABEL}=${REAL_NODE_KIND}`,
          "--v=2",
        ],
      };
    case "kube-proxy":
      return {
        command: start.binaries.k8s,
        args: ["kube-proxy", `--config=${join(dir, "kube-proxy.yaml")}`, "--v=1"],
      };
  }
}

/** Starts one component of a node in its network namespace and cgroup. */
export function startNodeComponent(start: NodeStart, component: NodeComponent): ProcessRecord {
  const { command, args } = componentCommand(start, component);
  const root = nodeCgroupRoot(start.node);
  return startProcess(start.stateDir, recordName(start.node.name, component), command, args, {
    // The host's mount namespace (volumes the kubelet mounts are visible to containerd and runc).
    prefix: ["nsenter", `--net=/run/netns/${start.node.netns}`, "--"],
    // containerd finds its shim on PATH; runc and iptables are Debian's.
    env: {
      PATH: `${start.nodeBinaries.containerdDir}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
    },
    // Right after the spawn, before the program has started anything of its own.
    onSpawn: (pid) => placeInNodeCgroup(root, pid),
  });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function waitForSocket(record: ProcessRecord, socket: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(socket)) {
    if (!isAlive(record))
      throw new Error(`${record.name} exited at start; last log lines:\n${logTail(record)}`);
    if (Date.now() > deadline)
      throw new Error(`${record.name}: no socket after ${timeoutMs / 1000} s:\n${logTail(record)}`);
    await sleep(100);
  }
}

/**
 * Starts containerd on every node (the network must be set up), then `loadImages` (the sandbox
 * image at least must be there before the kubelet starts pods), then the kubelets and
 * kube-proxies. The caller waits for the nodes to be Ready.
 */
export async function startRealNodes(
  starts: NodeStart[],
  loadImages: (node: RealNodeNetwork) => Promise<void>,
  progress: (line: string) => void,
): Promise<void> {
  for (const start of starts) {
    writeNodeFiles(start);
    createNodeCgroup(nodeCgroupRoot(start.node));
    progress(`starting containerd on ${start.node.name}`);
    const record = startNodeComponent(start, "containerd");
    await waitForSocket(record, containerdSocket(start.stateDir, start.node.name), 30_000);
    await loadImages(start.node);
  }
  for (const start of starts) {
    progress(`starting kubelet and kube-proxy on ${start.node.name}`);
    startNodeComponent(start, "kubelet");
    startNodeComponent(start, "kube-proxy");
  }
}

/** Removes the kubelet's links in /var/log/containers that point into this node's pod logs. */
function removeLogLinks(dir: string): void {
  if (!existsSync(CONTAINER_LOG_LINKS)) return;
  const podLogs = resolve(join(dir, "pod-logs"));
  for (const name of readdirSync(CONTAINER_LOG_LINKS)) {
    const path = join(CONTAINER_LOG_LINKS, name);
    try {
      if (readlinkSync(path).startsWith(podLogs)) rmSync(path, { force: true });
    } catch {
      // not a link
    }
  }
}

/** Removes the sockets of this containerd's shims from containerd's fixed shim socket folder. */
function removeShimSockets(stateDir: string, node: string): void {
  const tasks = join(nodeDir(stateDir, node), "containerd", "state", "io.containerd.runtime.v2.task");
  if (!existsSync(tasks)) return;
  const address = containerdSocket(stateDir, node);
  for (const namespace of readdirSync(tasks)) {
    for (const id of readdirSync(join(tasks, namespace))) {
      for (const suffix of ["", "/debug"]) {
        const digest = createHash("sha256")
          .update(join(address, namespace, id) + suffix)
          .digest("hex");
        rmSync(join(SHIM_SOCKETS, digest), { force: true });
      }
    }
  }
}

/**
 * Stops every real node of the cluster and removes all they made: processes (recorded ones
 * first, gracefully; then whatever is left in the nodes' cgroups, shims and containers
 * included), mounts, files, namespaces, bridge, routes and the network claim.
 */
export async function stopRealNodes(stateDir: string, net: ClusterNetwork): Promise<void> {
  const records = listRecords(stateDir);
  for (const component of [...NODE_COMPONENTS].reverse()) {
    for (const node of net.nodes) {
      const record = records.find((r) => r.name === recordName(node.name, component));
      if (record) await stopProcess(stateDir, record, 5_000);
    }
  }
  const roots = new Set([...net.nodes.map(nodeCgroupRoot), ...leftoverNodeCgroups(net.index)]);
  for (const root of roots) await removeNodeCgroup(root);
  const nodesDir = join(stateDir, "nodes");
  if (existsSync(nodesDir)) {
    for (const name of readdirSync(nodesDir)) {
      removeLogLinks(nodeDir(stateDir, name));
      removeShimSockets(stateDir, name);
    }
    unmountAllUnder(nodesDir);
    rmSync(nodesDir, { recursive: true, force: true });
  }
  tearDownNetwork(net);
}
