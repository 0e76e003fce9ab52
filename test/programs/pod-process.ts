// Runs a rendered pod's container as a plain process on loopback, with the real program, so the
// scripts the operator renders are exercised before (and besides) a real node: the container's
// command, env (Secret references resolved from the rendered Secrets), volume mounts and exec
// probes are taken from `onto render`'s objects, and a small table translates the pod's world
// into the process's (mount paths -> folders, pod DNS names -> loopback addresses, listen
// addresses). The kubelet's fsGroup pass over a volume can be replayed before a start.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chownSync, createWriteStream, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import type { RenderedObject } from "../../src/render/index.js";

// The kubelet gives every container the API server's address (KUBERNETES_SERVICE_HOST and _PORT).
// The scripts only open a TCP connection to it, to tell a member cut off by a partition from one
// whose peers are down: a listener of this process stands in for it. Connections are accepted by
// the kernel, so it answers while a probe's spawnSync blocks this process.
const apiStandIn = createServer((socket) => socket.destroy());
await new Promise<void>((resolve) => apiStandIn.listen(0, "127.0.0.1", resolve));
apiStandIn.unref();
/** The API server's address as the kubelet gives it to every container, here the stand-in's. */
export const API_SERVER = { host: "127.0.0.1", port: (apiStandIn.address() as AddressInfo).port };

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } };
}
interface ExecProbe {
  exec?: { command: string[] };
}
interface Container {
  name: string;
  command?: string[];
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  env?: EnvVar[];
  volumeMounts?: { name: string; mountPath: string }[];
  readinessProbe?: ExecProbe;
  livenessProbe?: ExecProbe;
  startupProbe?: ExecProbe;
}

/** One text substitution from the pod's world to the process's. Longer `from`s apply first. */
export type Translation = readonly [from: string, to: string];

export interface ProcessUser {
  name: string;
  uid: number;
  gid: number;
}

/** The system user a process runs as (the pod's runAsUser has no name on the host). */
export function systemUser(name: string): ProcessUser {
  const id = (flag: string): number =>
    Number(spawnSync("id", [flag, name], { encoding: "utf8" }).stdout.trim());
  return { name, uid: id("-u"), gid: id("-g") };
}

export function find(objects: RenderedObject[], kind: string, name: string): RenderedObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`render produced no ${kind}/${name}`);
  return found;
}

function containerOf(objects: RenderedObject[], workload: string, container: string): Container {
  const sts = find(objects, "StatefulSet", workload) as {
    spec?: { template?: { spec?: { containers?: Container[] } } };
  };
  const found = sts.spec?.template?.spec?.containers?.find((c) => c.name === container);
  if (!found) throw new Error(`StatefulSet/${workload} has no container ${container}`);
  return found;
}

export function secretValue(objects: RenderedObject[], name: string, key: string): string {
  const data = (find(objects, "Secret", name) as { data?: Record<string, string> }).data ?? {};
  const value = data[key];
  if (value === undefined) throw new Error(`Secret/${name} has no key ${key}`);
  return Buffer.from(value, "base64").toString("utf8");
}

