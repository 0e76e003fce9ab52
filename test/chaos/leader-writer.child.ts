// A replica for the leader chaos cases: a Manager with leader election whose one controller
// writes as fast as it can while it leads (a ConfigMap annotated with this replica's identity and
// a sequence number, re-applied every 20 ms), so that a write by a replica that lost its lease
// is seen by the API server if the runtime lets one through. JSON log lines on stdout.
import { KubeClient, loadKubeConfig } from "../../src/kube/index.js";
import { Manager, createLogger } from "../../src/runtime/index.js";

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`leader-writer.child: ${name} is not set`);
  return value;
};
const namespace = env("NAMESPACE");
const identity = env("IDENTITY");
const client = new KubeClient(loadKubeConfig({ path: env("KUBECONFIG_PATH") }));
const logger = createLogger({ level: "info", name: identity });
const manager = new Manager({
  client,
  logger,
  leaderElection: {
    namespace,
    name: "chaos-leader",
    identity,
    leaseDurationMs: Number(env("LEASE_MS")),
    renewDeadlineMs: Number(env("RENEW_MS")),
    retryPeriodMs: Number(env("RETRY_MS")),
  },
  shutdownTimeoutMs: 5_000,
  processMetrics: false,
});
let seq = 0;
manager.addController({
  name: "leader-writer",
  for: { apiVersion: "v1", kind: "ConfigMap", namespace, labelSelector: "chaos=leader" },
  resyncPeriodMs: 0,
  reconciler: async ({ name }) => {
    const n = ++seq;
    try {
      await client.apply({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name,
          namespace,
          labels: { chaos: "leader" },
          annotations: { writer: identity, seq: String(n) },
        },
      });
      logger.info({ seq: n }, "write accepted");
    } catch (err) {
      logger.info({ seq: n, error: err instanceof Error ? err.message : String(err) }, "write refused");
    }
    return { requeueAfterMs: 20 };
  },
});
manager.handleSignals();
await manager.start();
