// PACKAGE_ROOT is the directory of the package's own package.json, found from this module's file
// (src/localcluster/ here; dist/localcluster/ or dist-bundle/cli/ when built).
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "./package-root.js";

describe("PACKAGE_ROOT", () => {
  it("is the checkout's root, where package.json names onto-operator and tools/ and bin/ are", () => {
    expect(PACKAGE_ROOT).toBe(resolve(fileURLToPath(new URL("../..", import.meta.url))));
    const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as { name: string };
    expect(manifest.name).toBe("onto-operator");
    expect(readFileSync(join(PACKAGE_ROOT, "bin", "onto.js"), "utf8")).toContain("chooseEntry");
  });
});
