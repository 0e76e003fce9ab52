// The local control plane: real etcd, kube-apiserver, kube-controller-manager and
// kube-scheduler built from Go modules, with KWOK playing most nodes and their pods, started as
// plain processes on 127.0.0.1, and optionally real nodes (kubelet, containerd, kube-proxy in
// network namespaces of their own, ./real-nodes.ts) with CoreDNS. With real nodes the API server
// listens on the host bridge address instead of 127.0.0.1, so the nodes and their pods reach it.
// `clusterUp` is idempotent (a running, healthy cluster is reused; a half-dead one is cleaned up
// and started afresh); `clusterDown` stops every process and removes the cluster's data.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { request as httpRequest } from "node:http";
import { createServer } from "node:net";
import { join } from "node:path";
import { stringify } from "yaml";
import { ensureBinaries, ensureNodeBinaries, type Binaries, type NodeBinaries } from "./build.js";
import { DNS_DEPLOYMENT, DNS_NAMESPACE, dnsManifests } from "./dns.js";
import { buildImage, type BuiltImage } from "./images/build.js";
import { loadImage } from "./images/load.js";
import { NODE_IMAGES, RECIPES } from "./images/recipes.js";
import {
  MAX_REAL_NODES,
  claimNetworkIndex,
  claimedNetworkIndex,
  planNetwork,
  setUpNetwork,
  type ClusterNetwork,
} from "./network.js";
import { inotifyInstanceLimit, kubeletHostProblem } from "./host-limits.js";
import { aggregationApiserverArgs, ensureMonitoring, kwokMetricsArgs } from "./monitoring.js";
import { nodeManifest, simulatedNodes, storageClasses } from "./nodes.js";
import { ensurePki, type Identity, type Pki } from "./pki.js";
import {
  NODE_COMPONENTS,
  containerdSocket,
  realNodeIdentities,
  recordName,
  startRealNodes,
  stopRealNodes,
} from "./real-nodes.js";
import {
  isAlive,
  listRecords,
  logTail,
  readRecord,
  startProcess,
  stopProcess,
  type ProcessRecord,
} from "./processes.js";
import { ETCD_VERSION, KUBERNETES_VERSION, KWOK_VERSION } from "./versions.js";
import { PACKAGE_ROOT } from "./package-root.js";

const stagesFile = join(PACKAGE_ROOT, "tools", "localcluster", "kwok", "stages.yaml");

export type Component = "etcd" | "kube-apiserver" | "kube-controller-manager" | "kube-scheduler" | "kwok";
/** Start order; stop order is the reverse. */
export const COMPONENTS: readonly Component[] = [
  "etcd",
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
  "kwok",
];

export interface ClusterUpOptions {
  stateDir: string;
  progress?: (line: string) => void;
  /** General-purpose simulated nodes (3 zones). Default 6. */
  workers?: number;
  /** Simulated GPU nodes with nvidia.com/gpu capacity and taint. Default 2. */
  gpuNodes?: number;
  /** Seconds pods tolerate a not-ready/unreachable node before eviction. Default 30. */
  evictionTolerationSeconds?: number;
  /**
   * Real nodes (kubelet, containerd, kube-proxy; labelled and tainted `onto.paas/node-kind=real`)
   * beside the simulated ones, with CoreDNS. Default 0 here; `onto cluster up` defaults to 1.
   */
  realNodes?: number;
}

export interface ClusterInfo {
  stateDir: string;
  /** Admin kubeconfig (system:masters). */
  kubeconfigPath: string;
  server: string;
  etcdClientUrl: string;
  kubernetesVersion: string;
  etcdVersion: string;
  kwokVersion: string;
  nodes: string[];
  /** Names of the real nodes (a subset of `nodes`). */
  realNodes: string[];
  /** Path of the multi-call binary; `<k8sBinary> kubectl ...` is a matching kubectl. */
  k8sBinary: string;
  /** True when this call started the cluster, false when it found it already running. */
  started: boolean;
}

interface ClusterState {
  ports: {
    etcdClient: number;
    etcdPeer: number;
    apiserver: number;
    controllerManager: number;
    scheduler: number;
    kwok: number;
  };
  nodes: string[];
  binaries: Binaries;
  /** Address the API server listens on: 127.0.0.1, or the host bridge address with real nodes. */
  apiHost?: string;
  realNodes?: { network: ClusterNetwork; binaries: NodeBinaries };
}

