// The operator as a detached background process of a local cluster, for the demo: started with
// the cluster's admin kubeconfig, logging to <state>/logs/onto-operator.log (audit lines to
// onto-operator-audit.log), recorded in <state>/run/ beside the control-plane processes, so
// `onto cluster down` stops it with them and `onto cluster status` could list it. Reused when it
// is already running.
import { request } from "node:http";
import { join } from "node:path";
import { freePort } from "./launcher.js";
import { isAlive, logTail, readRecord, startProcess, stopProcess, type ProcessRecord } from "./processes.js";
import { PACKAGE_ROOT } from "./package-root.js";

export const OPERATOR_PROCESS = "onto-operator";

/** The `onto` entry point (bin/onto.js runs the compiled CLI, or the sources through tsx). */
const ONTO_BIN = join(PACKAGE_ROOT, "bin", "onto.js");

export interface OperatorProcess {
  record: ProcessRecord;
  /** False when a running operator was found and reused. */
  started: boolean;
  logFile: string;
  auditLog: string;
  metricsUrl: string;
  healthUrl: string;
}

function httpStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(0));
    req.end();
  });
}

function flag(record: ProcessRecord, name: string): string | undefined {
  const i = record.args.indexOf(name);
  return i >= 0 ? record.args[i + 1] : undefined;
}

function describe(stateDir: string, record: ProcessRecord, started: boolean): OperatorProcess {
  const metricsPort = flag(record, "--metrics-port") ?? "?";
  const healthPort = flag(record, "--health-port") ?? "?";
  return {
    record,
    started,
    logFile: record.logFile,
    auditLog: flag(record, "--audit-log") ?? join(stateDir, "logs", `${OPERATOR_PROCESS}-audit.log`),
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    healthUrl: `http://127.0.0.1:${healthPort}/readyz`,
  };
}

/**
 * Starts the operator for the cluster in `stateDir` (or finds it running) and waits until its
 * /readyz passes (caches synced). Throws with the log's last lines when it exits or times out.
 */
export async function ensureOperatorProcess(opts: {
  stateDir: string;
  kubeconfig: string;
  /** Watch only these namespaces (default: all). */
  namespaces?: string[];
  timeoutMs?: number;
}): Promise<OperatorProcess> {
  const existing = readRecord(opts.stateDir, OPERATOR_PROCESS);
  if (existing && isAlive(existing) && flag(existing, "--kubeconfig") === opts.kubeconfig)
    return describe(opts.stateDir, existing, false);
  if (existing) await stopProcess(opts.stateDir, existing);

  const auditLog = join(opts.stateDir, "logs", `${OPERATOR_PROCESS}-audit.log`);
  const record = startProcess(opts.stateDir, OPERATOR_PROCESS, process.execPath, [
    ONTO_BIN,
    "operator",
    "--kubeconfig",
    opts.kubeconfig,
    "--metrics-port",
    String(await freePort()),
    "--health-port",
    String(await freePort()),
    "--audit-log",
    auditLog,
    ...(opts.namespaces?.length ? ["--namespaces", opts.namespaces.join(",")] : []),
  ]);
  const running = describe(opts.stateDir, record, true);
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (;;) {
    if (!isAlive(record))
      throw new Error(
        `the operator exited while starting; last lines of ${record.logFile}:\n${logTail(record)}`,
      );
    if ((await httpStatus(running.healthUrl)) === 200) return running;
    if (Date.now() > deadline)
      throw new Error(
        `the operator did not become ready; last lines of ${record.logFile}:\n${logTail(record)}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Stops the cluster's background operator, if one runs. */
export async function stopOperatorProcess(stateDir: string): Promise<boolean> {
  const record = readRecord(stateDir, OPERATOR_PROCESS);
  if (!record) return false;
  await stopProcess(stateDir, record);
  return true;
}
