// Builds the control-plane binaries from Go modules (tools/localcluster/*) into the cache,
// keyed by version and by a hash of the module files, and skips the build when the binary is
// already there. Go itself caches compiled packages, so a rebuild after a small change is fast.
import { createHash } from "node:crypto";
import { execFile, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  CNI_PLUGINS_VERSION,
  CONTAINERD_VERSION,
  KUBERNETES_VERSION,
  KWOK_VERSION,
  cacheRoot,
} from "./versions.js";
import { PACKAGE_ROOT } from "./package-root.js";

const repoRoot = PACKAGE_ROOT;
const toolsDir = join(repoRoot, "tools", "localcluster");

export interface Binaries {
  /**
   * Multi-call binary:
   * `onto-k8s {etcd|kube-apiserver|kube-controller-manager|kube-scheduler|kubelet|kube-proxy|kubectl}`.
   */
  k8s: string;
  kwok: string;
}

/** What a real node runs besides the kubelet and kube-proxy (both in the multi-call binary). */
export interface NodeBinaries {
  /** Folder holding `containerd`, `containerd-shim-runc-v2` and `ctr`. */
  containerdDir: string;
  /** Folder holding the CNI plugins `bridge`, `host-local`, `loopback` and `portmap`. */
  cniDir: string;
}

/**
 * One Go build into the cache (also used by ./helm.ts and ./images). With one package, `output`
 * is the binary; with several, `output` is a folder that receives one binary per package.
 */
export interface GoTarget {
  name: string;
  moduleDir: string;
  version: string;
  pkg: string | string[];
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

/** The go command: $GO, else the toolchain in /usr/local/go, else `go` on the PATH. */
export function goBinary(): string {
  if (process.env.GO) return process.env.GO;
  return existsSync("/usr/local/go/bin/go") ? "/usr/local/go/bin/go" : "go";
}

/** How many packages the build links at most (`go list -deps`), for the progress line. */
function countPackages(target: GoTarget, pkgs: string[]): Promise<number | undefined> {
  const args = ["list", "-deps", ...(target.tags ? ["-tags", target.tags] : []), ...pkgs];
  return new Promise((resolve) => {
    execFile(
      goBinary(),
      args,
      { cwd: target.moduleDir, env: { ...process.env, CGO_ENABLED: "0" }, maxBuffer: 64 << 20 },
      (err, stdout) => resolve(err ? undefined : stdout.split("\n").filter(Boolean).length),
    );
  });
}

export function formatElapsed(ms: number): string {
  const seconds = Math.round(ms / 1000);
  return seconds < 60
    ? `${seconds}s`
    : `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, "0")}s`;
}

async function runGoBuild(target: GoTarget, progress: (line: string) => void): Promise<void> {
  mkdirSync(dirname(target.output), { recursive: true });
  const pkgs = Array.isArray(target.pkg) ? target.pkg : [target.pkg];
  const multi = Array.isArray(target.pkg);
  // Named by process, so two processes building the same target (two test runs at once) never
  // write or rename each other's output.
  const partial = `${target.output}.partial-${process.pid}`;
  // `-v` names each package as it is compiled (cached ones are not named): counted for progress.
  const args = [
    "build",
    "-v",
    "-trimpath",
    "-ldflags",
    target.ldflags,
    "-o",
    multi ? `${partial}/` : partial,
  ];
  if (target.tags) args.push("-tags", target.tags);
  args.push(...pkgs);
  progress(`building ${target.name} ${target.version} from Go modules (first time only; minutes on 2 cores)`);
  const started = Date.now();
  const total = await countPackages(target, pkgs);
  let compiled = 0;
  let errorText = "";
  const ticker = setInterval(() => {
    const of = total === undefined ? "" : ` of at most ${total}`;
    progress(
      `building ${target.name}: ${compiled}${of} packages compiled, ${formatElapsed(Date.now() - started)}`,
    );
  }, 20_000);
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(goBinary(), args, {
        cwd: target.moduleDir,
        env: { ...process.env, CGO_ENABLED: "0" },
        stdio: ["ignore", "inherit", "pipe"],
      });
      let pending = "";
      child.stderr.on("data", (chunk: Buffer) => {
        pending += chunk.toString();
        const lines = pending.split("\n");
        pending = lines.pop() ?? "";
        for (const line of lines) {
          // Package paths have no spaces; anything else is the compiler talking.
          if (/^\S+$/.test(line)) compiled++;
          else errorText = `${errorText}${line}\n`.slice(-4000);
        }
      });
      child.on("error", reject);
      child.on("exit", (code) =>
        code === 0
          ? resolve()
          : reject(
              new Error(`go build of ${target.name} failed with exit code ${code}:\n${errorText}${pending}`),
            ),
      );
    });
  } finally {
    clearInterval(ticker);
  }
  // Rename last, so an interrupted build never leaves a binary that looks complete; when another
  // process finished the same target first, its output (built from the same inputs) stays.
  if (existsSync(target.output)) rmSync(partial, { recursive: true, force: true });
  else renameSync(partial, target.output);
  progress(
    `built ${target.name} in ${((Date.now() - started) / 1000).toFixed(1)} s (${compiled} packages compiled)`,
  );
}

