// The real node itself, with the real kernel: pods run under containerd and runc, and the
// kubelet's logs, exec and port-forward, cluster DNS, Services through kube-proxy, OOM kills,
// crash loops and missing Secrets behave as on any cluster; nothing lands on the node without
// its toleration, and pods have no route off the machine.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { clusterStatus } from "../../src/localcluster/launcher.js";
import { REAL_NODES_SUPERNET, SERVICE_CIDR, cidrsOverlap } from "../../src/localcluster/network.js";
import { NODE_KIND_LABEL, REAL_NODE_KIND, REAL_NODE_TAINT } from "../../src/localcluster/node-kind.js";
import { clusterStateDir, createTestNamespace, eventually } from "../support/cluster.js";
import {
  busybox,
  coreApi,
  createPod,
  execIn,
  kubectl,
  kubectlSpawn,
  loadImages,
  onRealNode,
  readPod,
  realNodes,
  waitContainer,
  waitRunning,
} from "./support.js";

let ns = "";

beforeAll(async () => {
  realNodes();
  await loadImages(["busybox"]);
  ns = await createTestNamespace("real-node");
});

/** A pod that only sleeps, to run commands in. */
async function client(name: string): Promise<void> {
  await createPod(
    ns,
    name,
    onRealNode({ containers: [busybox("sh", "exec sleep 3600")], terminationGracePeriodSeconds: 0 }),
  );
  await waitRunning(ns, name);
}

