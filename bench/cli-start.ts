// Start-up time of the `onto` commands a user runs most (help, validate, render): each is started
// `runs` times as its own process; prints the median and p90 of the wall time (start to exit) and
// of the CPU time (user + system) the process used, the load average, and which entry point
// bin/onto.js ran. With a fresh build (`npm run build`) that is the bundled CLI in dist-bundle/,
// as an installed package runs it; without one, the TypeScript source through tsx.
// ONTO_ENTRY=dist runs the unbundled tsc output instead (to compare the two).
// Pass another checkout's root to compare, and a sample (the production one by default).
// Run: npx tsx bench/cli-start.ts [checkout] [runs] [sample]
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { percentile } from "./lib/stats.js";

/**
 * CPU time (user + system, ms) of this process's children that have exited and been waited for,
 * from /proc/self/stat (cutime, cstime: fields 16 and 17, in clock ticks of 10 ms on Linux). Node
 * has no getrusage(RUSAGE_CHILDREN); spawnSync waits for its child, so the difference across one
 * spawnSync is that child's CPU time.
 */
function childrenCpuMs(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  // The command name (field 2) may hold spaces; the fields after it are space-separated.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

const root = resolve(process.argv[2] ?? ".");
const runs = Number(process.argv[3] ?? 10);
const sample = resolve(process.argv[4] ?? "samples/production.yaml");
const commands: [string, string[]][] = [
  ["onto --help", ["--help"]],
  ["onto validate", ["validate", "-f", sample]],
  ["onto render", ["render", "-f", sample]],
];
const entries = new Set<string>();
const load = (): string => loadavg()[0]!.toFixed(1);
console.log(`checkout ${root}, ${runs} runs each, sample ${sample}, load ${load()}`);
for (const [label, args] of commands) {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const cpuBefore = childrenCpuMs();
    const started = performance.now();
    const run = spawnSync(process.execPath, [join(root, "bin", "onto.js"), ...args], {
      encoding: "utf8",
      maxBuffer: 1 << 24,
      env: { ...process.env, ONTO_DEBUG_ENTRY: "1" },
    });
    wall.push(performance.now() - started);
    cpu.push(childrenCpuMs() - cpuBefore);
    if (run.status !== 0) throw new Error(`${label} exited ${run.status}: ${run.stderr}`);
    entries.add(run.stderr.split("\n")[0] ?? "");
  }
  const ms = (samples: number[], p: number): string => percentile(samples, p).toFixed(0).padStart(5);
  console.log(
    `${label.padEnd(14)} wall median ${ms(wall, 50)} p90 ${ms(wall, 90)} ms   ` +
      `cpu median ${ms(cpu, 50)} p90 ${ms(cpu, 90)} ms`,
  );
}
console.log(`load ${load()}`);
for (const entry of entries) console.log(entry);
