// Builds an image from its recipe without a container engine or a registry: the root filesystem
// from Debian packages (mmdebstrap), from nothing, or one layer over another recipe's image; the
// programs and folders built here copied in, then a docker-archive tarball written by
// tools/images/archive (go-containerregistry). Cached in
// <cache>/images/ under a key hashing the recipe and every input, so an unchanged recipe is built
// once; an interrupted build never leaves an archive that looks complete.
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { ensureGoBinary, formatElapsed, moduleHash, type GoTarget } from "../build.js";
import { KUBERNETES_VERSION, cacheRoot } from "../versions.js";
import { ensureNode, ensureOperatorTree } from "./operator-inputs.js";
import { DEBIAN_EXCLUDES, imageRef, type ImageRecipe, type ProgramName, type TreeName } from "./recipes.js";
import {
  COREDNS_VERSION,
  GO_CONTAINERREGISTRY_VERSION,
  MC_VERSION,
  MINIO_VERSION,
  PAUSE_VERSION,
} from "./versions.js";
import { PACKAGE_ROOT } from "../package-root.js";

const toolsDir = join(PACKAGE_ROOT, "tools");
const imagesToolsDir = join(toolsDir, "images");
/** Bumped when the way images are put together changes, so cached archives are rebuilt. */
const BUILDER_REVISION = "2";

export interface BuiltImage {
  ref: string;
  /** docker-archive tarball, for `ctr images import`. */
  archive: string;
  /** Image manifest digest. */
  digest: string;
  /** Cache key (hash of recipe and inputs). */
  key: string;
}

type Progress = (line: string) => void;

export function imagesCacheDir(): string {
  return join(cacheRoot(), "images");
}

function goTarget(
  name: string,
  dir: string,
  version: string,
  pkg: string,
  ldflags = "-s -w",
  tags?: string,
): GoTarget {
  const moduleDir = isAbsolute(dir) ? dir : join(imagesToolsDir, dir);
  return {
    name,
    moduleDir,
    version,
    pkg,
    output: join(cacheRoot(), `${name}-${version}-${moduleHash(moduleDir)}`, name),
    ldflags,
    ...(tags ? { tags } : {}),
  };
}

function programTarget(program: Exclude<ProgramName, "pause" | "node">): GoTarget {
  switch (program) {
    case "standin":
      // Our own module: its content hash (go.mod, go.sum, main.go) is its version.
      return goTarget("standin", join(toolsDir, "standin"), "local", ".");
    case "coredns":
      return goTarget(
        "coredns",
        "coredns",
        COREDNS_VERSION,
        // Our own main (tools/images/coredns/main.go): CoreDNS with the plugins the Corefile uses.
        ".",
        `-s -w -X github.com/coredns/coredns/coremain.GitCommit=${COREDNS_VERSION}`,
      );
    case "minio": {
      // MinIO's own build stamps its version from the commit time, as its `minio --version` shows.
      const stamp = MINIO_VERSION.split("-")[1] ?? "";
      const iso = `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)}T${stamp.slice(8, 10)}:${stamp.slice(10, 12)}:${stamp.slice(12, 14)}Z`;
      return goTarget(
        "minio",
        "minio",
        MINIO_VERSION,
        "github.com/minio/minio",
        `-s -w -X github.com/minio/minio/cmd.Version=${iso} -X github.com/minio/minio/cmd.ReleaseTag=DEVELOPMENT.${iso.replace(/:/g, "-")}`,
        "kqueue",
      );
    }
    case "mc":
      return goTarget("mc", "mc", MC_VERSION, "github.com/minio/mc");
  }
}

function archiveToolTarget(): GoTarget {
  return goTarget("onto-image-archive", "archive", GO_CONTAINERREGISTRY_VERSION, ".");
}

function pauseSource(): string {
  const modCache = execFileSync(goBinaryPath(), ["env", "GOMODCACHE"]).toString().trim();
  return join(modCache, `k8s.io/kubernetes@${KUBERNETES_VERSION}`, "build", "pause", "linux", "pause.c");
}

function goBinaryPath(): string {
  if (process.env.GO) return process.env.GO;
  return existsSync("/usr/local/go/bin/go") ? "/usr/local/go/bin/go" : "go";
}

/** Builds Kubernetes' pause program as upstream's Makefile does (gcc -Os -static). */
function ensurePause(progress: Progress): string {
  const source = pauseSource();
  if (!existsSync(source)) {
    throw new Error(
      `pause source not found at ${source}: run \`onto cluster build\` first (it downloads k8s.io/kubernetes)`,
    );
  }
  const hash = createHash("sha256").update(readFileSync(source)).digest("hex").slice(0, 12);
  const output = join(cacheRoot(), `pause-${PAUSE_VERSION}-${hash}`, "pause");
  if (existsSync(output)) return output;
  mkdirSync(dirname(output), { recursive: true });
  progress(`building pause ${PAUSE_VERSION} with gcc -static`);
  execFileSync(
    "gcc",
    ["-Os", "-Wall", "-Werror", "-static", `-DVERSION=v${PAUSE_VERSION}`, "-o", `${output}.partial`, source],
    { stdio: ["ignore", "inherit", "inherit"] },
  );
  renameSync(`${output}.partial`, output);
  return output;
}