/** Containerd of each real node of the cluster in `stateDir` (for loading images). */
export function realNodeRuntimes(
  stateDir: string,
): { node: string; containerdDir: string; address: string }[] {
  const state = readState(stateDir);
  if (!state?.realNodes) return [];
  const { network, binaries } = state.realNodes;
  return network.nodes.map((node) => ({
    node: node.name,
    containerdDir: binaries.containerdDir,
    address: containerdSocket(stateDir, node.name),
  }));
}

const apiHostOf = (state: ClusterState): string => state.apiHost ?? "127.0.0.1";
const serverOf = (state: ClusterState): string => `https://${apiHostOf(state)}:${state.ports.apiserver}`;

const stateFile = (stateDir: string): string => join(stateDir, "cluster.json");
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function writeKubeconfig(path: string, server: string, pki: Pki, identity: Identity): void {
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "onto-local", cluster: { server, "certificate-authority": pki.caCert } }],
    users: [{ name: identity, user: { token: pki.tokens[identity] } }],
    contexts: [{ name: "onto-local", context: { cluster: "onto-local", user: identity } }],
    "current-context": "onto-local",
  };
  writeFileSync(path, stringify(config), { mode: 0o600 });
}

function kubeconfigPathFor(stateDir: string, identity: Identity): string {
  return identity === "admin"
    ? join(stateDir, "kubeconfig")
    : join(stateDir, "pki", `${identity}.kubeconfig`);
}

/** GET on the API server with the admin token; resolves with status code and body. */
function apiGet(
  server: string,
  pki: Pki,
  path: string,
  timeoutMs = 3000,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${server}${path}`,
      {
        ca: readFileSync(pki.caCert),
        headers: { Authorization: `Bearer ${pki.tokens.admin}` },
        timeout: timeoutMs,
      },
      (res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => (body += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end();
  });
}

function httpGet(url: string, timeoutMs = 2000): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { timeout: timeoutMs }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end();
  });
}

async function waitFor(
  what: string,
  record: ProcessRecord | undefined,
  timeoutMs: number,
  check: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (record && !isAlive(record))
      throw new Error(`${record.name} exited while waiting for ${what}; last log lines:\n${logTail(record)}`);
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) {
      const tail = record ? `; last log lines of ${record.name}:\n${logTail(record)}` : "";
      throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${tail}`);
    }
    await sleep(200);
  }
}

function componentArgs(
  name: Component,
  stateDir: string,
  state: ClusterState,
  pki: Pki,
  toleration: number,
): string[] {
  const { ports } = state;
  const etcdClient = `http://127.0.0.1:${ports.etcdClient}`;
  const etcdPeer = `http://127.0.0.1:${ports.etcdPeer}`;
  switch (name) {
    case "etcd":
      return [
        "etcd",
        "--name=onto",
        `--data-dir=${join(stateDir, "etcd")}`,
        `--listen-client-urls=${etcdClient}`,
        `--advertise-client-urls=${etcdClient}`,
        `--listen-peer-urls=${etcdPeer}`,
        `--initial-advertise-peer-urls=${etcdPeer}`,
        `--initial-cluster=onto=${etcdPeer}`,
        "--unsafe-no-fsync=true",
        "--log-level=warn",
      ];
    case "kube-apiserver":
      return [
        "kube-apiserver",
        `--etcd-servers=${etcdClient}`,
        `--bind-address=${apiHostOf(state)}`,
        `--advertise-address=${apiHostOf(state)}`,
        `--kubelet-client-certificate=${pki.kubeletClientCert}`,
        `--kubelet-client-key=${pki.kubeletClientKey}`,
        "--kubelet-preferred-address-types=InternalIP",
        `--secure-port=${ports.apiserver}`,
        `--cert-dir=${join(stateDir, "pki", "apiserver-generated")}`,
        `--tls-cert-file=${pki.serverCert}`,
        `--tls-private-key-file=${pki.serverKey}`,
        `--client-ca-file=${pki.caCert}`,
        `--token-auth-file=${pki.tokenFile}`,
        "--service-cluster-ip-range=10.96.0.0/16",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        `--service-account-key-file=${pki.saPublicKey}`,
        `--service-account-signing-key-file=${pki.saPrivateKey}`,
        "--authorization-mode=Node,RBAC",
        "--allow-privileged=true",
        `--default-not-ready-toleration-seconds=${toleration}`,
        `--default-unreachable-toleration-seconds=${toleration}`,
        "--profiling=false",
        "--v=1",
        ...aggregationApiserverArgs(stateDir),
      ];
    case "kube-controller-manager": {
      const kubeconfig = kubeconfigPathFor(stateDir, "controllerManager");
      return [
        "kube-controller-manager",
        `--kubeconfig=${kubeconfig}`,
        `--authentication-kubeconfig=${kubeconfig}`,
        `--authorization-kubeconfig=${kubeconfig}`,
        "--bind-address=127.0.0.1",
        `--secure-port=${ports.controllerManager}`,
        `--service-account-private-key-file=${pki.saPrivateKey}`,
        `--root-ca-file=${pki.caCert}`,
        `--cluster-signing-cert-file=${pki.caCert}`,
        `--cluster-signing-key-file=${pki.caKey}`,
        "--use-service-account-credentials=true",
        "--enable-hostpath-provisioner=true",
        "--node-monitor-period=2s",
        "--node-monitor-grace-period=20s",
        // The HPA controller looks every 5 s instead of 15 s, so a scaling step follows the
        // behaviour's policy period (15 s in the tests) rather than a later sync.
        "--horizontal-pod-autoscaler-sync-period=5s",
        "--leader-elect=false",
        "--controllers=*",
        "--v=1",
      ];
    }
    case "kube-scheduler": {
      const kubeconfig = kubeconfigPathFor(stateDir, "scheduler");
      return [
        "kube-scheduler",
        `--kubeconfig=${kubeconfig}`,
        `--authentication-kubeconfig=${kubeconfig}`,
        `--authorization-kubeconfig=${kubeconfig}`,
        "--bind-address=127.0.0.1",
        `--secure-port=${ports.scheduler}`,
        "--leader-elect=false",
        "--v=1",
      ];
    }
    case "kwok":
      return [
        `--kubeconfig=${kubeconfigPathFor(stateDir, "kwok")}`,
        `--config=${join(stateDir, "kwok-stages.yaml")}`,
        `--server-address=127.0.0.1:${ports.kwok}`,
        "--v=INFO",
        ...kwokMetricsArgs(stateDir),
      ];
  }
}

