// One operator process for the leader-election cluster test: a manager with leader election on a
// Lease in $NAMESPACE and a controller that only logs its reconciles (JSON lines on stdout, read by
// runtime-leader.test.ts). SIGTERM stops it gracefully; the test also SIGKILLs it.
import { KubeClient, loadKubeConfig } from "../../src/kube/index.js";
import { Manager, createLogger } from "../../src/runtime/index.js";

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`runtime-leader.child: ${name} is not set`);
  return value;
};
const namespace = env("NAMESPACE");
const manager = new Manager({
  client: new KubeClient(loadKubeConfig({ path: env("KUBECONFIG_PATH") })),
  logger: createLogger({ level: "info", name: env("IDENTITY") }),
  leaderElection: {
    namespace,
    name: "runtime-test",
    identity: env("IDENTITY"),
    leaseDurationMs: Number(env("LEASE_MS")),
    renewDeadlineMs: Number(env("RENEW_MS")),
    retryPeriodMs: Number(env("RETRY_MS")),
  },
  shutdownTimeoutMs: 5_000,
  processMetrics: false,
});
manager.addController({
  name: "leader-test",
  for: { apiVersion: "v1", kind: "ConfigMap", namespace, labelSelector: "test=leader" },
  reconciler: async () => undefined,
});
manager.handleSignals();
await manager.start();
