// Builds the control-plane binaries from Go modules (tools/localcluster/*) into the cache,
// keyed by version and by a hash of the module files, and skips the build when the binary is
// already there. Go itself caches compiled packages, so a rebuild after a small change is fast.
import { createHash } from "node:crypto";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { KUBERNETES_VERSION, KWOK_VERSION, cacheRoot } from "./versions.js";

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const toolsDir = join(repoRoot, "tools", "localcluster");

export interface Binaries {
  /** Multi-call binary: `onto-k8s {etcd|kube-apiserver|kube-controller-manager|kube-scheduler|kubectl}`. */
  k8s: string;
  kwok: string;
}

/** One Go command built into the cache (also used by ./helm.ts). */
export interface GoTarget {
  name: string;
  moduleDir: string;
  version: string;
  pkg: string;
  output: string;
  ldflags: string;
  tags?: string;
}

/** Cache key part: a hash of the module's go.mod, go.sum, main.go and tools.go. */
export function moduleHash(moduleDir: string): string {
  const hash = createHash("sha256");
  for (const file of ["go.mod", "go.sum", "main.go", "tools.go"]) {
    const path = join(moduleDir, file);
    if (existsSync(path)) hash.update(file).update(readFileSync(path));
  }
  return hash.digest("hex").slice(0, 12);
}

function targets(): GoTarget[] {
  const k8sDir = join(toolsDir, "k8s");
  const kwokDir = join(toolsDir, "kwok");
  const minor = KUBERNETES_VERSION.split(".")[1] ?? "0";
  return [
    {
      name: "kubernetes",
      moduleDir: k8sDir,
      version: KUBERNETES_VERSION,
      pkg: ".",
      output: join(cacheRoot(), `k8s-${KUBERNETES_VERSION}-${moduleHash(k8sDir)}`, "onto-k8s"),
      tags: "selinux,notest",
      ldflags: [
        "-s -w",
        `-X k8s.io/component-base/version.gitVersion=${KUBERNETES_VERSION}`,
        "-X k8s.io/component-base/version.gitMajor=1",
        `-X k8s.io/component-base/version.gitMinor=${minor}`,
        "-X k8s.io/component-base/version.gitTreeState=clean",
      ].join(" "),
    },
    {
      name: "kwok",
      moduleDir: kwokDir,
      version: KWOK_VERSION,
      pkg: "sigs.k8s.io/kwok/cmd/kwok",
      output: join(cacheRoot(), `kwok-${KWOK_VERSION}-${moduleHash(kwokDir)}`, "kwok"),
      ldflags: `-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION.replace(/^v/, "")}`,
    },
  ];
}

function goBinary(): string {
  if (process.env.GO) return process.env.GO;
  return existsSync("/usr/local/go/bin/go") ? "/usr/local/go/bin/go" : "go";
}

async function runGoBuild(target: GoTarget, progress: (line: string) => void): Promise<void> {
  mkdirSync(dirname(target.output), { recursive: true });
  const partial = `${target.output}.partial`;
  const args = ["build", "-trimpath", "-ldflags", target.ldflags, "-o", partial];
  if (target.tags) args.push("-tags", target.tags);
  args.push(target.pkg);
  progress(`building ${target.name} ${target.version} from Go modules (first time only; minutes on 2 cores)`);
  const started = Date.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(goBinary(), args, {
      cwd: target.moduleDir,
      env: { ...process.env, CGO_ENABLED: "0" },
      stdio: ["ignore", "inherit", "inherit"],
    });
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`go build of ${target.name} failed with exit code ${code}`)),
    );
  });
  // Rename last, so an interrupted build never leaves a binary that looks complete.
  renameSync(partial, target.output);
  progress(`built ${target.name} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** Returns the target's output path, building it first when the cache does not hold it. */
export async function ensureGoBinary(
  target: GoTarget,
  progress: (line: string) => void = () => undefined,
): Promise<string> {
  if (existsSync(target.output)) return target.output;
  rmSync(`${target.output}.partial`, { force: true });
  await runGoBuild(target, progress);
  return target.output;
}

/** Returns the paths of the binaries, building whatever is missing from the cache. */
export async function ensureBinaries(progress: (line: string) => void = () => undefined): Promise<Binaries> {
  const [k8s, kwok] = targets();
  if (!k8s || !kwok) throw new Error("build targets missing");
  return { k8s: await ensureGoBinary(k8s, progress), kwok: await ensureGoBinary(kwok, progress) };
}