function binaryFor(name: Component, state: ClusterState): string {
  return name === "kwok" ? state.binaries.kwok : state.binaries.k8s;
}

function readState(stateDir: string): ClusterState | undefined {
  return existsSync(stateFile(stateDir))
    ? (JSON.parse(readFileSync(stateFile(stateDir), "utf8")) as ClusterState)
    : undefined;
}

function infoFrom(stateDir: string, state: ClusterState, started: boolean): ClusterInfo {
  return {
    stateDir,
    kubeconfigPath: kubeconfigPathFor(stateDir, "admin"),
    server: serverOf(state),
    etcdClientUrl: `http://127.0.0.1:${state.ports.etcdClient}`,
    kubernetesVersion: KUBERNETES_VERSION,
    etcdVersion: ETCD_VERSION,
    kwokVersion: KWOK_VERSION,
    nodes: state.nodes,
    realNodes: state.realNodes?.network.nodes.map((n) => n.name) ?? [],
    k8sBinary: state.binaries.k8s,
    started,
  };
}

async function waitHealthy(name: Component, stateDir: string, state: ClusterState, pki: Pki): Promise<void> {
  const record = readRecord(stateDir, name);
  const server = serverOf(state);
  switch (name) {
    case "etcd":
      return waitFor(
        "etcd /health",
        record,
        30_000,
        async () => (await httpGet(`http://127.0.0.1:${state.ports.etcdClient}/health`)) === 200,
      );
    case "kube-apiserver":
      return waitFor(
        "kube-apiserver /readyz",
        record,
        90_000,
        async () => (await apiGet(server, pki, "/readyz")).status === 200,
      );
    default:
      // The other components have no endpoint we can reach with the admin token; a short
      // pause that shows they did not exit at once is enough, the node wait proves the rest.
      return waitFor(`${name} to stay up`, record, 1_000, async () => {
        await sleep(300);
        return record !== undefined && isAlive(record);
      });
  }
}

