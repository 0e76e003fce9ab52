// `onto operator`: runs the operator in the foreground (kubeconfig from --kubeconfig, KUBECONFIG,
// ~/.kube/config, or the in-cluster service account), until SIGTERM or SIGINT.
import { Command, Option } from "commander";
import { summaryOf } from "./catalog.js";
import { DISCOVERY_INTERVAL_MS, runOperator } from "../../controllers/index.js";

interface OperatorFlags {
  kubeconfig?: string;
  namespaces?: string;
  leaderElect: boolean;
  leaderElectionNamespace: string;
  leaderElectionId?: string;
  metricsPort: number;
  healthPort: number;
  auditLog?: string;
  logLevel: string;
  concurrency: number;
  discoveryInterval: number;
  maxRestartingPlatforms: number;
}

const int = (v: string): number => {
  const n = Number.parseInt(v, 10);
  if (!Number.isInteger(n) || n < 0) throw new Error(`not a non-negative integer: ${v}`);
  return n;
};

export function operatorCommand(): Command {
  return new Command("operator")
    .description(summaryOf("operator"))
    .option("--kubeconfig <path>", "kubeconfig file (default: KUBECONFIG, ~/.kube/config, or in-cluster)")
    .addOption(
      new Option("--namespaces <list>", "comma-separated namespaces to watch (default: all)").env(
        "WATCH_NAMESPACES",
      ),
    )
    .option("--leader-elect", "campaign for a Lease so only one replica reconciles", false)
    .addOption(
      new Option("--leader-election-namespace <ns>", "namespace of the leader Lease")
        .env("POD_NAMESPACE")
        .default("onto-system"),
    )
    .option(
      "--leader-election-id <identity>",
      "this replica's identity in the Lease (default: hostname + random)",
    )
    .option("--metrics-port <port>", "port of /metrics (0: any free port)", int, 8080)
    .option("--health-port <port>", "port of /healthz and /readyz (0: any free port)", int, 8081)
    .addOption(
      new Option("--audit-log <file>", "audit log file, one JSON line per action ('-': stdout)").env(
        "ONTO_AUDIT_LOG",
      ),
    )
    .addOption(
      new Option("--log-level <level>", "trace, debug, info, warn, error").env("LOG_LEVEL").default("info"),
    )
    .option("--concurrency <n>", "platforms reconciled at once", int, 2)
    .option(
      "--discovery-interval <seconds>",
      "how often optional APIs (ServiceMonitor, VerticalPodAutoscaler, custom metrics) are looked for again",
      (v: string) => {
        const n = int(v);
        if (n < 1) throw new Error(`--discovery-interval must be at least 1 second, got ${v}`);
        return n;
      },
      DISCOVERY_INTERVAL_MS / 1000,
    )
    .option(
      "--max-restarting-platforms <n>",
      "fleet limit: at most this many platforms restart pods at once; the others' pod restarts (config and resources rolls, the OOM memory raise, approved operator-side changes, an upgrade's start) wait, a crash-looping workload's fix does not (0: no limit)",
      int,
      0,
    )
    .action(async (flags: OperatorFlags) => {
      const operator = await runOperator({
        kubeconfig: flags.kubeconfig,
        namespaces: flags.namespaces
          ?.split(",")
          .map((s) => s.trim())
          .filter(Boolean),
        leaderElection: flags.leaderElect
          ? {
              namespace: flags.leaderElectionNamespace,
              ...(flags.leaderElectionId ? { identity: flags.leaderElectionId } : {}),
            }
          : undefined,
        metricsPort: flags.metricsPort,
        healthPort: flags.healthPort,
        auditLog: flags.auditLog,
        logLevel: flags.logLevel,
        concurrency: flags.concurrency,
        discoveryIntervalMs: flags.discoveryInterval * 1000,
        maxRestartingPlatforms: flags.maxRestartingPlatforms,
      });
      operator.manager.handleSignals();
    });
}
