// What the operator image is made of besides Debian: the Node.js binary and the operator's own
// folder (the compiled JavaScript and its production node_modules), each put into the cache under
// a key of its content, the way the Dockerfile's build and deps stages make them. No container
// engine: tsc and npm run here, on this machine.
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import {
  copyFileSync,
  createReadStream,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { formatElapsed } from "../build.js";
import { cacheRoot } from "../versions.js";
import { PACKAGE_ROOT } from "../package-root.js";

type Progress = (line: string) => void;

const repoRoot = PACKAGE_ROOT;

/** Oldest Node.js the operator runs on (package.json's engines; undici 7 needs 20.18.1). */
const NODE_MAJOR = 20;

async function fileHash(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex").slice(0, 12);
}

/**
 * The Node.js binary running this build (Node 20, the version CI and the Dockerfile use), copied
 * into the cache under its version and content hash. Debian 12's own nodejs is 18, on which the
 * operator's API client fails (undici 7 needs the global File; String.prototype.toWellFormed).
 */
export async function ensureNode(progress: Progress): Promise<string> {
  const major = Number(process.versions.node.split(".")[0]);
  if (major < NODE_MAJOR)
    throw new Error(
      `the operator image takes the Node.js that runs the build; this is ${process.version}, it needs ${NODE_MAJOR}+`,
    );
  const source = process.execPath;
  const output = join(cacheRoot(), `node-${process.version}-${await fileHash(source)}`, "node");
  if (existsSync(output)) return output;
  mkdirSync(dirname(output), { recursive: true });
  progress(`copying Node.js ${process.version} from ${source}`);
  copyFileSync(source, `${output}.partial`);
  renameSync(`${output}.partial`, output);
  return output;
}

/** Files the operator's build reads: the sources (tests excluded, as tsconfig.build.json does) and the package files. */
function operatorSources(): string[] {
  const files = ["package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json"];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(repoRoot, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) files.push(path);
    }
  };
  walk("src");
  return files.sort();
}

function sourcesHash(): string {
  const hash = createHash("sha256");
  for (const file of operatorSources()) hash.update(file).update(readFileSync(join(repoRoot, file)));
  return hash.digest("hex").slice(0, 12);
}

/**
 * The operator's folder as the image's /app holds it: package.json, dist/ (npm run build's tsc)
 * and node_modules with production dependencies only (npm ci --omit=dev --ignore-scripts), in the
 * cache under a hash of the sources. Built in a scratch folder and renamed when complete.
 */
export function ensureOperatorTree(progress: Progress): string {
  const output = join(cacheRoot(), `operator-app-${sourcesHash()}`);
  if (existsSync(output)) return output;
  const work = `${output}.partial`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const started = Date.now();
  progress("building the operator's JavaScript (tsc -p tsconfig.build.json)");
  const tsc = join(repoRoot, "node_modules", "typescript", "bin", "tsc");
  execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json", "--outDir", join(work, "dist")], {
    cwd: repoRoot,
    stdio: ["ignore", "inherit", "inherit"],
  });
  for (const file of ["package.json", "package-lock.json"])
    copyFileSync(join(repoRoot, file), join(work, file));
  progress("installing the operator's production dependencies (npm ci --omit=dev)");
  execFileSync("npm", ["ci", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund"], {
    cwd: work,
    stdio: ["ignore", "ignore", "inherit"],
  });
  rmSync(join(work, "package-lock.json"));
  renameSync(work, output);
  progress(`built the operator's folder in ${formatElapsed(Date.now() - started)}`);
  return output;
}
