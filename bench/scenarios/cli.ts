// CLI start: wall time of `onto --help`, `onto validate` and `onto render` of the minimal sample
// as fresh processes, the way a user runs them (the compiled CLI when dist/ exists, else tsx).
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";
import type { FigureSet } from "../lib/figures.js";
import { median } from "../lib/stats.js";
import type { BenchEnv } from "../lib/env.js";

const run = promisify(execFile);

export async function cliStart(env: BenchEnv, figs: FigureSet): Promise<void> {
  const rounds = env.quick ? 3 : 7;
  const commands: Record<string, string[]> = {
    help: ["--help"],
    validate: ["validate", "-f", "samples/minimal.yaml"],
    render: ["render", "-f", "samples/minimal.yaml"],
  };
  for (const [name, args] of Object.entries(commands)) {
    const ms: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const start = performance.now();
      await run(process.execPath, ["bin/onto.js", ...args], { maxBuffer: 1 << 24 });
      ms.push(performance.now() - start);
    }
    figs.add("cli", `${name}.p50`, Math.round(median(ms)), "ms");
  }
  figs.add("cli", "compiled", existsSync("dist/cli/main.js") ? 1 : 0, "bool", "higher");
}
