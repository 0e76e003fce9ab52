// What a cluster test needs from the shared control plane: an admin KubeConfig, typed API
// clients, and a namespace of its own that is deleted when the file's tests end.
import * as k8s from "@kubernetes/client-node";
import { afterAll, inject } from "vitest";

/** Path of the admin kubeconfig of the control plane global-setup started. */
export function kubeconfigPath(): string {
  return inject("kubeconfig");
}

/** State folder of the test control plane (logs, PKI, KWOK config). */
export function clusterStateDir(): string {
  return inject("clusterStateDir");
}

export function adminKubeConfig(): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath());
  return kc;
}

let counter = 0;
const created = new Set<string>();

// Registered when a test file imports this module (during collection): hooks added later, from
// inside a running beforeAll, would be ignored by vitest.
afterAll(async () => {
  const core = adminKubeConfig().makeApiClient(k8s.CoreV1Api);
  await Promise.all([...created].map((name) => core.deleteNamespace({ name }).catch(() => undefined)));
  created.clear();
});

/** A namespace name of this file's own: `prefix` plus a suffix unique to the run. */
export function testNamespaceName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}`.slice(0, 63);
}

/**
 * Creates a namespace named after `prefix` plus a random suffix (or exactly `name` when given);
 * it is deleted after all tests of the calling file. Labels let a test select it.
 */
export async function createTestNamespace(
  prefix: string,
  labels: Record<string, string> = {},
  name = testNamespaceName(prefix),
): Promise<string> {
  const core = adminKubeConfig().makeApiClient(k8s.CoreV1Api);
  await core.createNamespace({
    body: { metadata: { name, labels: { "onto.paas/test": "true", ...labels } } },
  });
  created.add(name);
  return name;
}

/** Polls `check` until it returns a value other than undefined, or fails with `what` after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 60_000,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const detail = lastError instanceof Error ? `: last error ${lastError.message}` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
