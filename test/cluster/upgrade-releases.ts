// Test releases for the upgrade cluster tests: versions whose images fail on purpose through the
// KWOK fault stages keyed on the image tag (`-never-ready`, `-crashloop`, `-oom`). They are
// OntoRelease objects in test/releases/upgrade-faults.yaml, applied to the cluster before the
// operator starts; the product's releases never hold such versions.
import type { KubeClient } from "../../src/kube/index.js";
import { applyReleases } from "../support/releases.js";

export const FAULT_RELEASES_FILE = new URL("../releases/upgrade-faults.yaml", import.meta.url).pathname;

export async function applyFaultReleases(client: KubeClient): Promise<void> {
  await applyReleases(client, FAULT_RELEASES_FILE);
}
