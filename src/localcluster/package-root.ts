// The root of the onto-operator package (the directory of its package.json), where tools/,
// deploy/, samples/ and bin/ are. Found by walking up from this module's own file rather than by
// a fixed number of `..`, because the same code runs from src/ (tsx), from dist/ (tsc keeps the
// tree) and from dist-bundle/cli/ (esbuild puts every module into a few chunks of one directory).
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE_NAME = "onto-operator";

function findPackageRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown }).name === PACKAGE_NAME
    )
      return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json of ${PACKAGE_NAME} above ${start}`);
  }
}

export const PACKAGE_ROOT = findPackageRoot(dirname(fileURLToPath(import.meta.url)));
