// Starts one real local control plane (etcd, kube-apiserver, controller-manager, scheduler,
// KWOK) for the whole `cluster` test project and stops it afterwards. Tests reach it through
// test/support/cluster.ts, never by starting their own.
import type { TestProject } from "vitest/node";
import { clusterDown, clusterUp } from "../../src/localcluster/launcher.js";
import { testStateDir } from "./state-dir.js";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const stateDir = testStateDir();
  const info = await clusterUp({ stateDir, progress: (line) => console.log(`[cluster] ${line}`) });
  project.provide("kubeconfig", info.kubeconfigPath);
  project.provide("clusterStateDir", stateDir);
  return async () => {
    if (process.env.ONTO_KEEP_CLUSTER === "1") return;
    await clusterDown({ stateDir });
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    kubeconfig: string;
    clusterStateDir: string;
  }
}
