import { homedir } from "node:os";
import { join } from "node:path";

/** Where the test control plane keeps its state: apart from the demo cluster's, so both can coexist. */
export function testStateDir(): string {
  return process.env.ONTO_TEST_STATE_DIR ?? join(homedir(), ".cache", "onto-operator", "test-cluster");
}

/** Real nodes of the test cluster (ONTO_TEST_REAL_NODES overrides; 0 runs without them). */
export function testRealNodes(): number {
  const value = Number.parseInt(process.env.ONTO_TEST_REAL_NODES ?? "1", 10);
  return Number.isNaN(value) ? 1 : value;
}

/** Where the two-real-node cluster of the `real-two-nodes` project keeps its state. */
export function twoNodesStateDir(): string {
  return `${testStateDir()}-two-nodes`;
}