/** Every `from` replaced by its `to` in one pass (a replacement is never translated again). */
export function translate(text: string, table: readonly Translation[]): string {
  if (table.length === 0) return text;
  const sorted = [...table].sort((a, b) => b[0].length - a[0].length);
  const to = new Map(sorted);
  const pattern = new RegExp(
    sorted.map(([from]) => from.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"),
    "g",
  );
  return text.replace(pattern, (match) => to.get(match) ?? match);
}

export interface PodProcessOptions {
  objects: RenderedObject[];
  /** StatefulSet name, e.g. "postgres". */
  workload: string;
  container: string;
  ordinal: number;
  /** Folder of this pod: one sub-folder per volume. */
  dir: string;
  user: ProcessUser;
  /** Pod-world text -> process-world text, beyond the volume mounts (DNS names, listen addresses). */
  translations: readonly Translation[];
  /** Prepended to PATH (where the distribution keeps the program's binaries). */
  binPath?: string;
  /** The API server's address the container is given (API_SERVER by default). */
  apiServer?: { host: string; port: number };
}

/** A container of one StatefulSet pod, run as a process. */
export class PodProcess {
  readonly podName: string;
  readonly logFile: string;
  private readonly env: Record<string, string>;
  private readonly table: Translation[];
  private readonly container: Container;
  private readonly volumeDirs: string[];
  private child: ChildProcess | undefined;
  private exited: Promise<number | null> = Promise.resolve(null);

  constructor(private readonly opts: PodProcessOptions) {
    this.podName = `${opts.workload}-${opts.ordinal}`;
    this.container = containerOf(opts.objects, opts.workload, opts.container);
    mkdirSync(opts.dir, { recursive: true, mode: 0o755 });
    this.logFile = join(opts.dir, `${opts.container}.log`);
    const mounts = (this.container.volumeMounts ?? []).map((m) => {
      const local = join(opts.dir, m.name);
      return { mountPath: m.mountPath, name: m.name, local };
    });
    this.table = [...mounts.map((m): Translation => [m.mountPath, m.local]), ...opts.translations];
    this.volumeDirs = [...new Set(mounts.map((m) => m.local))];
    const scripts = opts.objects.find(
      (o) => o.kind === "ConfigMap" && o.metadata.name === `${opts.workload}-config`,
    ) as { data?: Record<string, string> } | undefined;
    for (const m of mounts) {
      mkdirSync(m.local, { recursive: true });
      chownSync(m.local, opts.user.uid, opts.user.gid);
      // ConfigMap volumes hold the component's scripts and files, translated.
      if (m.name === "scripts" && scripts?.data) {
        for (const [file, text] of Object.entries(scripts.data))
          writeFileSync(join(m.local, file), translate(text, this.table), { mode: 0o755 });
      }
    }
    this.env = {
      PATH: `${opts.binPath ? `${opts.binPath}:` : ""}${process.env.PATH ?? "/usr/bin:/bin"}`,
      HOME: opts.dir,
      HOSTNAME: this.podName,
      LANG: "C.UTF-8",
      KUBERNETES_SERVICE_HOST: (opts.apiServer ?? API_SERVER).host,
      KUBERNETES_SERVICE_PORT: String((opts.apiServer ?? API_SERVER).port),
    };
    for (const e of this.container.env ?? []) {
      const ref = e.valueFrom?.secretKeyRef;
      const field = e.valueFrom?.fieldRef?.fieldPath;
      if (ref) this.env[e.name] = secretValue(opts.objects, ref.name, ref.key);
      else if (field === "metadata.name") this.env[e.name] = this.podName;
      else if (field) throw new Error(`env ${e.name}: fieldRef ${field} is not supported here`);
      // $(VAR) refers to an env var defined before it, as the kubelet expands it.
      else
        this.env[e.name] = translate(
          (e.value ?? "").replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, v: string) => this.env[v] ?? m),
          this.table,
        );
    }
  }

  /** The value of one of the container's env vars, as the process sees it. */
  envValue(name: string): string | undefined {
    return this.env[name];
  }

  /** A volume's folder, e.g. volume("data"). */
  volume(name: string): string {
    return join(this.opts.dir, name);
  }

  /**
   * The kubelet's fsGroup pass (fsGroupChangePolicy Always, the default): every file of the
   * volume group-owned by the pod's group and group-writable, directories setgid.
   */
  fsGroupPass(volume: string): void {
    const dir = this.volume(volume);
    const run = (cmd: string, args: string[]): void => {
      const r = spawnSync(cmd, args, { encoding: "utf8" });
      if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")}: ${r.stderr}`);
    };
    run("chgrp", ["-R", String(this.opts.user.gid), dir]);
    run("chmod", ["-R", "g+rwX", dir]);
    run("find", [dir, "-type", "d", "-exec", "chmod", "g+s", "{}", "+"]);
  }

  /** Starts the container's command (as the kubelet would start the container). */
  start(): void {
    if (this.running) throw new Error(`${this.podName}/${this.opts.container} is already running`);
    const command = this.container.command ?? [];
    if (command.length === 0) throw new Error(`${this.podName}/${this.opts.container} has no command`);
    const log = createWriteStream(this.logFile, { flags: "a" });
    const child = spawn("setpriv", this.asUser(this.fromPod(command)), {
      cwd: this.opts.dir,
      env: this.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.pipe(log);
    child.stderr.pipe(log);
    this.child = child;
    this.exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /**
   * The container stops as on pod deletion: its preStop command first (within the grace period),
   * then SIGTERM to its main process, SIGKILL when the grace period is over.
   */
  async stop(graceMs = 30_000): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    const deadline = Date.now() + graceMs;
    const preStop = this.container.lifecycle?.preStop?.exec?.command;
    if (preStop) await this.runHook(preStop, graceMs);
    child.kill("SIGTERM");
    const timer = setTimeout(() => this.killGroup(), Math.max(0, deadline - Date.now()));
    await this.exited;
    clearTimeout(timer);
    this.killGroup();
  }

  /** Runs a hook's command as the kubelet does (without blocking this process), killed at `timeoutMs`. */
  private async runHook(command: string[], timeoutMs: number): Promise<void> {
    const hook = spawn("setpriv", this.asUser(this.fromPod(command)), {
      cwd: this.opts.dir,
      env: this.env,
      stdio: "ignore",
      timeout: timeoutMs,
    });
    await new Promise((resolve) => hook.once("exit", resolve));
  }

  /** The whole container dies at once (SIGKILL to every process of it). */
  async kill(): Promise<void> {
    if (!this.child) return;
    this.killGroup();
    await this.exited;
  }

  private killGroup(): void {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already gone
    }
  }

  /** Runs one of the container's exec probes; true when it passes. */
  probe(kind: "readinessProbe" | "livenessProbe" | "startupProbe"): boolean {
    const command = this.container[kind]?.exec?.command;
    if (!command) throw new Error(`${this.podName}/${this.opts.container} has no exec ${kind}`);
    const r = spawnSync("setpriv", this.asUser(this.fromPod(command)), {
      cwd: this.opts.dir,
      env: this.env,
      timeout: 10_000,
    });
    return r.status === 0;
  }

  /** Runs a command in the container's environment (like kubectl exec); returns stdout. */
  exec(command: string[]): string {
    const r = spawnSync("setpriv", this.asUser(command), {
      cwd: this.opts.dir,
      env: this.env,
      encoding: "utf8",
      timeout: 30_000,
    });
    if (r.status !== 0) throw new Error(`${command.join(" ")} in ${this.podName}: ${r.stderr}`);
    return r.stdout;
  }

  /** The last lines of the container's output. */
  logTail(lines = 20): string {
    try {
      return readFileSync(this.logFile, "utf8").split("\n").slice(-lines).join("\n");
    } catch {
      return "";
    }
  }

  /** setpriv's arguments that run `command` as the pod's user, with no other group. */
  private asUser(command: string[]): string[] {
    return [
      `--reuid=${this.opts.user.uid}`,
      `--regid=${this.opts.user.gid}`,
      "--clear-groups",
      "--",
      ...command,
    ];
  }

  /** A command of the pod spec (container command, probe, hook) in the process's world. */
  private fromPod(command: string[]): string[] {
    return command.map((part) => translate(part, this.table));
  }
}

/** Polls `check` until true (a throw counts as false), or fails naming `what` and the logs of `pods`. */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  pods: PodProcess[] = [],
  intervalMs = 200,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const passes = async (): Promise<boolean> => {
    try {
      return await check();
    } catch {
      return false; // not yet (a server still starting, a row not yet replicated)
    }
  };
  while (!(await passes())) {
    if (Date.now() > deadline) {
      const logs = pods.map((p) => `--- ${p.podName} (${p.logFile})\n${p.logTail()}`).join("\n");
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${logs}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
