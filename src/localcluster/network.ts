// The network of a cluster's real nodes. Each real node lives in a network namespace of its own,
// joined by a veth pair to a bridge the launcher creates on the host; pods get addresses on a CNI
// bridge inside their node's namespace. Nothing here has a route off the machine: the node
// namespaces have no default route, pods only have routes to the cluster's own ranges, and the
// host keeps `ip_forward` at 0 (it only ever talks to pods, it never routes for them).
//
// Addresses: every cluster with real nodes claims one index 0..255 (a file under
// /run/onto-operator/net, so two state folders never pick the same one) and owns the /20
// 10.192.0.0/12 + index*4096: its first /24 is the host bridge (host .1, node n .10+n), the
// next ones are the pod ranges of nodes 1..15. Names (bridge, veths, namespaces, cgroups)
// carry the index, so two clusters run side by side. The whole 10.192.0.0/12 and the service
// range get an `unreachable` route on the host while any such cluster exists: a packet to an
// address of a cluster that is gone fails here instead of leaving by the default route. Before
// that, the host's resolvers and routes are checked not to be inside those ranges (this host's
// resolver is at 10.255.255.53, for one), so the guard can never cut the host off.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** Every cluster's node and pod addresses are inside this range. */
export const REAL_NODES_SUPERNET = "10.192.0.0/12";
/** The Service range of every local cluster (the API server's --service-cluster-ip-range). */
export const SERVICE_CIDR = "10.96.0.0/16";
/** ClusterIP of the `kube-dns` Service (the kubelet's clusterDNS). */
export const DNS_SERVICE_IP = "10.96.0.10";
/** Real nodes per cluster: the /20 holds the host /24 and 15 pod /24s. */
export const MAX_REAL_NODES = 15;

const CLAIMS_DIR = "/run/onto-operator/net";

export interface RealNodeNetwork {
  /** Kubernetes node name. */
  name: string;
  /** Network namespace, under /run/netns. */
  netns: string;
  /** Host end of the veth pair (on the bridge); the node end is `eth0` in the namespace. */
  hostVeth: string;
  /** The node's InternalIP, on the host bridge's subnet. */
  address: string;
  podCidr: string;
  /** The CNI bridge's address in the node namespace: the pods' gateway. */
  podGateway: string;
}

export interface ClusterNetwork {
  index: number;
  bridge: string;
  /** Subnet of the host bridge and the nodes' eth0. */
  hostCidr: string;
  /** The host's address on the bridge: the API server listens here when real nodes exist. */
  hostAddress: string;
  /** Every address of this cluster's nodes and pods (kube-proxy's clusterCIDR). */
  clusterCidr: string;
  nodes: RealNodeNetwork[];
}

function octets(index: number, third: number): string {
  return `10.${192 + Math.floor(index / 16)}.${(index % 16) * 16 + third}`;
}

function ipToNumber(ip: string): number {
  return ip.split(".").reduce((acc, part) => acc * 256 + Number(part), 0);
}

/** True when the IPv4 ranges `a` and `b` (CIDR notation) overlap. */
export function cidrsOverlap(a: string, b: string): boolean {
  const range = (cidr: string): [number, number] => {
    const [ip = "0.0.0.0", bits = "32"] = cidr.split("/");
    const size = 2 ** (32 - Number(bits));
    const start = Math.floor(ipToNumber(ip) / size) * size;
    return [start, start + size - 1];
  };
  const [a0, a1] = range(a);
  const [b0, b1] = range(b);
  return a0 <= b1 && b0 <= a1;
}

/**
 * Refuses to set up when something the host uses (a resolver, a route that is not ours) lies in
 * the ranges the real nodes take: the guard routes would cut it off.
 */
