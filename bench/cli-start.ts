// Start-up time of the `onto` commands a user runs most (help, validate, render): each is
// started `runs` times as its own process and the median and fastest wall times are printed.
// With dist/ built (`npm run build`), bin/onto.js runs the compiled CLI, as an installed package
// does; without it, the TypeScript source through tsx. Pass another checkout's root to compare.
// Run: npx tsx bench/cli-start.ts [checkout] [runs]
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(process.argv[2] ?? ".");
const runs = Number(process.argv[3] ?? 10);
const sample = resolve("samples/minimal.yaml");
const commands: [string, string[]][] = [
  ["onto --help", ["--help"]],
  ["onto validate", ["validate", "-f", sample]],
  ["onto render", ["render", "-f", sample]],
];
const mode = existsSync(join(root, "dist", "cli", "main.js")) ? "compiled (dist/)" : "source (tsx)";
console.log(`checkout ${root}, ${mode}, ${runs} runs each`);
for (const [label, args] of commands) {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const run = spawnSync(process.execPath, [join(root, "bin", "onto.js"), ...args], { encoding: "utf8" });
    times.push(performance.now() - started);
    if (run.status !== 0) throw new Error(`${label} exited ${run.status}: ${run.stderr}`);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)] ?? 0;
  console.log(
    `${label.padEnd(14)} median ${median.toFixed(0).padStart(5)} ms  fastest ${(times[0] ?? 0).toFixed(0).padStart(5)} ms`,
  );
}
