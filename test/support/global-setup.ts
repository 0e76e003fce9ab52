// Starts one real local control plane (etcd, kube-apiserver, controller-manager, scheduler,
// KWOK) with one real node (kubelet, containerd, kube-proxy, CoreDNS) for the `cluster` and
// `real` test projects and stops it afterwards. Tests reach it through test/support/cluster.ts,
// never by starting their own. The real node is tainted, so the `cluster` tests, which never
// tolerate it, keep running on KWOK nodes only.
//
// Every cluster project names this file (or global-setup-two-nodes.ts, a cluster of its own with
// two real nodes); vitest runs it once per project in the same process, so a cluster is shared
// through a counter on globalThis per state directory (one start, stopped by the last teardown).
// `npm test` (scripts/test-all.ts) runs several vitest processes on one cluster: it starts the
// cluster first and sets ONTO_KEEP_CLUSTER=1, so each process reuses it and none stops it.
import type { TestProject } from "vitest/node";
import { clusterDown, clusterUp, type ClusterInfo } from "../../src/localcluster/launcher.js";
import { testRealNodes, testStateDir } from "./state-dir.js";

interface Shared {
  users: number;
  started?: Promise<ClusterInfo> | undefined;
}

const key = Symbol.for("onto-operator.test-clusters");
const registry = globalThis as unknown as Record<symbol, Map<string, Shared> | undefined>;

/** Starts (or joins) the cluster kept in `stateDir` for `project`; resolves to its teardown. */
export async function provideCluster(
  project: TestProject,
  stateDir: string,
  realNodes: number,
): Promise<() => Promise<void>> {
  const clusters = (registry[key] ??= new Map<string, Shared>());
  const shared = clusters.get(stateDir) ?? { users: 0 };
  clusters.set(stateDir, shared);
  shared.users++;
  shared.started ??= clusterUp({
    stateDir,
    realNodes,
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

export default function setup(project: TestProject): Promise<() => Promise<void>> {
  return provideCluster(project, testStateDir(), testRealNodes());
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
