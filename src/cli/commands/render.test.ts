// `onto render`: the file in, the documents out, secrets as placeholders, problems reported.
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import {
  RenderInputError,
  SECRET_PLACEHOLDER,
  UID_PLACEHOLDER,
  formatObjects,
  renderFile,
} from "./render.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const PRODUCTION_FILE = "src/render/testdata/production.yaml";
const production = readFileSync(new URL(`../../../${PRODUCTION_FILE}`, import.meta.url), "utf8");

describe("renderFile and formatObjects", () => {
  it("prints one YAML document per object, parsing back to the same objects", () => {
    const objects = renderFile(production, { apiVersions: [] });
    const docs = parseAllDocuments(formatObjects(objects, "yaml"));
    expect(docs.every((d) => d.errors.length === 0)).toBe(true);
    expect(docs.map((d) => d.toJS() as unknown)).toEqual(objects);
  });

  it("quotes every string a YAML 1.1 parser (kubectl's) would read as a boolean", () => {
    const text = formatObjects(renderFile(production, { apiVersions: ["autoscaling.k8s.io/v1"] }), "yaml");
    expect(text).toMatch(/updateMode: "Off"/);
    const yaml11 = parseAllDocuments(text, { version: "1.1" }).map((d) => d.toJS() as unknown);
    expect(yaml11).toEqual(renderFile(production, { apiVersions: ["autoscaling.k8s.io/v1"] }));
  });

  it("prints no alias or anchor, so every document stands alone", () => {
    expect(formatObjects(renderFile(production, { apiVersions: [] }), "yaml")).not.toMatch(/[&*]a\d+/);
  });

  it("shows a placeholder instead of every generated secret value", () => {
    const secrets = renderFile(production, { apiVersions: [] }).filter((o) => o.kind === "Secret");
    expect(secrets.length).toBeGreaterThan(0);
    for (const s of secrets) {
      for (const v of Object.values(s.data as Record<string, string>)) {
        expect(Buffer.from(v, "base64").toString()).toBe(SECRET_PLACEHOLDER);
      }
    }
  });

  it("renders optional APIs only when asked to assume them", () => {
    const kinds = (apiVersions: string[]) =>
      new Set(renderFile(production, { apiVersions }).map((o) => o.kind));
    expect(kinds([]).has("ServiceMonitor")).toBe(false);
    expect(kinds(["monitoring.coreos.com/v1"]).has("ServiceMonitor")).toBe(true);
    expect(kinds(["autoscaling.k8s.io/v1"]).has("VerticalPodAutoscaler")).toBe(true);
  });

  it("fills what only a cluster knows with stand-ins", () => {
    const text = production.replace(/^\s+namespace: onto-system\n/m, "").replace(/^\s+uid: .*\n/m, "");
    const objects = renderFile(text, { namespace: "team-a", apiVersions: [] });
    expect(objects[0]?.metadata.namespace).toBe("team-a");
    const owned = objects.find((o) => o.metadata.ownerReferences);
    expect(owned?.metadata.ownerReferences?.[0]?.uid).toBe(UID_PLACEHOLDER);
  });

  it("emits a kubectl-style List as JSON", () => {
    const list = JSON.parse(formatObjects(renderFile(production, { apiVersions: [] }), "json")) as {
      kind: string;
      items: unknown[];
    };
    expect(list.kind).toBe("List");
    expect(list.items.length).toBeGreaterThan(50);
  });

  it("reports every problem of an invalid document with its field", () => {
    const invalid = production
      .replace('version: "1.5.0"', 'version: "one"')
      .replace("replicas: 4", "replicas: 2");
    const error = (() => {
      try {
        renderFile(invalid, { apiVersions: [] });
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(RenderInputError);
    const problems = (error as RenderInputError).problems.join("\n");
    expect(problems).toMatch(/version/);
    expect(problems).toMatch(/minio/);
  });

  it("renders a platform with an OntoRelease of the same file, as onto images -f takes it", () => {
    const releases = readFileSync(new URL("../../../samples/releases/local.yaml", import.meta.url), "utf8");
    const platform = production.replace('version: "1.5.0"', 'version: "1.5.0-local.1"');
    const images = renderFile(`${releases}\n---\n${platform}`, { apiVersions: [] })
      .flatMap((o) => JSON.stringify(o).match(/"image":"[^"]+"/g) ?? [])
      .map((m) => m.slice(9, -1));
    expect(images).toContain("onto.local/postgres:15-debian12");
    expect(images).toContain("registry.example.com/coomia-dip/auth-service:1.5.0-local.1");
  });

  it("says which OntoRelease of the file is not used, and refuses the version it would define", () => {
    const releases = readFileSync(new URL("../../../samples/releases/local.yaml", import.meta.url), "utf8");
    const first = releases.split("\n---\n")[0] ?? "";
    const rival = first.replace("name: 1.5.0-local.1", "name: rival");
    const platform = production.replace('version: "1.5.0"', 'version: "1.5.0-local.1"');
    const warnings: string[] = [];
    expect(() =>
      renderFile(`${first}\n---\n${rival}\n---\n${platform}`, {
        apiVersions: [],
        warn: (line) => warnings.push(line),
      }),
    ).toThrow(/1\.5\.0-local\.1.*rival all name version 1\.5\.0-local\.1/);
    expect(warnings).toEqual([
      expect.stringMatching(/^OntoRelease 1\.5\.0-local\.1 not used: /),
      expect.stringMatching(/^OntoRelease rival not used: /),
    ]);
  });

  it("refuses a file with releases and no platform", () => {
    const releases = readFileSync(new URL("../../../samples/releases/local.yaml", import.meta.url), "utf8");
    expect(() => renderFile(releases, { apiVersions: [] })).toThrow(/no OntoPlatform document found/);
  });

  it("reports a version the catalog does not know", () => {
    expect(() =>
      renderFile(production.replace('version: "1.5.0"', 'version: "9.9.9"'), { apiVersions: [] }),
    ).toThrow(/spec\.version.*9\.9\.9/);
  });
});

// Each case starts the real CLI through tsx (a few seconds on a busy machine).
describe("onto render (the command)", { timeout: 60_000 }, () => {
  const onto = (args: string[], input?: string) =>
    spawnSync("npx", ["tsx", "src/cli/main.ts", "render", ...args], { cwd: ROOT, encoding: "utf8", input });

  it("prints the documents and exits 0", () => {
    const out = execFileSync("npx", ["tsx", "src/cli/main.ts", "render", "-f", PRODUCTION_FILE], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(out.startsWith("---\n")).toBe(true);
    expect(out).toContain("kind: HorizontalPodAutoscaler");
  });

  it("exits 1 with the problem on stderr for a spec it cannot render", () => {
    const result = onto(["-f", "-"], production.replace('version: "1.5.0"', 'version: "9.9.9"'));
    expect(result.status).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("9.9.9");
  });
});
