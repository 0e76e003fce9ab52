// One operator process for upgrade-crash.test.ts: runOperator with the test releases, audit lines
// appended to $AUDIT_LOG. The test SIGKILLs it at chosen points of an upgrade and starts another.
import { runOperator } from "../../src/controllers/operator.js";
import { silentLogger } from "../../src/runtime/index.js";
import { TEST_RELEASES } from "./upgrade-releases.js";

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`upgrade-operator.child: ${name} is not set`);
  return value;
};

await runOperator({
  kubeconfig: env("KUBECONFIG_PATH"),
  namespaces: [env("NAMESPACE")],
  auditLog: env("AUDIT_LOG"),
  logger: silentLogger,
  metricsPort: 0,
  healthPort: 0,
  discoveryIntervalMs: 5_000,
  releases: TEST_RELEASES,
});
process.stdout.write("started\n");