/** Starts (or reuses) the local control plane in `stateDir` and returns how to reach it. */
export async function clusterUp(opts: ClusterUpOptions): Promise<ClusterInfo> {
  const { stateDir } = opts;
  const progress = opts.progress ?? (() => undefined);
  const existing = readState(stateDir);
  if (existing) {
    const records = listRecords(stateDir);
    const expected = [...COMPONENTS, ...recordNamesOfRealNodes(existing)];
    const allAlive = expected.every((c) => records.some((r) => r.name === c && isAlive(r)));
    const pki = ensurePki(join(stateDir, "pki"));
    // Every process alive but the API server not ready: it may be restarting (a test restarts it
    // on purpose); give it time before calling the cluster dead and starting afresh.
    const server = serverOf(existing);
    const ready =
      allAlive &&
      (await waitFor(
        "the running API server to become ready",
        undefined,
        60_000,
        async () => (await apiGet(server, pki, "/readyz")).status === 200,
      ).then(
        () => true,
        () => false,
      ));
    const realWanted = opts.realNodes ?? 0;
    const realHave = existing.realNodes?.network.nodes.length ?? 0;
    if (ready && realHave >= realWanted) {
      progress(`cluster already running at ${server}`);
      await ensureMonitoring(monitoringOptions(stateDir, existing, progress));
      return infoFrom(stateDir, existing, false);
    }
    if (ready)
      progress(`the running cluster has ${realHave} real nodes, ${realWanted} wanted: starting afresh`);
    progress("found a stopped or half-running cluster: cleaning it up");
    await clusterDown({ stateDir });
  }

  const started = Date.now();
  const realCount = opts.realNodes ?? 0;
  if (realCount < 0 || realCount > MAX_REAL_NODES || !Number.isInteger(realCount))
    throw new Error(`real nodes: ${realCount} is not a whole number in 0..${MAX_REAL_NODES}`);
  const binaries = await ensureBinaries(progress);
  const nodeBinaries = realCount > 0 ? await ensureNodeBinaries(progress) : undefined;
  const nodeImages: BuiltImage[] = [];
  if (realCount > 0)
    for (const name of NODE_IMAGES) nodeImages.push(await buildImage(RECIPES[name], progress));
  mkdirSync(stateDir, { recursive: true });
  rmSync(join(stateDir, "logs"), { recursive: true, force: true });
  const network = realCount > 0 ? planNetwork(claimNetworkIndex(stateDir), realCount) : undefined;
  const pki = ensurePki(join(stateDir, "pki"), {
    serverAddresses: network ? [network.hostAddress] : [],
    extraIdentities: network ? realNodeIdentities(network) : {},
  });
  const nodes = simulatedNodes(opts.workers ?? 6, opts.gpuNodes ?? 2);
  const state: ClusterState = {
    ports: {
      etcdClient: await freePort(),
      etcdPeer: await freePort(),
      apiserver: await freePort(),
      controllerManager: await freePort(),
      scheduler: await freePort(),
      kwok: await freePort(),
    },
    nodes: [...nodes.map((n) => n.name), ...(network?.nodes.map((n) => n.name) ?? [])],
    binaries,
    ...(network && nodeBinaries
      ? { apiHost: network.hostAddress, realNodes: { network, binaries: nodeBinaries } }
      : {}),
  };
  writeFileSync(stateFile(stateDir), JSON.stringify(state, null, 2));
  copyFileSync(stagesFile, join(stateDir, "kwok-stages.yaml"));
  const server = serverOf(state);
  for (const id of ["admin", "controllerManager", "scheduler", "kwok"] as const) {
    writeKubeconfig(kubeconfigPathFor(stateDir, id), server, pki, id);
  }

  // Stop whatever this call started if it is interrupted, so Ctrl-C leaves no process behind.
  const onSignal = (): void => {
    void clusterDown({ stateDir }).finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    if (network) {
      progress(
        `setting up the network of ${network.nodes.length} real nodes (bridge ${network.bridge}, ${network.clusterCidr})`,
      );
      setUpNetwork(network);
    }
    const toleration = opts.evictionTolerationSeconds ?? 30;
    for (const name of COMPONENTS) {
      progress(`starting ${name}`);
      startProcess(
        stateDir,
        name,
        binaryFor(name, state),
        componentArgs(name, stateDir, state, pki, toleration),
      );
      await waitHealthy(name, stateDir, state, pki);
    }
    progress(`creating ${nodes.length} simulated nodes and the storage classes`);
    const manifests = [...storageClasses(), ...nodes.map(nodeManifest)];
    kubectl(
      stateDir,
      binaries,
      ["apply", "--server-side", "--field-manager=onto-cluster", "-f", "-"],
      manifests.map((m) => stringify(m)).join("---\n"),
    );
    if (network && nodeBinaries) {
      await startRealNodes(
        network.nodes.map((node) => ({ stateDir, net: network, node, binaries, nodeBinaries, pki, server })),
        async (node) => {
          const runtime = {
            containerdDir: nodeBinaries.containerdDir,
            address: containerdSocket(stateDir, node.name),
          };
          for (const image of nodeImages) loadImage(runtime, image);
        },
        progress,
      );
    }
    const total = state.nodes.length;
    await waitFor(`${total} nodes Ready`, undefined, 120_000, async () => {
      if (network) assertRealNodesAlive(stateDir, state);
      return (await readyNodes(server, pki)) >= total;
    });
    if (network) {
      progress("starting cluster DNS (CoreDNS) on the real nodes");
      kubectl(
        stateDir,
        binaries,
        ["apply", "--server-side", "--field-manager=onto-cluster", "-f", "-"],
        dnsManifests()
          .map((m) => stringify(m))
          .join("---\n"),
      );
      await waitFor("CoreDNS available", undefined, 120_000, async () => {
        const res = await apiGet(
          server,
          pki,
          `/apis/apps/v1/namespaces/${DNS_NAMESPACE}/deployments/${DNS_DEPLOYMENT}`,
        );
        const deployment = JSON.parse(res.body) as { status?: { availableReplicas?: number } };
        return res.status === 200 && (deployment.status?.availableReplicas ?? 0) >= 1;
      });
    }
    await ensureMonitoring(monitoringOptions(stateDir, state, progress));
    const real = network ? ` (${network.nodes.length} real)` : "";
    progress(
      `cluster up in ${((Date.now() - started) / 1000).toFixed(1)} s: ${total} nodes Ready${real}, Kubernetes ${KUBERNETES_VERSION}`,
    );
    return infoFrom(stateDir, state, true);
  } catch (err) {
    await clusterDown({ stateDir }).catch(() => undefined);
    throw err;
  } finally {
    process.removeListener("SIGINT", onSignal);
    process.removeListener("SIGTERM", onSignal);
  }
}

