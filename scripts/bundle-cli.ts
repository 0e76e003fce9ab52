// The second step of `npm run build`: bundles the compiled CLI (dist/cli/main.js, from tsc) and
// its dependencies into dist-bundle/cli/ with esbuild, which bin/onto.js runs when it is fresh.
//
// Why: dist/ is hundreds of small ES modules plus those of node_modules (TypeBox alone is about
// 250), and resolving, reading and linking them is most of what `onto validate` spends before it
// reads its file. The bundle is a few files. Code splitting keeps each command's modules in
// chunks of their own, loaded by the dynamic imports of src/cli/commands/catalog.ts, so
// `onto validate` does not load the API client and `onto operator` loads it only when run.
//
// Dependencies written as CommonJS call require() for Node's built-in modules; an ES module has no
// require, so each chunk defines one (createRequire) in its banner. Names are kept
// (keepNames), so error and class names read as in the sources.
import { renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { BUNDLED_MAIN } from "../bin/entry.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
/** Where the bundle goes: the directory of bin/entry.js's BUNDLED_MAIN (dist-bundle/cli/main.js). */
const BUNDLE_DIR = join(ROOT, dirname(dirname(BUNDLED_MAIN)));

/** Bundles dist/cli/main.js into dist-bundle/cli/; dist/ must be built (tsc) first. */
export async function bundleCli(): Promise<void> {
  // Written beside and renamed when complete, so a CLI starting meanwhile never sees half a bundle.
  const work = `${BUNDLE_DIR}.partial`;
  rmSync(work, { recursive: true, force: true });
  await build({
    entryPoints: [join(ROOT, "dist", "cli", "main.js")],
    outdir: join(work, "cli"),
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    keepNames: true,
    sourcemap: "linked",
    logLevel: "warning",
    banner: {
      js: 'import { createRequire as __ontoCreateRequire } from "node:module"; const require = __ontoCreateRequire(import.meta.url);',
    },
  });
  rmSync(BUNDLE_DIR, { recursive: true, force: true });
  renameSync(work, BUNDLE_DIR);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  await bundleCli();
  console.log(`bundled the CLI into dist-bundle/ in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
