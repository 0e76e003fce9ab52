// Starting and stopping the control-plane processes. Each runs detached in its own process
// group (so it outlives `onto cluster up` and a crashed test run can still be cleaned up),
// logs to <state>/logs/<name>.log and leaves <state>/run/<name>.json with its pid and argv.
// Stopping checks /proc/<pid>/cmdline first, so a recycled pid is never signalled.
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
  closeSync,
} from "node:fs";
import { join } from "node:path";

export interface ProcessRecord {
  name: string;
  pid: number;
  command: string;
  args: string[];
  logFile: string;
  startedAt: string;
  /**
   * Program that runs first and then execs `command` (e.g. `nsenter --net=... --`): while it
   * has not exec'd yet, the process counts as alive too.
   */
  prefix?: string[];
  env?: Record<string, string>;
}

export interface StartOptions {
  prefix?: string[];
  /** Variables added to the environment. */
  env?: Record<string, string>;
  /** Called with the pid right after the spawn (e.g. to move the process into a cgroup). */
  onSpawn?: (pid: number) => void;
}

function runDir(stateDir: string): string {
  return join(stateDir, "run");
}

export function startProcess(
  stateDir: string,
  name: string,
  command: string,
  args: string[],
  opts: StartOptions = {},
): ProcessRecord {
  mkdirSync(runDir(stateDir), { recursive: true });
  mkdirSync(join(stateDir, "logs"), { recursive: true });
  const logFile = join(stateDir, "logs", `${name}.log`);
  const fd = openSync(logFile, "a");
  const [program, ...prefixArgs] = opts.prefix ?? [];
  const child = spawn(program ?? command, program ? [...prefixArgs, command, ...args] : args, {
    detached: true,
    stdio: ["ignore", fd, fd],
    cwd: stateDir,
    env: opts.env ? { ...process.env, ...opts.env } : process.env,
  });
  closeSync(fd);
  if (child.pid === undefined) throw new Error(`could not start ${name} (${command})`);
  child.unref();
  opts.onSpawn?.(child.pid);
  const record: ProcessRecord = {
    name,
    pid: child.pid,
    command,
    args,
    logFile,
    startedAt: new Date().toISOString(),
    ...(opts.prefix ? { prefix: opts.prefix } : {}),
    ...(opts.env ? { env: opts.env } : {}),
  };
  writeFileSync(join(runDir(stateDir), `${name}.json`), JSON.stringify(record, null, 2));
  return record;
}

export function readRecord(stateDir: string, name: string): ProcessRecord | undefined {
  const path = join(runDir(stateDir), `${name}.json`);
  if (!existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, "utf8")) as ProcessRecord;
}

export function listRecords(stateDir: string): ProcessRecord[] {
  if (!existsSync(runDir(stateDir))) return [];
  return readdirSync(runDir(stateDir))
    .filter((f) => f.endsWith(".json"))
    .map((f) => JSON.parse(readFileSync(join(runDir(stateDir), f), "utf8")) as ProcessRecord);
}

/** True when the recorded process is still running (and is still the same program). */
export function isAlive(record: ProcessRecord): boolean {
  try {
    const cmdline = readFileSync(`/proc/${record.pid}/cmdline`, "utf8");
    const prefix = record.prefix?.[0];
    // While a process execs (the prefix program turning into the command), its cmdline reads
    // empty for a moment: judge it by its state then.
    const same =
      cmdline === "" || cmdline.startsWith(record.command) || (prefix && cmdline.startsWith(prefix));
    if (!same) return false;
    const stat = readFileSync(`/proc/${record.pid}/stat`, "utf8");
    // Field 3 is the state; a zombie (Z) has exited and only waits to be reaped.
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/** Stops a recorded process: SIGTERM to its group, then SIGKILL after `graceMs`. */
export async function stopProcess(stateDir: string, record: ProcessRecord, graceMs = 10_000): Promise<void> {
  if (isAlive(record)) {
    signalGroup(record.pid, "SIGTERM");
    const deadline = Date.now() + graceMs;
    while (isAlive(record) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (isAlive(record)) {
      signalGroup(record.pid, "SIGKILL");
      while (isAlive(record)) await new Promise((r) => setTimeout(r, 50));
    }
  }
  rmSync(join(runDir(stateDir), `${record.name}.json`), { force: true });
}

/** Last lines of a component's log, for error messages. */
export function logTail(record: ProcessRecord, lines = 20): string {
  try {
    return readFileSync(record.logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}
