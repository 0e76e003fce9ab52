// Start-up time of the `onto` commands a user runs most (help, validate, render): each is started
// `runs` times as its own process; prints the median and p90 of the wall time (start to exit) and
// which entry point bin/onto.js ran. With a fresh build in dist/ (`npm run build`) that is the
// compiled CLI, as an installed package runs it; without one, the TypeScript source through tsx.
// Pass another checkout's root to compare, and a sample (the production one by default).
// Run: npx tsx bench/cli-start.ts [checkout] [runs] [sample]
import { spawnSync } from "node:child_process";
import { join, resolve } from "node:path";
import { percentile } from "./lib/stats.js";

const root = resolve(process.argv[2] ?? ".");
const runs = Number(process.argv[3] ?? 10);
const sample = resolve(process.argv[4] ?? "samples/production.yaml");
const commands: [string, string[]][] = [
  ["onto --help", ["--help"]],
  ["onto validate", ["validate", "-f", sample]],
  ["onto render", ["render", "-f", sample]],
];
const entries = new Set<string>();
console.log(`checkout ${root}, ${runs} runs each, sample ${sample}`);
for (const [label, args] of commands) {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const run = spawnSync(process.execPath, [join(root, "bin", "onto.js"), ...args], {
      encoding: "utf8",
      maxBuffer: 1 << 24,
      env: { ...process.env, ONTO_DEBUG_ENTRY: "1" },
    });
    times.push(performance.now() - started);
    if (run.status !== 0) throw new Error(`${label} exited ${run.status}: ${run.stderr}`);
    entries.add(run.stderr.split("\n")[0] ?? "");
  }
  const ms = (p: number): string => percentile(times, p).toFixed(0).padStart(5);
  console.log(`${label.padEnd(14)} median ${ms(50)} ms  p90 ${ms(90)} ms`);
}
for (const entry of entries) console.log(entry);
