// Loads built images into a real node's containerd (namespace k8s.io, where the kubelet's CRI
// looks), with `ctr images import`. Each imported image is labelled with its cache key, so a
// node that already holds exactly this build is skipped and a rebuilt image replaces the old one.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import type { BuiltImage } from "./build.js";

const KEY_LABEL = "onto.paas/image-key";

export interface ContainerdEndpoint {
  /** Folder holding `ctr`. */
  containerdDir: string;
  /** containerd's socket. */
  address: string;
}

function ctr(node: ContainerdEndpoint, args: string[]): string {
  try {
    return execFileSync(
      join(node.containerdDir, "ctr"),
      ["--address", node.address, "-n", "k8s.io", ...args],
      {
        stdio: ["ignore", "pipe", "pipe"],
        maxBuffer: 16 << 20,
      },
    ).toString();
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim() ?? String(err);
    throw new Error(`ctr ${args.join(" ")} failed: ${stderr}`);
  }
}

/** True when the node holds this exact build of the image. */
export function hasImage(node: ContainerdEndpoint, image: BuiltImage): boolean {
  const filter = `name==${image.ref},labels."${KEY_LABEL}"==${image.key}`;
  return ctr(node, ["images", "ls", "-q", filter]).trim() !== "";
}

/** Imports the image into the node unless it already holds this build. Returns true when imported. */
export function loadImage(node: ContainerdEndpoint, image: BuiltImage): boolean {
  if (hasImage(node, image)) return false;
  ctr(node, ["images", "import", image.archive]);
  ctr(node, ["images", "label", image.ref, `${KEY_LABEL}=${image.key}`]);
  return true;
}