function monitoringOptions(stateDir: string, state: ClusterState, progress: (line: string) => void) {
  const kubeconfigPath = kubeconfigPathFor(stateDir, "admin");
  return {
    stateDir,
    k8sBinary: state.binaries.k8s,
    kubeconfigPath,
    kwokPort: state.ports.kwok,
    freePort,
    progress,
  };
}

async function readyNodeNames(server: string, pki: Pki): Promise<Set<string>> {
  const res = await apiGet(server, pki, "/api/v1/nodes");
  if (res.status !== 200) return new Set();
  const list = JSON.parse(res.body) as {
    items: { metadata: { name: string }; status?: { conditions?: { type: string; status: string }[] } }[];
  };
  return new Set(
    list.items
      .filter((n) => n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"))
      .map((n) => n.metadata.name),
  );
}

async function readyNodes(server: string, pki: Pki): Promise<number> {
  return (await readyNodeNames(server, pki)).size;
}

function kubectl(stateDir: string, binaries: Binaries, args: string[], input?: string): string {
  return execFileSync(
    binaries.k8s,
    ["kubectl", `--kubeconfig=${kubeconfigPathFor(stateDir, "admin")}`, ...args],
    {
      input,
      stdio: ["pipe", "pipe", "pipe"],
    },
  ).toString();
}

/** Stops every process of the cluster in `stateDir` and deletes its data. Safe to call twice. */
export async function clusterDown(opts: { stateDir: string }): Promise<void> {
  const { stateDir } = opts;
  const state = readState(stateDir);
  // Real nodes first (their pods' processes are killed through the nodes' cgroups). Without a
  // state file, a claimed network index still says a crashed run had real nodes: everything of
  // that index is removed, as many nodes as a cluster can have.
  const index = state?.realNodes?.network.index ?? claimedNetworkIndex(stateDir);
  if (index !== undefined) {
    const network = state?.realNodes?.network ?? planNetwork(index, MAX_REAL_NODES);
    await stopRealNodes(stateDir, network);
  }
  const records = listRecords(opts.stateDir);
  const order = [...COMPONENTS].reverse();
  records.sort((a, b) => order.indexOf(a.name as Component) - order.indexOf(b.name as Component));
  for (const record of records) await stopProcess(stateDir, record);
  for (const path of ["etcd", "run", "cluster.json", "kwok-stages.yaml"])
    rmSync(join(stateDir, path), { recursive: true, force: true });
}

function recordNamesOfRealNodes(state: ClusterState): string[] {
  return (state.realNodes?.network.nodes ?? []).flatMap((node) =>
    NODE_COMPONENTS.map((component) => recordName(node.name, component)),
  );
}

/**
 * Fails at once when a real node's process has exited, or its kubelet logs a host limit it cannot
 * get past (see host-limits.ts), instead of waiting for Ready in vain.
 */
function assertRealNodesAlive(stateDir: string, state: ClusterState): void {
  for (const name of recordNamesOfRealNodes(state)) {
    const record = readRecord(stateDir, name);
    if (record && !isAlive(record)) throw new Error(`${name} exited; last log lines:\n${logTail(record)}`);
  }
  for (const node of state.realNodes?.network.nodes ?? []) {
    const record = readRecord(stateDir, recordName(node.name, "kubelet"));
    if (!record) continue;
    const problem = kubeletHostProblem(node.name, logTail(record, 200), inotifyInstanceLimit());
    if (problem) throw new Error(problem);
  }
}

export interface ComponentStatus {
  name: Component;
  pid?: number;
  running: boolean;
  logFile?: string;
}

export interface RealNodeStatus {
  name: string;
  address: string;
  podCidr: string;
  netns: string;
  ready: boolean;
  components: { name: string; pid?: number; running: boolean; logFile?: string }[];
}

export interface ClusterStatus {
  exists: boolean;
  ready: boolean;
  server?: string;
  kubeconfigPath?: string;
  components: ComponentStatus[];
  readyNodes: number;
  nodes: number;
  realNodes: RealNodeStatus[];
  /** The real nodes' network (bridge, ranges), when the cluster has real nodes. */
  network?: { index: number; bridge: string; hostAddress: string; clusterCidr: string };
}

export async function clusterStatus(opts: { stateDir: string }): Promise<ClusterStatus> {
  const state = readState(opts.stateDir);
  const records = listRecords(opts.stateDir);
  const components = COMPONENTS.map((name): ComponentStatus => {
    const record = records.find((r) => r.name === name);
    return record
      ? { name, pid: record.pid, running: isAlive(record), logFile: record.logFile }
      : { name, running: false };
  });
  if (!state) return { exists: false, ready: false, components, readyNodes: 0, nodes: 0, realNodes: [] };
  const pki = ensurePki(join(opts.stateDir, "pki"));
  const server = serverOf(state);
  const ready = (await apiGet(server, pki, "/readyz").catch(() => ({ status: 0 }))).status === 200;
  const nodesReady = ready ? await readyNodes(server, pki).catch(() => 0) : 0;
  const readyNames = ready
    ? await readyNodeNames(server, pki).catch(() => new Set<string>())
    : new Set<string>();
  const realNodes = (state.realNodes?.network.nodes ?? []).map((node): RealNodeStatus => ({
    name: node.name,
    address: node.address,
    podCidr: node.podCidr,
    netns: node.netns,
    ready: readyNames.has(node.name),
    components: NODE_COMPONENTS.map((component) => {
      const record = records.find((r) => r.name === recordName(node.name, component));
      return record
        ? { name: component, pid: record.pid, running: isAlive(record), logFile: record.logFile }
        : { name: component, running: false };
    }),
  }));
  const net = state.realNodes?.network;
  return {
    realNodes,
    ...(net
      ? {
          network: {
            index: net.index,
            bridge: net.bridge,
            hostAddress: net.hostAddress,
            clusterCidr: net.clusterCidr,
          },
        }
      : {}),
    exists: true,
    ready,
    server,
    kubeconfigPath: kubeconfigPathFor(opts.stateDir, "admin"),
    components,
    readyNodes: nodesReady,
    nodes: state.nodes.length,
  };
}

/**
 * Stops one component and starts it again with the same flags and ports, then waits until it
 * is healthy: tests use it to prove that watches survive an API server restart.
 */
export async function restartComponent(opts: {
  stateDir: string;
  component: Component;
  downtimeMs?: number;
}): Promise<void> {
  const state = readState(opts.stateDir);
  if (!state) throw new Error(`no cluster in ${opts.stateDir}`);
  const record = readRecord(opts.stateDir, opts.component);
  if (!record) throw new Error(`${opts.component} is not running in ${opts.stateDir}`);
  await stopProcess(opts.stateDir, record);
  if (opts.downtimeMs) await sleep(opts.downtimeMs);
  const pki = ensurePki(join(opts.stateDir, "pki"));
  startProcess(opts.stateDir, opts.component, record.command, record.args);
  await waitHealthy(opts.component, opts.stateDir, state, pki);
}
