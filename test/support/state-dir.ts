import { homedir } from "node:os";
import { join } from "node:path";

/** Where the test control plane keeps its state: apart from the demo cluster's, so both can coexist. */
export function testStateDir(): string {
  return process.env.ONTO_TEST_STATE_DIR ?? join(homedir(), ".cache", "onto-operator", "test-cluster");
}