/** Returns the target's output path, building it first when the cache does not hold it. */
export async function ensureGoBinary(
  target: GoTarget,
  progress: (line: string) => void = () => undefined,
): Promise<string> {
  if (existsSync(target.output)) return target.output;
  rmSync(`${target.output}.partial-${process.pid}`, { recursive: true, force: true });
  await runGoBuild(target, progress);
  return target.output;
}

/** Returns the paths of the binaries, building whatever is missing from the cache. */
export async function ensureBinaries(progress: (line: string) => void = () => undefined): Promise<Binaries> {
  const [k8s, kwok] = targets();
  if (!k8s || !kwok) throw new Error("build targets missing");
  return { k8s: await ensureGoBinary(k8s, progress), kwok: await ensureGoBinary(kwok, progress) };
}

function nodeTargets(): GoTarget[] {
  const containerdDir = join(toolsDir, "containerd");
  const cniDir = join(toolsDir, "cni");
  const containerd = "github.com/containerd/containerd/v2";
  const cni = "github.com/containernetworking/plugins/plugins";
  return [
    {
      name: "containerd",
      moduleDir: containerdDir,
      version: CONTAINERD_VERSION,
      pkg: [
        `${containerd}/cmd/containerd`,
        `${containerd}/cmd/containerd-shim-runc-v2`,
        `${containerd}/cmd/ctr`,
      ],
      output: join(cacheRoot(), `containerd-${CONTAINERD_VERSION}-${moduleHash(containerdDir)}`),
      // The btrfs snapshotter needs cgo headers; the nodes use overlayfs.
      tags: "no_btrfs",
      ldflags: [
        "-s -w",
        `-X ${containerd}/version.Version=${CONTAINERD_VERSION}`,
        `-X ${containerd}/version.Package=${containerd}`,
      ].join(" "),
    },
    {
      name: "cni-plugins",
      moduleDir: cniDir,
      version: CNI_PLUGINS_VERSION,
      pkg: [`${cni}/main/bridge`, `${cni}/ipam/host-local`, `${cni}/main/loopback`, `${cni}/meta/portmap`],
      output: join(cacheRoot(), `cni-plugins-${CNI_PLUGINS_VERSION}-${moduleHash(cniDir)}`),
      ldflags: `-s -w -X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=${CNI_PLUGINS_VERSION}`,
    },
  ];
}

/** Returns the folders of containerd and the CNI plugins, building whatever is missing. */
export async function ensureNodeBinaries(
  progress: (line: string) => void = () => undefined,
): Promise<NodeBinaries> {
  const [containerd, cni] = nodeTargets();
  if (!containerd || !cni) throw new Error("node build targets missing");
  return {
    containerdDir: await ensureGoBinary(containerd, progress),
    cniDir: await ensureGoBinary(cni, progress),
  };
}

/** Where the Go module cache holds `module@version` (downloaded through the module proxy if needed). */
export function goModuleDir(module: string, version: string, cwd: string): string {
  const out = execFileSync(goBinary(), ["mod", "download", "-json", `${module}@${version}`], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
  }).toString();
  const info = JSON.parse(out) as { Dir?: string; Error?: string };
  if (!info.Dir) throw new Error(`go mod download ${module}@${version}: ${info.Error ?? "no Dir"}`);
  return info.Dir;
}