export function checkHostRanges(): void {
  const resolvConf = existsSync("/etc/resolv.conf") ? readFileSync("/etc/resolv.conf", "utf8") : "";
  const nameservers = [...resolvConf.matchAll(/^\s*nameserver\s+(\d+\.\d+\.\d+\.\d+)/gm)].map(
    (m) => `${m[1]}/32`,
  );
  const routes = run("ip", ["-4", "route", "show", "table", "all"])
    .split("\n")
    .filter(
      (line) =>
        line.trim() &&
        !/\bdev onto\d+br\b/.test(line) &&
        !line.startsWith("unreachable") &&
        !line.startsWith("local") &&
        !line.startsWith("broadcast"),
    )
    .map((line) => line.split(" ")[0] ?? "")
    .filter((dst) => /^\d+\.\d+\.\d+\.\d+(\/\d+)?$/.test(dst))
    .map((dst) => (dst.includes("/") ? dst : `${dst}/32`));
  for (const used of [...nameservers, ...routes]) {
    for (const ours of [REAL_NODES_SUPERNET, SERVICE_CIDR]) {
      if (cidrsOverlap(used, ours))
        throw new Error(
          `the host uses ${used} (a resolver or a route), inside ${ours} that the real nodes need: refusing to set up their network`,
        );
    }
  }
}

/** The addresses and names of cluster `index` with `count` real nodes (pure). */
export function planNetwork(index: number, count: number): ClusterNetwork {
  if (!Number.isInteger(index) || index < 0 || index > 255)
    throw new Error(`network index ${index} out of 0..255`);
  if (count < 0 || count > MAX_REAL_NODES)
    throw new Error(`real nodes: ${count} is not in 0..${MAX_REAL_NODES}`);
  const nodes: RealNodeNetwork[] = [];
  for (let n = 1; n <= count; n++) {
    const name = `real-${n}`;
    nodes.push({
      name,
      netns: `onto${index}-${name}`,
      hostVeth: `onto${index}v${n}`,
      address: `${octets(index, 0)}.${10 + n}`,
      podCidr: `${octets(index, n)}.0/24`,
      podGateway: `${octets(index, n)}.1`,
    });
  }
  return {
    index,
    bridge: `onto${index}br`,
    hostCidr: `${octets(index, 0)}.0/24`,
    hostAddress: `${octets(index, 0)}.1`,
    clusterCidr: `${octets(index, 0)}.0/20`,
    nodes,
  };
}

function run(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { stdio: ["ignore", "pipe", "pipe"] }).toString();
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim() ?? "";
    throw new Error(`${command} ${args.join(" ")} failed: ${stderr || String(err)}`);
  }
}

function tryRun(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Runs a command inside a node's network namespace (and the host's mount namespace). */
export function inNetns(netns: string, command: string, args: string[]): string {
  return run("nsenter", [`--net=/run/netns/${netns}`, "--", command, ...args]);
}

/** Claims a network index for `stateDir` (the same one again if it already holds one). */
export function claimNetworkIndex(stateDir: string): number {
  mkdirSync(CLAIMS_DIR, { recursive: true });
  const owner = resolve(stateDir);
  const start = createHash("sha256").update(owner).digest().readUInt8(0);
  for (let i = 0; i < 256; i++) {
    const index = (start + i) % 256;
    const path = join(CLAIMS_DIR, String(index));
    if (existsSync(path)) {
      const holder = readFileSync(path, "utf8").trim();
      if (holder === owner) return index;
      // A claim whose cluster is gone (its folder was deleted without `cluster down`) and whose
      // bridge no longer exists can be taken over.
      if (existsSync(join(holder, "cluster.json")) || linkExists(`onto${index}br`)) continue;
    }
    writeFileSync(path, owner);
    return index;
  }
  throw new Error("no free network index for real nodes (256 clusters with real nodes on this machine)");
}

/** The index `stateDir` holds, if any. */
export function claimedNetworkIndex(stateDir: string): number | undefined {
  if (!existsSync(CLAIMS_DIR)) return undefined;
  const owner = resolve(stateDir);
  for (const name of readdirSync(CLAIMS_DIR)) {
    if (readFileSync(join(CLAIMS_DIR, name), "utf8").trim() === owner) return Number(name);
  }
  return undefined;
}