describe("a real node", () => {
  it("is Ready on containerd, labelled and tainted as a real node", async () => {
    const [name] = realNodes();
    const node = await coreApi().readNode({ name: name ?? "" });
    expect(node.metadata?.labels?.[NODE_KIND_LABEL]).toBe(REAL_NODE_KIND);
    expect(node.spec?.taints).toContainEqual(expect.objectContaining(REAL_NODE_TAINT));
    expect(node.status?.nodeInfo?.containerRuntimeVersion).toMatch(/^containerd:\/\/2\./);
    expect(node.status?.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");
  });

  it("runs a pod whose logs, exec and port-forward work, and whose address the host reaches", async () => {
    const script =
      'echo "started on $(hostname)"; mkdir -p /www && echo hello-from-real-pod > /www/index.html && exec httpd -f -p 8080 -h /www';
    await createPod(
      ns,
      "web",
      onRealNode({
        hostname: "web-0",
        subdomain: "members",
        containers: [busybox("web", script)],
        terminationGracePeriodSeconds: 0,
      }),
      { app: "web" },
    );
    const pod = await waitRunning(ns, "web");

    const logs = await kubectl(["logs", "-n", ns, "web"]);
    expect(logs.stdout).toContain("started on web-0");

    const cat = await execIn(ns, "web", ["cat", "/www/index.html"]);
    expect(cat.stdout.trim()).toBe("hello-from-real-pod");
    expect((await execIn(ns, "web", ["sh", "-c", "exit 3"])).code).toBe(3);

    const forward = kubectlSpawn(["port-forward", "-n", ns, "pod/web", ":8080"]);
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let out = "";
        forward.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          const match = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(out);
          if (match) resolve(Number(match[1]));
        });
        forward.on("exit", (code) => reject(new Error(`port-forward exited ${code}: ${out}`)));
      });
      const res = await fetch(`http://127.0.0.1:${port}/`);
      expect((await res.text()).trim()).toBe("hello-from-real-pod");
    } finally {
      forward.kill();
    }

    // The host routes to pod addresses (the operator and the tests connect to pods directly).
    const direct = await fetch(`http://${pod.status?.podIP}:8080/`);
    expect((await direct.text()).trim()).toBe("hello-from-real-pod");
  });

  it("resolves Service and pod names through cluster DNS and reaches a pod through a ClusterIP Service", async () => {
    const core = coreApi();
    const service = await core.createNamespacedService({
      namespace: ns,
      body: {
        metadata: { name: "web" },
        spec: { selector: { app: "web" }, ports: [{ port: 80, targetPort: 8080 }] },
      },
    });
    await core.createNamespacedService({
      namespace: ns,
      body: {
        metadata: { name: "members" },
        spec: { clusterIP: "None", selector: { app: "web" }, ports: [{ port: 8080 }] },
      },
    });
    await client("dns-client");
    const podIP = (await readPod(ns, "web")).status?.podIP ?? "";

    const lookup = async (name: string, want: string): Promise<void> => {
      await eventually(
        `${name} resolves to ${want}`,
        async () => {
          const res = await execIn(ns, "dns-client", ["nslookup", name]);
          return res.code === 0 && res.stdout.includes(want) ? true : undefined;
        },
        60_000,
        1000,
      );
    };
    await lookup(`web.${ns}.svc.cluster.local`, service.spec?.clusterIP ?? "no cluster IP");
    await lookup(`web-0.members.${ns}.svc.cluster.local`, podIP);
    await lookup(`${podIP.replace(/\./g, "-")}.${ns}.pod.cluster.local`, podIP);

    // The short name through the pod's search domains, then kube-proxy's rules to the pod.
    const body = await eventually(
      "the Service answers",
      async () => {
        const res = await execIn(ns, "dns-client", ["timeout", "5", "wget", "-q", "-O", "-", "http://web/"]);
        return res.code === 0 ? res.stdout : undefined;
      },
      60_000,
      1000,
    );
    expect(body.trim()).toBe("hello-from-real-pod");
  });

  it("has a container past its memory limit OOM-killed by the kernel, reported OOMKilled with exit 137", async () => {
    // dd is the container's main process (exec): its kill is the container's exit.
    const hog = busybox("hog", "exec dd if=/dev/zero of=/dev/null bs=256M count=1", {
      resources: { limits: { memory: "32Mi" }, requests: { memory: "32Mi" } },
    });
    await createPod(ns, "oom", onRealNode({ restartPolicy: "Never", containers: [hog] }));
    const status = await waitContainer(ns, "oom", "terminated", (s) => s.state?.terminated !== undefined);
    expect(status.state?.terminated?.reason).toBe("OOMKilled");
    expect(status.state?.terminated?.exitCode).toBe(137);
  });

  it("reports a container that exits 1 as CrashLoopBackOff", async () => {
    await createPod(ns, "crash", onRealNode({ containers: [busybox("crash", "echo failing; exit 1")] }));
    const status = await waitContainer(
      ns,
      "crash",
      "CrashLoopBackOff",
      (s) => s.state?.waiting?.reason === "CrashLoopBackOff",
    );
    expect(status.lastState?.terminated?.exitCode).toBe(1);
    expect(status.restartCount).toBeGreaterThanOrEqual(1);
  });

  it("reports a missing Secret as CreateContainerConfigError", async () => {
    const container = busybox("needs-secret", "echo never", {
      env: [{ name: "PASSWORD", valueFrom: { secretKeyRef: { name: "absent-secret", key: "password" } } }],
    });
    await createPod(ns, "no-secret", onRealNode({ containers: [container] }));
    // Under load the kubelet's first try can end on its own Secret cache ("failed to sync secret
    // cache: timed out waiting for the condition"); its next try names the Secret.
    const status = await waitContainer(
      ns,
      "no-secret",
      "CreateContainerConfigError naming the Secret",
      (s) =>
        s.state?.waiting?.reason === "CreateContainerConfigError" &&
        (s.state.waiting.message ?? "").includes("absent-secret"),
    );
    expect(status.state?.waiting?.message).toMatch(/secrets? "absent-secret" not found/);
  });

  it("places nothing on the real node without its toleration", async () => {
    await coreApi().createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: "no-toleration" },
        spec: { nodeSelector: { [NODE_KIND_LABEL]: REAL_NODE_KIND }, containers: [busybox("c", "sleep 1")] },
      },
    });
    const condition = await eventually("the scheduler's verdict", async () => {
      const pod = await readPod(ns, "no-toleration");
      return pod.status?.conditions?.find((c) => c.type === "PodScheduled" && c.status === "False");
    });
    expect(condition.reason).toBe("Unschedulable");
    // The scheduler's words: the real node (the only one the selector matches) has a taint the pod
    // does not tolerate.
    expect(condition.message).toMatch(/untolerated taint/);
    expect((await readPod(ns, "no-toleration")).spec?.nodeName).toBeUndefined();

    // Every pod the real nodes run, in any namespace, tolerates the taint.
    const pods = await coreApi().listPodForAllNamespaces({
      fieldSelector: `spec.nodeName=${realNodes()[0]}`,
    });
    expect(pods.items.length).toBeGreaterThan(0);
    for (const pod of pods.items) {
      expect(
        pod.spec?.tolerations?.some((t) => t.key === REAL_NODE_TAINT.key),
        pod.metadata?.name,
      ).toBe(true);
    }
  });

  it("gives pods no route off the machine", async () => {
    await client("route-client");
    const routes = (await execIn(ns, "route-client", ["ip", "-4", "route"])).stdout.trim().split("\n");
    expect(routes.some((line) => line.startsWith("default"))).toBe(false);
    for (const line of routes) {
      const dst = line.split(" ")[0] ?? "";
      const inCluster = cidrsOverlap(dst, REAL_NODES_SUPERNET) || cidrsOverlap(dst, SERVICE_CIDR);
      expect(inCluster, `route ${line}`).toBe(true);
    }

    // The host's own gateway: the route lookup fails in the pod and in the node's namespace, so
    // a connection fails at once, before any packet is sent.
    const gateway = /default via (\S+)/.exec(
      execFileSync("ip", ["-4", "route", "show", "default"]).toString(),
    )?.[1];
    expect(gateway).toBeDefined();
    // (busybox's `wget -T` and `ip route get` crash on Debian's static build: nc says it.)
    const connect = await execIn(ns, "route-client", ["nc", "-w", "2", gateway ?? "", "80"]);
    expect(connect.code).not.toBe(0);
    expect(connect.stderr).toMatch(/network is unreachable/i);

    const status = await clusterStatus({ stateDir: clusterStateDir() });
    for (const node of status.realNodes) {
      const lookup = spawnSyncText("nsenter", [
        `--net=/run/netns/${node.netns}`,
        "--",
        "ip",
        "route",
        "get",
        gateway ?? "",
      ]);
      expect(lookup.toLowerCase()).toContain("unreachable");
    }
    // The host routes to the pods but never for them.
    expect(readFileSync("/proc/sys/net/ipv4/ip_forward", "utf8").trim()).toBe("0");
  });
});

function spawnSyncText(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { stdio: ["ignore", "pipe", "pipe"] }).toString();
  } catch (err) {
    return (err as { stderr?: Buffer }).stderr?.toString() ?? String(err);
  }
}
