// What `onto validate` and `onto render` do with hostile or unusual files: every bound of
// INPUT_LIMITS holds with a message naming the file, kubectl's List and merge keys are taken.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { INPUT_LIMITS, validateYamlStream } from "../api/documents.js";
import { InputTooLargeError, readManifest } from "./input.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "onto-input-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function onto(...args: string[]): { status: number | null; out: string } {
  const run = spawnSync(process.execPath, ["bin/onto.js", ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });
  return { status: run.status, out: `${run.stdout}${run.stderr}` };
}

const PLATFORM = `apiVersion: onto.paas/v1alpha1
kind: OntoPlatform
metadata: { name: p1, namespace: team-a }
spec: { version: 1.5.0 }
`;

describe("input bounds", () => {
  it("refuses a file above the size bound by its size, without reading it", () => {
    const path = join(dir, "huge.yaml");
    writeFileSync(path, "");
    truncateSync(path, 50 * 1024 * 1024); // a sparse 50 MB file
    expect(() => readManifest(path)).toThrow(InputTooLargeError);
    expect(() => readManifest(path)).toThrow(`${path}: 52428800 bytes; onto reads files of at most`);
    const cli = onto("validate", "-f", path);
    expect(cli.status).toBe(1);
    expect(cli.out).toContain(`invalid ${path}: 52428800 bytes`);
  });

  it("parses many keys in linear time and still reports a duplicate key", () => {
    // 60k keys, 1.3 MB: the yaml library's own duplicate check is quadratic (about a minute
    // here); with the linear check this is a second or two.
    const keys = Array.from({ length: 60_000 }, (_, i) => `  k${i}: v`).join("\n");
    const [report] = validateYamlStream(`${PLATFORM}extra:\n${keys}\n`);
    expect(report?.issues).toContainEqual(expect.objectContaining({ path: "extra" }));
    const [duplicate] = validateYamlStream(`${PLATFORM}spec: { version: 1.6.0 }\n`);
    expect(duplicate?.issues[0]?.message).toMatch(/^YAML: duplicate key "spec"/);
  }, 60_000);

  it("names the file when a document has more than 100 aliases", () => {
    const aliases = Array.from({ length: INPUT_LIMITS.maxAliases + 1 }, () => "*a").join(", ");
    const path = file("aliases.yaml", `${PLATFORM}x: &a [1]\ny: [${aliases}]\n`);
    const cli = onto("validate", "-f", path);
    expect(cli.status).toBe(1);
    expect(cli.out).toContain(`invalid ${path}: #0: 1 error`);
    expect(cli.out).toContain(`YAML: more than ${INPUT_LIMITS.maxAliases} aliases`);
  });

  it("refuses nesting deeper than the bound", () => {
    const deep = `${"[".repeat(INPUT_LIMITS.maxDepth + 2)}${"]".repeat(INPUT_LIMITS.maxDepth + 2)}`;
    const [report] = validateYamlStream(`${PLATFORM}extra: ${deep}\n`);
    expect(report?.issues[0]?.message).toBe(`YAML: nesting deeper than ${INPUT_LIMITS.maxDepth} levels`);
  });

  it("says an empty file holds no platform (exit 1), for validate and render", () => {
    const path = file("empty.yaml", "");
    const validate = onto("validate", "-f", path);
    expect(validate.status).toBe(1);
    expect(validate.out).toContain(`invalid ${path}: no OntoPlatform or OntoRelease document found`);
    const render = onto("render", "-f", path);
    expect(render.status).toBe(1);
    expect(render.out).toContain("no OntoPlatform document found");
  });
});

describe("what kubectl takes", () => {
  it("a kind: List stands for its items", () => {
    const list = {
      apiVersion: "v1",
      kind: "List",
      items: [
        {
          apiVersion: "onto.paas/v1alpha1",
          kind: "OntoPlatform",
          metadata: { name: "a" },
          spec: { version: "1.5.0" },
        },
        {
          apiVersion: "onto.paas/v1alpha1",
          kind: "OntoPlatform",
          metadata: { name: "b" },
          spec: { version: "x" },
        },
      ],
    };
    const reports = validateYamlStream(JSON.stringify(list));
    expect(reports.map((r) => r.name)).toEqual(["a", "b"]);
    expect(reports[0]?.issues).toEqual([]);
    expect(reports[1]?.issues.map((i) => i.path)).toEqual(["spec.version"]);
  });

  it("merge keys are honoured", () => {
    const text = `base: &defaults
  replicas: 3
---
apiVersion: onto.paas/v1alpha1
kind: OntoPlatform
metadata: { name: merged }
spec:
  version: 1.5.0
  infrastructure:
    kafka:
      <<: { replicas: 3, storage: 30Gi }
      topics: [{ name: events }]
`;
    const reports = validateYamlStream(text).filter((r) => r.name === "merged");
    expect(reports[0]?.issues).toEqual([]);
    expect(reports[0]?.object).toMatchObject({
      spec: { infrastructure: { kafka: { replicas: 3, storage: "30Gi" } } },
    });
  });
});
