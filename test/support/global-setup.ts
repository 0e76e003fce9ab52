// Starts one real local control plane (etcd, kube-apiserver, controller-manager, scheduler,
// KWOK) with one real node (kubelet, containerd, kube-proxy, CoreDNS) for the `cluster` and
// `real` test projects and stops it afterwards. Tests reach it through test/support/cluster.ts,
// never by starting their own. The real node is tainted, so the `cluster` tests, which never
// tolerate it, keep running on KWOK nodes only.
//
// Every cluster project names this file; vitest runs it once per project in the same process, so
// the cluster is shared through a counter on globalThis (one start, stopped by the last teardown).
// `npm test` (scripts/test-all.ts) runs several vitest processes on one cluster: it starts the
// cluster first and sets ONTO_KEEP_CLUSTER=1, so each process reuses it and none stops it.
import type { TestProject } from "vitest/node";
import { clusterDown, clusterUp, type ClusterInfo } from "../../src/localcluster/launcher.js";
import { testRealNodes, testStateDir } from "./state-dir.js";

interface Shared {
  users: number;
  started?: Promise<ClusterInfo>;
}

const key = Symbol.for("onto-operator.test-cluster");
const registry = globalThis as unknown as Record<symbol, Shared | undefined>;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const stateDir = testStateDir();
  const shared = (registry[key] ??= { users: 0 });
  shared.users++;
  shared.started ??= clusterUp({
    stateDir,
    realNodes: testRealNodes(),
    progress: (line) => console.log(`[cluster] ${line}`),
  });
  const info = await shared.started;
  project.provide("kubeconfig", info.kubeconfigPath);
  project.provide("clusterStateDir", stateDir);
  project.provide("k8sBinary", info.k8sBinary);
  project.provide("realNodes", info.realNodes);
  return async () => {
    shared.users--;
    if (shared.users > 0) return;
    shared.started = undefined;
    if (process.env.ONTO_KEEP_CLUSTER === "1") return;
    await clusterDown({ stateDir });
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    kubeconfig: string;
    clusterStateDir: string;
    /** The multi-call binary: `<k8sBinary> kubectl ...` is a kubectl of the cluster's version. */
    k8sBinary: string;
    /** Names of the real nodes (empty when started with ONTO_TEST_REAL_NODES=0). */
    realNodes: string[];
  }
}