/** Path of a program built here, building it when the cache lacks it. */
export async function ensureProgram(program: ProgramName, progress: Progress): Promise<string> {
  if (program === "pause") return ensurePause(progress);
  if (program === "node") return ensureNode(progress);
  return ensureGoBinary(programTarget(program), progress);
}

/** Path of a folder tree made here, making it when the cache lacks it. */
function ensureTree(tree: TreeName, progress: Progress): string {
  switch (tree) {
    case "operator":
      return ensureOperatorTree(progress);
  }
}

/** What a recipe copies in, each by its path in the cache (the paths carry versions and hashes). */
interface Inputs {
  programs: Map<ProgramName, string>;
  trees: Map<TreeName, string>;
}

function sh(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The host's own Debian sources (mmdebstrap reads a sources file given as its mirror). */
function debianSources(): string[] {
  const files: string[] = [];
  if (existsSync("/etc/apt/sources.list") && /^\s*deb\s/m.test(readFileSync("/etc/apt/sources.list", "utf8")))
    files.push("/etc/apt/sources.list");
  if (existsSync("/etc/apt/sources.list.d")) {
    for (const name of readdirSync("/etc/apt/sources.list.d").sort()) {
      if (name.endsWith(".sources") || name.endsWith(".list"))
        files.push(join("/etc/apt/sources.list.d", name));
    }
  }
  if (files.length === 0) throw new Error("no Debian sources configured in /etc/apt: mmdebstrap needs one");
  return files;
}

/** Shell lines that put the recipe's programs, trees, texts and folders into the root at `$1`. */
function contentLines(recipe: ImageRecipe, inputs: Inputs): string[] {
  const lines: string[] = [];
  for (const file of recipe.files ?? []) {
    const source = inputs.programs.get(file.program);
    if (!source) throw new Error(`program ${file.program} not built`);
    lines.push(`install -D -m 0755 ${sh(source)} "$1"${sh(file.path)}`);
  }
  for (const tree of recipe.trees ?? []) {
    const source = inputs.trees.get(tree.tree);
    if (!source) throw new Error(`tree ${tree.tree} not built`);
    lines.push(
      `mkdir -p "$1"${sh(tree.path)} && cp -a ${sh(`${source}/.`)} "$1"${sh(tree.path)} && chown -R 0:0 "$1"${sh(tree.path)}`,
    );
  }
  for (const text of recipe.texts ?? []) {
    lines.push(
      `mkdir -p "$(dirname "$1"${sh(text.path)})" && printf '%s' ${sh(text.content)} > "$1"${sh(text.path)} && chmod 0644 "$1"${sh(text.path)}`,
    );
  }
  for (const dir of recipe.dirs ?? []) {
    lines.push(
      `mkdir -p "$1"${sh(dir.path)} && chown ${dir.owner} "$1"${sh(dir.path)} && chmod ${dir.mode} "$1"${sh(dir.path)}`,
    );
  }
  return lines;
}

function runLogged(
  what: string,
  command: string,
  args: string[],
  progress: Progress,
  count: (line: string, state: { done: number; total?: number }) => void,
): Promise<void> {
  const started = Date.now();
  const state: { done: number; total?: number } = { done: 0 };
  let tail: string[] = [];
  const ticker = setInterval(() => {
    const of = state.total === undefined ? "" : ` of ${state.total}`;
    progress(`${what}: ${state.done}${of} packages set up, ${formatElapsed(Date.now() - started)}`);
  }, 15_000);
  return new Promise<void>((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    const onData = (chunk: Buffer): void => {
      for (const line of chunk.toString().split("\n")) {
        if (!line.trim()) continue;
        count(line, state);
        tail = [...tail, line].slice(-30);
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearInterval(ticker);
      if (code === 0) resolve();
      else reject(new Error(`${what} failed (${command} exit ${code}); last lines:\n${tail.join("\n")}`));
    });
  });
}

async function debianRootfs(
  recipe: ImageRecipe,
  rootfs: Extract<ImageRecipe["rootfs"], { from: "debian" }>,
  inputs: Inputs,
  out: string,
  progress: Progress,
): Promise<void> {
  const args = [
    "--verbose",
    `--variant=${rootfs.variant}`,
    ...DEBIAN_EXCLUDES.map((rule) => `--dpkgopt=${rule}`),
    ...(rootfs.packages.length ? [`--include=${rootfs.packages.join(",")}`] : []),
  ];
  for (const user of rootfs.users ?? []) {
    // Written straight into the account files: `useradd` is not in the essential set, and
    // maintainer scripts (adduser --system) reuse an account that exists.
    const entry = `${user.name}:x:${user.uid}:${user.uid}:${user.name}:${user.home}:${user.shell ?? "/usr/sbin/nologin"}`;
    args.push(
      `--essential-hook=echo ${sh(entry)} >> "$1"/etc/passwd && echo ${sh(`${user.name}:x:${user.uid}:`)} >> "$1"/etc/group`,
    );
  }
  for (const line of rootfs.beforeInstall ?? []) args.push(`--essential-hook=${line}`);
  // Into a folder, then the recipe's own lines and the tarball here: mmdebstrap runs no
  // customize hooks for the `extract` variant.
  const root = `${out}.root`;
  rmSync(root, { recursive: true, force: true });
  args.push("--format=directory", rootfs.suite, root, ...debianSources());
  await runLogged(`building image ${imageRef(recipe)}`, "mmdebstrap", args, progress, (line, state) => {
    const planned = /(\d+) newly installed/.exec(line);
    if (planned) state.total = (state.total ?? 0) + Number(planned[1]);
    if (/^Setting up /.test(line)) state.done++;
  });
  try {
    runLines([...(rootfs.customize ?? []), ...contentLines(recipe, inputs)], root);
    tarRoot(root, out);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Runs shell lines with `$1` set to the image's root folder. */
function runLines(lines: string[], root: string): void {
  for (const line of lines)
    execFileSync("sh", ["-ec", line, "sh", root], { stdio: ["ignore", "inherit", "inherit"] });
}

/** The root folder as an uncompressed tarball, owners by number, device nodes included. */
function tarRoot(root: string, out: string): void {
  execFileSync("tar", ["--numeric-owner", "--xattrs", "-C", root, "-cf", out, "."]);
}

/** The recipe's own files as a tarball (a whole root from scratch, or a layer over a base image). */
function scratchRootfs(recipe: ImageRecipe, inputs: Inputs, out: string): void {
  const staging = mkdtempSync(join(dirname(out), "rootfs-"));
  try {
    // The tarball's "./" entry is the image's root folder: mkdtemp's 0700 would lock out non-root users.
    chmodSync(staging, 0o755);
    const script = contentLines(recipe, inputs).join("\n");
    if (script)
      execFileSync("sh", ["-c", script, "sh", staging], { stdio: ["ignore", "inherit", "inherit"] });
    execFileSync("tar", ["--numeric-owner", "--owner=0", "--group=0", "-C", staging, "-cf", out, "."]);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** Cache key of a recipe: the recipe itself and the identity of every input (a base image by its key). */
function recipeKey(recipe: ImageRecipe, inputs: Inputs, archiveTool: string, base?: BuiltImage): string {
  const hash = createHash("sha256").update(BUILDER_REVISION).update(JSON.stringify(recipe));
  // Program and tree paths carry their version and content hash (see build.ts), so they identify them.
  for (const [name, path] of [...inputs.programs].sort()) hash.update(name).update(path);
  for (const [name, path] of [...inputs.trees].sort()) hash.update(name).update(path);
  if (base) hash.update(base.key);
  hash.update(archiveTool);
  return hash.digest("hex").slice(0, 16);
}

/** Builds the recipe's image into the cache (or finds it there). */
export async function buildImage(
  recipe: ImageRecipe,
  progress: Progress = () => undefined,
): Promise<BuiltImage> {
  const base = recipe.rootfs.from === "image" ? await buildImage(recipe.rootfs.base, progress) : undefined;
  const inputs: Inputs = { programs: new Map(), trees: new Map() };
  for (const file of recipe.files ?? [])
    inputs.programs.set(file.program, await ensureProgram(file.program, progress));
  for (const tree of recipe.trees ?? []) inputs.trees.set(tree.tree, ensureTree(tree.tree, progress));
  const archiveTool = await ensureGoBinary(archiveToolTarget(), progress);
  const ref = imageRef(recipe);
  const key = recipeKey(recipe, inputs, archiveTool, base);
  const dir = join(imagesCacheDir(), `${recipe.name.split("/").pop() ?? "image"}-${recipe.tag}-${key}`);
  const archive = join(dir, "image.tar");
  const digestFile = join(dir, "digest");
  if (existsSync(archive) && existsSync(digestFile)) {
    return { ref, archive, digest: readFileSync(digestFile, "utf8").trim(), key };
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const started = Date.now();
  progress(`building image ${ref} (first time only)`);
  const rootfs = join(dir, "rootfs.tar.partial");
  if (recipe.rootfs.from === "debian") await debianRootfs(recipe, recipe.rootfs, inputs, rootfs, progress);
  else scratchRootfs(recipe, inputs, rootfs);
  const configFile = join(dir, "config.json");
  writeFileSync(configFile, JSON.stringify(recipe.config));
  const digest = execFileSync(archiveTool, [
    ...(base ? ["-base", base.archive] : []),
    "-rootfs",
    rootfs,
    "-config",
    configFile,
    "-ref",
    ref,
    "-out",
    `${archive}.partial`,
  ])
    .toString()
    .trim();
  rmSync(rootfs, { force: true });
  renameSync(`${archive}.partial`, archive);
  writeFileSync(digestFile, digest);
  progress(`built image ${ref} in ${formatElapsed(Date.now() - started)}`);
  return { ref, archive, digest, key };
}
