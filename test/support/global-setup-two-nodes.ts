// The `real-two-nodes` project's cluster: a control plane of its own with two real nodes, for what
// needs a second machine (a node lost while its pods' peers run elsewhere). Apart from the shared
// test cluster, so the other suites keep their one real node; scripts/test-all.ts starts it beside
// the others and stops it at the end.
import type { TestProject } from "vitest/node";
import { provideCluster } from "./global-setup.js";
import { twoNodesStateDir } from "./state-dir.js";

export default function setup(project: TestProject): Promise<() => Promise<void>> {
  return provideCluster(project, twoNodesStateDir(), 2);
}
