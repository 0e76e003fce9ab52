// What a test on the real node needs: kubectl of the cluster's version, pods placed on the real
// node, and the locally built images loaded into it. Tests run in namespaces of their own
// (createTestNamespace), one file at a time.
import { execFile, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import * as k8s from "@kubernetes/client-node";
import { inject } from "vitest";
import { ensureImages, IMAGE_REFS, type ImageName } from "../../src/localcluster/images/index.js";
import { REAL_NODE_SELECTOR, REAL_NODE_TOLERATION } from "../../src/localcluster/node-kind.js";
import { adminKubeConfig, clusterStateDir, eventually, kubeconfigPath } from "../support/cluster.js";

export { IMAGE_REFS };

/** Builds (first time only) and loads the images into the real nodes; call it in beforeAll. */
export async function loadImages(names: readonly ImageName[]): Promise<void> {
  await ensureImages(names, {
    stateDir: clusterStateDir(),
    progress: (line) => console.log(`[images] ${line}`),
  });
}

/** The real nodes of the test cluster; fails the test when it was started without one. */
export function realNodes(): string[] {
  const nodes = inject("realNodes");
  if (nodes.length === 0) throw new Error("the test cluster has no real node (ONTO_TEST_REAL_NODES=0?)");
  return nodes;
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs kubectl against the test cluster; resolves with its exit code and output (never rejects on exit code). */
export function kubectl(args: string[], opts: { input?: string; timeoutMs?: number } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      inject("k8sBinary"),
      ["kubectl", `--kubeconfig=${kubeconfigPath()}`, ...args],
      { timeout: opts.timeoutMs ?? 60_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        // A number is kubectl's exit code; anything else (ENOENT, a timeout) is a failure to run it.
        if (err && typeof err.code !== "number")
          reject(new Error(`kubectl ${args.join(" ")}: ${err.message}`));
        else
          resolve({ code: err ? Number(err.code) : 0, stdout: stdout.toString(), stderr: stderr.toString() });
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** Starts a long-running kubectl (e.g. port-forward); the caller kills it. */
export function kubectlSpawn(args: string[]): ChildProcessWithoutNullStreams {
  return spawn(inject("k8sBinary"), ["kubectl", `--kubeconfig=${kubeconfigPath()}`, ...args]);
}

/** `kubectl exec` in a pod's first container; resolves with the result whatever the exit code. */
export function execIn(namespace: string, pod: string, command: string[]): Promise<Run> {
  return kubectl(["exec", "-n", namespace, pod, "--", ...command]);
}

export function coreApi(): k8s.CoreV1Api {
  return adminKubeConfig().makeApiClient(k8s.CoreV1Api);
}

/** A pod spec placed on the real node (node selector and toleration of node-kind.ts). */
export function onRealNode(spec: k8s.V1PodSpec): k8s.V1PodSpec {
  return {
    ...spec,
    nodeSelector: { ...REAL_NODE_SELECTOR, ...spec.nodeSelector },
    tolerations: [...(spec.tolerations ?? []), { ...REAL_NODE_TOLERATION }],
  };
}

/** A busybox container running `script` with sh. */
export function busybox(name: string, script: string, extra: Partial<k8s.V1Container> = {}): k8s.V1Container {
  return {
    name,
    image: IMAGE_REFS.busybox,
    imagePullPolicy: "Never",
    command: ["sh", "-c", script],
    ...extra,
  };
}

export async function createPod(
  namespace: string,
  name: string,
  spec: k8s.V1PodSpec,
  labels: Record<string, string> = {},
): Promise<k8s.V1Pod> {
  return coreApi().createNamespacedPod({ namespace, body: { metadata: { name, labels }, spec } });
}

export async function readPod(namespace: string, name: string): Promise<k8s.V1Pod> {
  return coreApi().readNamespacedPod({ namespace, name });
}

/** Waits until the pod is Running and Ready; returns it. */
export async function waitRunning(namespace: string, name: string, timeoutMs = 120_000): Promise<k8s.V1Pod> {
  return eventually(
    `pod ${namespace}/${name} Running and Ready`,
    async () => {
      const pod = await readPod(namespace, name);
      const ready = pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
      return pod.status?.phase === "Running" && ready ? pod : undefined;
    },
    timeoutMs,
    500,
  );
}

/** Waits until `check` holds for the pod's first container status; returns that status. */
export async function waitContainer(
  namespace: string,
  name: string,
  what: string,
  check: (status: k8s.V1ContainerStatus) => boolean,
  timeoutMs = 120_000,
): Promise<k8s.V1ContainerStatus> {
  return eventually(
    `${namespace}/${name}: ${what}`,
    async () => {
      const status = (await readPod(namespace, name)).status?.containerStatuses?.[0];
      return status && check(status) ? status : undefined;
    },
    timeoutMs,
    500,
  );
}
