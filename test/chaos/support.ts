// What the chaos cases share: child processes they can SIGKILL, SIGSTOP and SIGCONT (their JSON
// log lines kept with the time they arrived), a record of the API server's own order of writes
// (a watch; resourceVersions of one etcd are its revisions, one sequence over every kind), and
// the result each case reports: what it did, what it found, its figures.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import type { KubeClient, KubeObject } from "../../src/kube/index.js";

export interface Line {
  at: number;
  msg: string;
  [field: string]: unknown;
}

export interface Child {
  name: string;
  process: ChildProcess;
  lines: Line[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive(): boolean;
}

const children: Child[] = [];

/** Starts `script` (TypeScript, through tsx) with `env`; stderr is echoed with the name. */
export function startChild(name: string, script: string, env: Record<string, string>): Child {
  const proc = spawn(process.execPath, ["--import", "tsx", script], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let done = false;
  const child: Child = {
    name,
    process: proc,
    lines: [],
    exited: new Promise((resolve) =>
      proc.on("exit", (code, signal) => {
        done = true;
        resolve({ code, signal });
      }),
    ),
    alive: () => !done,
  };
  createInterface(proc.stdout).on("line", (text) => {
    try {
      child.lines.push({ ...(JSON.parse(text) as Line), at: performance.now() });
    } catch {
      child.lines.push({ at: performance.now(), msg: text });
    }
  });
  proc.stderr.on("data", (d: Buffer) => process.stderr.write(`[${name}] ${d.toString()}`));
  children.push(child);
  return child;
}

/** SIGKILLs every child still running (afterAll). */
export async function killAll(): Promise<void> {
  for (const c of children.splice(0)) {
    if (!c.alive()) continue;
    c.process.kill("SIGCONT");
    c.process.kill("SIGKILL");
    await c.exited;
  }
}

export function lineAt(child: Child, msg: string, after = 0): number | undefined {
  return child.lines.find((l) => l.msg === msg && l.at >= after)?.at;
}

export function count(child: Child, msg: string, after = 0): number {
  return child.lines.filter((l) => l.msg === msg && l.at >= after).length;
}

export async function waitFor<T>(
  what: string,
  check: () => T | undefined,
  timeoutMs: number,
  stepMs = 20,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (performance.now() > deadline)
      throw new Error(`chaos: timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(stepMs);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface ServerEvent {
  kind: string;
  name: string;
  type: string;
  rv: bigint;
  object: KubeObject;
}

/** Every change of `kinds` in `namespace`, in the API server's order, from now until stop(). */
export function recordWrites(
  client: KubeClient,
  namespace: string,
  kinds: { apiVersion: string; kind: string }[],
): { events: ServerEvent[]; stop: () => void; ready: Promise<void> } {
  const events: ServerEvent[] = [];
  const abort = new AbortController();
  const ready = Promise.all(
    kinds.map(async ({ apiVersion, kind }) => {
      const listed = await client.list(apiVersion, kind, { namespace });
      void (async () => {
        let rv = listed.resourceVersion;
        while (!abort.signal.aborted) {
          try {
            for await (const e of client.watch(apiVersion, kind, {
              namespace,
              resourceVersion: rv,
              signal: abort.signal,
            })) {
              if (e.type === "BOOKMARK") continue;
              rv = e.object.metadata?.resourceVersion ?? rv;
              events.push({
                kind,
                name: e.object.metadata?.name ?? "",
                type: e.type,
                rv: BigInt(rv),
                object: e.object,
              });
            }
          } catch {
            if (!abort.signal.aborted) await sleep(200);
          }
        }
      })();
    }),
  ).then(() => undefined);
  return { events, stop: () => abort.abort(), ready };
}

/** What one chaos case did and found, for the table `npm run test:chaos` prints. */
export interface CaseResult {
  name: string;
  did: string;
  found: string;
  figures: Record<string, string | number>;
  /** The case's invariants held. */
  ok: boolean;
}

export function printResult(result: CaseResult): void {
  const figures = Object.entries(result.figures)
    .map(([k, v]) => `${k}=${v}`)
    .join(", ");
  console.log(
    `[chaos] ${result.ok ? "ok  " : "FAIL"} ${result.name}: did ${result.did}; found ${result.found}${figures ? ` (${figures})` : ""}`,
  );
}

export function table(results: CaseResult[]): string {
  const rows = results.map((r) => [
    r.ok ? "ok" : "FAIL",
    r.name,
    r.did,
    r.found,
    Object.entries(r.figures)
      .map(([k, v]) => `${k} ${v}`)
      .join("; "),
  ]);
  const header = ["", "case", "did", "found", "figures"];
  return [
    `| ${header.join(" | ")} |`,
    `| ${header.map(() => "---").join(" | ")} |`,
    ...rows.map((row) => `| ${row.map((cell) => cell.replace(/\|/g, "\\|")).join(" | ")} |`),
  ].join("\n");
}

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)]! : NaN;
};
