// The cgroup (v1, cgroupfs) subtree of one real node: created before its processes start, every
// process inside killed and the subtree removed when the node stops. containerd, the kubelet and
// kube-proxy are placed in `<root>/system`, the kubelet puts pods in `<root>/kubepods`, and the
// containerd shims inherit containerd's cgroup, so a crashed run leaves nothing that this cannot
// find: everything the node started is inside its subtree.
import {
  existsSync,
  readFileSync,
  readdirSync,
  rmdirSync,
  statSync,
  writeFileSync,
  mkdirSync,
} from "node:fs";
import { join } from "node:path";

const CGROUP_FS = "/sys/fs/cgroup";

/**
 * The mounted hierarchies: the v1 ones (cpu, memory, pids, ..., the named `systemd` one) and the
 * hybrid layout's controller-less v2 `unified` one, where runc makes the containers' cgroups too.
 */
function hierarchies(): string[] {
  if (!existsSync(CGROUP_FS)) return [];
  if (existsSync(join(CGROUP_FS, "cgroup.controllers"))) {
    throw new Error("this host runs cgroup v2 only; the real nodes are set up for cgroup v1 (cgroupfs)");
  }
  return readdirSync(CGROUP_FS)
    .map((name) => join(CGROUP_FS, name))
    .filter((path) => statSync(path).isDirectory() && existsSync(join(path, "cgroup.procs")));
}

/** Creates `<root>` and `<root>/system` in every hierarchy. `root` is absolute, e.g. `/onto7-real-1`. */
export function createNodeCgroup(root: string): void {
  for (const hierarchy of hierarchies()) {
    for (const dir of [join(hierarchy, root), join(hierarchy, root, "system")]) {
      mkdirSync(dir, { recursive: true });
      // A new cpuset cgroup starts with no CPUs and no memory nodes: copy its parent's.
      if (hierarchy.endsWith("/cpuset")) {
        for (const file of ["cpuset.cpus", "cpuset.mems"]) {
          const parent = readFileSync(join(dir, "..", file), "utf8").trim();
          if (readFileSync(join(dir, file), "utf8").trim() === "") writeFileSync(join(dir, file), parent);
        }
      }
    }
  }
}

/** Moves a process (all its threads) into `<root>/system` in every hierarchy. */
export function placeInNodeCgroup(root: string, pid: number): void {
  for (const hierarchy of hierarchies())
    writeFileSync(join(hierarchy, root, "system", "cgroup.procs"), String(pid));
}

function walk(dir: string, into: string[]): void {
  into.push(dir);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) walk(join(dir, entry.name), into);
  }
}

/** Pids of every process in the subtree. */
export function nodeCgroupPids(root: string): number[] {
  const pids = new Set<number>();
  for (const hierarchy of hierarchies()) {
    const top = join(hierarchy, root);
    if (!existsSync(top)) continue;
    const dirs: string[] = [];
    walk(top, dirs);
    for (const dir of dirs) {
      for (const line of readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n")) {
        if (line.trim()) pids.add(Number(line));
      }
    }
  }
  return [...pids];
}

/** SIGKILLs every process in the subtree until none is left, then removes the subtree. */
export async function removeNodeCgroup(root: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pids = nodeCgroupPids(root);
    if (pids.length === 0) break;
    if (Date.now() > deadline) throw new Error(`processes still in cgroup ${root}: ${pids.join(", ")}`);
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  for (const hierarchy of hierarchies()) {
    const top = join(hierarchy, root);
    if (!existsSync(top)) continue;
    const dirs: string[] = [];
    walk(top, dirs);
    // Deepest first: a cgroup with children cannot be removed. An exiting process can hold a
    // cgroup busy for a moment, hence the retries.
    for (const dir of dirs.reverse()) {
      for (let attempt = 0; ; attempt++) {
        try {
          rmdirSync(dir);
          break;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === "ENOENT") break;
          if (attempt > 50) throw err;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    }
  }
}

/** Node cgroup roots of cluster `index` that exist now (what a crashed run may have left). */
export function leftoverNodeCgroups(index: number): string[] {
  const roots = new Set<string>();
  for (const hierarchy of hierarchies()) {
    for (const name of readdirSync(hierarchy)) {
      if (name.startsWith(`onto${index}-`) && statSync(join(hierarchy, name)).isDirectory())
        roots.add(`/${name}`);
    }
  }
  return [...roots];
}
