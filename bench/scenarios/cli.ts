// CLI start: wall time of `onto --help`, `onto validate` and `onto render` of the minimal sample
// as fresh processes, the way a user of the installed package runs them: the bundled CLI. The
// scenario builds first as `npm run build` does (tsc into dist/, then the bundle into
// dist-bundle/), so a checkout without a build or with a stale one is not measured through tsx,
// and it checks that bin/onto.js did run the bundle.
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { promisify } from "node:util";
import type { FigureSet } from "../lib/figures.js";
import { percentile } from "../lib/stats.js";
import type { BenchEnv } from "../lib/env.js";
import { BUNDLED_MAIN } from "../../bin/entry.js";
import { bundleCli } from "../../scripts/bundle-cli.js";

const run = promisify(execFile);

/** Compiles src/ into dist/ and bundles it into dist-bundle/, the way `npm run build` does. */
export async function buildCli(): Promise<void> {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  await run(process.execPath, [tsc, "-p", "tsconfig.build.json"], { maxBuffer: 1 << 24 });
  await bundleCli();
}

export async function cliStart(env: BenchEnv, figs: FigureSet): Promise<void> {
  const started = performance.now();
  await buildCli();
  env.log(`cli: built dist/ and dist-bundle/ in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const rounds = env.quick ? 5 : 10;
  const commands: Record<string, string[]> = {
    help: ["--help"],
    validate: ["validate", "-f", "samples/minimal.yaml"],
    render: ["render", "-f", "samples/minimal.yaml"],
  };
  let compiled = true;
  for (const [name, args] of Object.entries(commands)) {
    const ms: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const start = performance.now();
      const { stderr } = await run(process.execPath, ["bin/onto.js", ...args], {
        maxBuffer: 1 << 24,
        env: { ...process.env, ONTO_DEBUG_ENTRY: "1" },
      });
      ms.push(performance.now() - start);
      if (!stderr.includes(BUNDLED_MAIN)) compiled = false;
    }
    figs.add("cli", `${name}.p50`, Math.round(percentile(ms, 50)), "ms");
    figs.add("cli", `${name}.p90`, Math.round(percentile(ms, 90)), "ms");
  }
  figs.add("cli", "compiled", compiled ? 1 : 0, "bool", "higher");
}
