// One operator process for upgrade-crash.test.ts: runOperator (the test releases are OntoRelease
// objects the test applied), audit lines appended to $AUDIT_LOG. The test SIGKILLs it at chosen
// points of an upgrade and starts another.
import { runOperator } from "../../src/controllers/operator.js";
import { createLogger, silentLogger } from "../../src/runtime/index.js";

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`upgrade-operator.child: ${name} is not set`);
  return value;
};

await runOperator({
  kubeconfig: env("KUBECONFIG_PATH"),
  namespaces: [env("NAMESPACE")],
  auditLog: env("AUDIT_LOG"),
  // OPERATOR_LOG_FILE: the operator's own log lines go to that file (level LOG_LEVEL, default debug).
  logger: process.env.OPERATOR_LOG_FILE
    ? createLogger({ level: process.env.LOG_LEVEL ?? "debug", destination: process.env.OPERATOR_LOG_FILE })
    : silentLogger,
  metricsPort: 0,
  healthPort: 0,
  discoveryIntervalMs: 5_000,
});
process.stdout.write("started\n");