function releaseNetworkIndex(index: number): void {
  rmSync(join(CLAIMS_DIR, String(index)), { force: true });
}

function linkExists(name: string): boolean {
  return tryRun("ip", ["link", "show", "dev", name]);
}

function netnsExists(name: string): boolean {
  return existsSync(`/run/netns/${name}`);
}

/** Creates the bridge, the node namespaces, their veths and every route. Idempotent. */
export function setUpNetwork(net: ClusterNetwork): void {
  checkHostRanges();
  run("ip", ["route", "replace", "unreachable", REAL_NODES_SUPERNET]);
  run("ip", ["route", "replace", "unreachable", SERVICE_CIDR]);
  if (!linkExists(net.bridge)) run("ip", ["link", "add", net.bridge, "type", "bridge"]);
  run("ip", ["addr", "replace", `${net.hostAddress}/24`, "dev", net.bridge]);
  run("ip", ["link", "set", net.bridge, "up"]);
  for (const node of net.nodes) {
    if (!netnsExists(node.netns)) run("ip", ["netns", "add", node.netns]);
    if (!linkExists(node.hostVeth)) {
      run("ip", ["link", "add", node.hostVeth, "type", "veth", "peer", "name", "eth0", "netns", node.netns]);
    }
    run("ip", ["link", "set", node.hostVeth, "master", net.bridge, "up"]);
    run("ip", ["-n", node.netns, "addr", "replace", `${node.address}/24`, "dev", "eth0"]);
    run("ip", ["-n", node.netns, "link", "set", "lo", "up"]);
    run("ip", ["-n", node.netns, "link", "set", "eth0", "up"]);
    // The node routes for its pods; bridged pod traffic passes its iptables (kube-proxy's rules).
    inNetns(node.netns, "sysctl", ["-q", "-w", "net.ipv4.ip_forward=1"]);
    inNetns(node.netns, "sysctl", ["-q", "-w", "net.bridge.bridge-nf-call-iptables=1"]);
    for (const other of net.nodes) {
      if (other === node) continue;
      run("ip", ["-n", node.netns, "route", "replace", other.podCidr, "via", other.address, "dev", "eth0"]);
    }
    run("ip", ["route", "replace", node.podCidr, "via", node.address, "dev", net.bridge]);
  }
}

/**
 * Removes the namespaces (and with them the veths, the pods' bridges and kube-proxy's rules),
 * the bridge (and with it the host's routes through it) and the claim. Safe to call twice, and
 * on whatever a crashed run left.
 */
export function tearDownNetwork(net: ClusterNetwork): void {
  for (const node of net.nodes) {
    if (netnsExists(node.netns)) tryRun("ip", ["netns", "delete", node.netns]);
    if (linkExists(node.hostVeth)) tryRun("ip", ["link", "delete", node.hostVeth]);
    tryRun("ip", ["route", "delete", node.podCidr]);
  }
  // Namespaces of this index a crashed run made beyond those recorded.
  for (const netns of leftoverNetns(net.index)) tryRun("ip", ["netns", "delete", netns]);
  if (linkExists(net.bridge)) tryRun("ip", ["link", "delete", net.bridge]);
  releaseNetworkIndex(net.index);
  // The guard routes stay while another cluster with real nodes holds an index.
  if (!existsSync(CLAIMS_DIR) || readdirSync(CLAIMS_DIR).length === 0) {
    tryRun("ip", ["route", "delete", "unreachable", REAL_NODES_SUPERNET]);
    tryRun("ip", ["route", "delete", "unreachable", SERVICE_CIDR]);
  }
}

/** Namespaces of cluster `index` that exist now (a crashed run may have left more than it recorded). */
export function leftoverNetns(index: number): string[] {
  if (!existsSync("/run/netns")) return [];
  return readdirSync("/run/netns").filter((name) => name.startsWith(`onto${index}-`));
}
