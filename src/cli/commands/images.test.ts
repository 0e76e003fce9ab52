// `onto images`: every image of a release, for a mirror list; with --registry, where each one
// lives in the mirror (the operator's own rewrite); user releases from a file.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { COMPONENTS, resolveSpec } from "../../api/index.js";
import { formatImageList, releaseImages } from "./images.js";
import { releaseFor } from "../../release/index.js";
import { renderPlatform } from "../../render/index.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const onto = (...args: string[]) =>
  spawnSync("npx", ["tsx", "src/cli/main.ts", "images", ...args], { cwd: ROOT, encoding: "utf8" });

/** Every container image in the objects render produces for the production sample's spec at `version`. */
function renderedImages(version: string, mirror?: string): Set<string> {
  const spec = resolveSpec({
    version,
    intelligencePlane: { agentRuntime: { temporal: { enabled: true } } },
    ...(mirror ? { global: { imageMirror: mirror } } : {}),
  });
  const objects = renderPlatform({
    platform: { name: "p", namespace: "ns", uid: "u" },
    spec,
    release: releaseFor(version),
    capabilities: { serviceMonitor: false, verticalPodAutoscaler: false },
    generateSecret: ({ length }) => "x".repeat(length),
  });
  const images = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) {
        if (k === "image" && typeof v === "string") images.add(v);
        else walk(v);
      }
    }
  };
  walk(objects);
  return images;
}

describe("onto images", () => {
  it("lists every image a platform of the version runs, and nothing it does not", () => {
    const listed = new Set(
      releaseImages(releaseFor("1.6.0"), "registry.example.com/coomia-dip").images.map((i) => i.image),
    );
    const rendered = renderedImages("1.6.0");
    expect(COMPONENTS.length).toBeGreaterThan(10);
    for (const image of rendered) expect(listed, image).toContain(image);
    expect(listed.size).toBe(14);
  });

  it("with --registry gives each image's name in the mirror, as the operator renders it", () => {
    const mirror = "mirror.corp.example:5000/onto";
    const list = releaseImages(releaseFor("1.6.0"), "registry.example.com/coomia-dip", mirror);
    const rendered = renderedImages("1.6.0", mirror);
    for (const image of rendered) expect(list.images.map((i) => i.mirror)).toContain(image);
    expect(formatImageList(list).split("\n")[0]).toBe(`postgres:16.6 ${mirror}/library/postgres:16.6`);
  });

  it("prints one image per line, and exits 2 on an unknown version", { timeout: 120_000 }, () => {
    const text = onto("--version", "1.6.0");
    expect(text.status).toBe(0);
    expect(text.stdout.trim().split("\n")).toHaveLength(14);
    const unknown = onto("--version", "9.9.9");
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/unknown platform version 9\.9\.9; known: .*1\.6\.0/);
  });

  it("adds the releases of a file (a test release here), and prints JSON", { timeout: 120_000 }, () => {
    const run = onto(
      "--version",
      "1.5.2-kafka-crashloop",
      "-f",
      "test/releases/upgrade-faults.yaml",
      "-o",
      "json",
    );
    expect(run.status).toBe(0);
    const list = JSON.parse(run.stdout) as { source: string; images: { component: string; image: string }[] };
    expect(list.source).toBe("OntoRelease/1.5.2-kafka-crashloop");
    expect(list.images).toHaveLength(14);
    expect(list.images.find((i) => i.component === "kafka")?.image).toBe("apache/kafka:3.7.2-crashloop");
  });
});
