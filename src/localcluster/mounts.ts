// Mounts a real node leaves under its folder (the kubelet's root folder is a bind mount of
// itself; volumes, projected tokens and containerd's overlay snapshots and pod network
// namespaces are mounted inside it). Removed deepest first before the folder is deleted, so
// deleting the folder can never reach into a mounted filesystem.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve, sep } from "node:path";

/** Mount points at or below `dir`, deepest first. */
export function mountsUnder(dir: string): string[] {
  const root = resolve(dir);
  const points = readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter(Boolean)
    // Field 5 is the mount point, with spaces and other bytes escaped as \ooo.
    .map((line) =>
      (line.split(" ")[4] ?? "").replace(/\\([0-7]{3})/g, (_, oct: string) =>
        String.fromCharCode(parseInt(oct, 8)),
      ),
    )
    .filter((point) => point === root || point.startsWith(root + sep));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/** Unmounts everything at or below `dir`; throws when something stays mounted. */
export function unmountAllUnder(dir: string): void {
  for (let pass = 0; pass < 5; pass++) {
    const points = mountsUnder(dir);
    if (points.length === 0) return;
    for (const point of points) {
      try {
        execFileSync("umount", [point], { stdio: "ignore" });
      } catch {
        try {
          execFileSync("umount", ["-l", point], { stdio: "ignore" });
        } catch {
          // retried on the next pass (a parent may go first once its children are gone)
        }
      }
    }
  }
  const left = mountsUnder(dir);
  if (left.length > 0) throw new Error(`still mounted under ${dir}: ${left.join(", ")}`);
}
