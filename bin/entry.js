// Which code `onto` runs: the bundled CLI in dist-bundle/ (`npm run build`: tsc, then esbuild),
// else the compiled JavaScript in dist/, each only when no source file is newer than it, otherwise
// the TypeScript in src/ through tsx.
//
// An installed package and the image carry the build (and no src/), so they always run compiled
// code, which starts in a fraction of tsx's time; the bundle starts faster still, because Node
// loads a few large files instead of hundreds of small modules (scripts/bundle-cli.ts). A checkout
// runs the sources unless a build is at least as new as every file under src/: a developer or a
// test never runs a stale build after editing, and nothing has to be built before `npm test`. The
// check stats every file under src/ (under 300 entries, a few milliseconds), far below the start
// time it decides about.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** The bundled entry point, relative to the package root (scripts/bundle-cli.ts writes it). */
export const BUNDLED_MAIN = join("dist-bundle", "cli", "main.js");
/** The compiled entry point, relative to the package root. */
export const COMPILED_MAIN = join("dist", "cli", "main.js");
/** The source entry point, relative to the package root. */
export const SOURCE_MAIN = join("src", "cli", "main.ts");

/**
 * The entry point to run for the package at `root`: `{ compiled: true, path }` for the bundle or
 * dist/ when built and fresh (the bundle first), else `{ compiled: false, path }` for the
 * TypeScript source, with the reason the builds were passed over (for ONTO_DEBUG_ENTRY).
 */
export function chooseEntry(root) {
  const source = join(root, SOURCE_MAIN);
  const builds = [BUNDLED_MAIN, COMPILED_MAIN].map((path) => join(root, path)).filter(existsSync);
  if (builds.length === 0) return { compiled: false, path: source, reason: "dist/ is not built" };
  const sources = join(root, "src");
  if (!existsSync(sources)) return { compiled: true, path: builds[0] };
  let reason = "";
  for (const build of builds) {
    const newer = newestChange(sources, statSync(build).mtimeMs);
    if (newer === undefined) return { compiled: true, path: build };
    reason ||= `${newer} is newer than the build`;
  }
  return { compiled: false, path: source, reason };
}

/**
 * The first file or directory under `dir` changed after `since` (ms), or undefined. A directory's
 * own time counts too, so a deleted or renamed source file also makes the build stale.
 */
function newestChange(dir, since) {
  if (statSync(dir).mtimeMs > since) return dir;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      const found = newestChange(path, since);
      if (found !== undefined) return found;
    } else if (!entry.name.endsWith(".test.ts") && statSync(path).mtimeMs > since) {
      return path;
    }
  }
  return undefined;
}
