// The golden-file set: the samples and a few generated specs, each stored with every object the
// operator renders for it (src/render/testdata/golden/*.yaml). Each file holds its whole input, so
// only a change of the render code (never of a sample) can make the test differ. `npm run golden`
// writes them; src/render/golden.test.ts compares them with the current code.
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { parse, stringify } from "yaml";
import {
  resolveSpec,
  validateYamlStream,
  type OntoPlatform,
  type OntoPlatformSpec,
} from "../../src/api/index.js";
import { PRODUCT_CATALOG } from "../../src/release/index.js";
import {
  TEMPLATE_REVISION,
  renderPlatform,
  type Capabilities,
  type PlatformRef,
  type RenderedObject,
} from "../../src/render/index.js";
import { LOCAL_CATALOG } from "./local-releases.js";
import { specArbitrary } from "./render-spec-arbitrary.js";

export const GOLDEN_DIR = join(import.meta.dirname, "../../src/render/testdata/golden");
const SAMPLES = join(import.meta.dirname, "../../samples");

export interface GoldenInput {
  platform: PlatformRef;
  spec: OntoPlatformSpec;
  capabilities: Capabilities;
  /** "product": the built-in releases; "local": samples/releases/local.yaml as well. */
  catalog: "product" | "local";
}

export interface GoldenFile {
  /** TEMPLATE_REVISION of the code that wrote the file. */
  revision: number;
  input: GoldenInput;
  objects: RenderedObject[];
}

const ALL_APIS: Capabilities = { serviceMonitor: true, verticalPodAutoscaler: true, customMetrics: true };
const NO_APIS: Capabilities = { serviceMonitor: false, verticalPodAutoscaler: false };
const uid = (n: number) => `00000000-0000-0000-0000-${String(n).padStart(12, "0")}`;

function sample(file: string): OntoPlatform {
  const doc = validateYamlStream(readFileSync(join(SAMPLES, file), "utf8"))[0]?.object;
  if (!doc) throw new Error(`${file}: no OntoPlatform`);
  return doc as OntoPlatform;
}

/** The cases, by file name. Generated specs use a fixed seed and are stored, not regenerated. */
export function goldenCases(): Record<string, GoldenInput> {
  const cases: Record<string, GoldenInput> = {};
  const fromSample = (
    file: string,
    n: number,
    capabilities: Capabilities,
    catalog: GoldenInput["catalog"],
  ) => {
    const p = sample(file);
    const platform = { name: p.metadata.name, namespace: p.metadata.namespace ?? "onto-system", uid: uid(n) };
    return { platform, spec: p.spec, capabilities, catalog };
  };
  cases["minimal"] = fromSample("minimal.yaml", 1, ALL_APIS, "product");
  cases["production"] = fromSample("production.yaml", 2, ALL_APIS, "product");
  cases["production-no-optional-apis"] = fromSample("production.yaml", 3, NO_APIS, "product");
  cases["tenant"] = fromSample("tenant.yaml", 4, ALL_APIS, "product");
  cases["real"] = fromSample("real.yaml", 5, NO_APIS, "local");
  fc.sample(specArbitrary, { seed: 17, numRuns: 3 }).forEach((spec, i) => {
    cases[`generated-${i + 1}`] = {
      platform: { name: `onto-gen-${i + 1}`, namespace: `onto-gen-${i + 1}`, uid: uid(10 + i) },
      spec,
      capabilities: i % 2 === 0 ? ALL_APIS : NO_APIS,
      catalog: "product",
    };
  });
  return cases;
}

/** What the current code renders for a stored input (secrets from a fixed generator). */
export function renderGolden(input: GoldenInput): RenderedObject[] {
  const catalog = input.catalog === "local" ? LOCAL_CATALOG : PRODUCT_CATALOG;
  const spec = resolveSpec(structuredClone(input.spec));
  return renderPlatform({
    platform: input.platform,
    spec,
    release: catalog.releaseFor(spec.version),
    releaseOf: (v) => catalog.releaseFor(v),
    capabilities: input.capabilities,
    generateSecret: ({ secret, key, length }) => `golden-${secret}-${key}`.padEnd(length, "x"),
  });
}

export function readGoldenFiles(): Record<string, GoldenFile> {
  const out: Record<string, GoldenFile> = {};
  for (const file of readdirSync(GOLDEN_DIR)
    .filter((f) => f.endsWith(".yaml"))
    .sort())
    out[file.replace(/\.yaml$/, "")] = parse(readFileSync(join(GOLDEN_DIR, file), "utf8")) as GoldenFile;
  return out;
}

export function writeGoldenFile(name: string, input: GoldenInput): void {
  const file: GoldenFile = { revision: TEMPLATE_REVISION, input, objects: renderGolden(input) };
  const header =
    "# Written by `npm run golden` (test/support/golden.ts): what the operator renders for this input.\n" +
    "# src/render/golden.test.ts fails on any difference not declared in src/render/template-changes.ts.\n";
  writeFileSync(
    join(GOLDEN_DIR, `${name}.yaml`),
    header + stringify(file, { lineWidth: 0, aliasDuplicateObjects: false }),
  );
}
