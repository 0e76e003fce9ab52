// `onto render -f FILE [-o yaml|json]`: prints the objects the operator would apply for each
// OntoPlatform in FILE, from the same render code, with no cluster (like `helm template`).
// OntoRelease documents in FILE add versions to the built-in releases by the operator's own rule
// (catalogFrom), as `onto images -f` does: a platform of a version only a release there defines
// renders with that release's images.
// Generated credentials are never printed: their values are a placeholder, and cluster-only
// facts are stand-ins (the owner's uid) or flags (--api-versions for the optional APIs).
import { Command, Option } from "commander";
import { summaryOf } from "./catalog.js";
import { dump, type DumpOptions } from "js-yaml";
import { resolveSpec, validateYamlStream } from "../../api/index.js";
import type { OntoPlatformSpec, OntoRelease } from "../../api/index.js";
import { BUILT_IN_RELEASES, catalogFrom } from "../../release/index.js";
import { OPTIONAL_APIS, capabilitiesFrom, optionalApi, renderPlatform } from "../../render/index.js";
import type { Capabilities, RenderedObject } from "../../render/index.js";
import { InputTooLargeError, readManifest } from "../input.js";

/** What every generated Secret value reads as in `onto render` output. */
export const SECRET_PLACEHOLDER = "generated-in-cluster";
/** Stand-in for the OntoPlatform's uid, which only the API server assigns. */
export const UID_PLACEHOLDER = "00000000-0000-0000-0000-000000000000";

/** The optional APIs `--api-versions` can name, as group/version. */
export const OPTIONAL_API_VERSIONS = OPTIONAL_APIS.map((a) => a.apiVersion);
export const SERVICE_MONITOR_API = optionalApi("serviceMonitor").apiVersion;
export const VPA_API = optionalApi("verticalPodAutoscaler").apiVersion;
export const CUSTOM_METRICS_API = optionalApi("customMetrics").apiVersion;

interface RenderOptions {
  filename: string;
  output: "yaml" | "json";
  namespace?: string;
  apiVersions: string[];
}

interface PlatformDocument {
  metadata: { name: string; namespace?: string; uid?: string };
  spec: OntoPlatformSpec;
}

/**
 * Renders every OntoPlatform document of a YAML stream, with the releases its OntoRelease
 * documents add; throws with every problem found. `warn` hears of each release document the
 * catalog does not use (a conflict, a shadowed built-in) for a version a platform asks for.
 */
export function renderFile(
  text: string,
  options: { namespace?: string; apiVersions: string[]; warn?: (line: string) => void },
): RenderedObject[] {
  const reports = validateYamlStream(text);
  const problems = reports.flatMap((r) =>
    r.issues.map((i) => `${r.name}: ${i.path ? `${i.path}: ` : ""}${i.message}`),
  );
  if (problems.length > 0) throw new RenderInputError(problems);
  const platforms = reports.filter((r) => r.kind === "OntoPlatform");
  if (platforms.length === 0) throw new RenderInputError(["no OntoPlatform document found"]);
  const objects = reports.filter((r) => r.kind === "OntoRelease").map((r) => r.object as OntoRelease);
  const { catalog, verdicts } = catalogFrom(BUILT_IN_RELEASES, objects);
  const capabilities: Capabilities = capabilitiesFrom((api) => options.apiVersions.includes(api.apiVersion));
  const wanted = new Set(platforms.map((r) => (r.object as PlatformDocument).spec?.version));
  for (const o of objects) {
    const verdict = verdicts.get(o.metadata.name);
    if (verdict && !verdict.accepted && wanted.has(o.spec.version))
      options.warn?.(`OntoRelease ${o.metadata.name} not used: ${verdict.message}`);
  }
  return platforms.flatMap((report) => {
    const doc = report.object as PlatformDocument;
    const spec = resolveSpec(doc.spec);
    let release;
    try {
      release = catalog.releaseFor(spec.version);
    } catch (err) {
      throw new RenderInputError([`${report.name}: ${err instanceof Error ? err.message : String(err)}`]);
    }
    return renderPlatform({
      platform: {
        name: doc.metadata.name,
        namespace: doc.metadata.namespace ?? options.namespace ?? "default",
        uid: doc.metadata.uid ?? UID_PLACEHOLDER,
      },
      spec,
      release,
      capabilities,
      generateSecret: () => SECRET_PLACEHOLDER,
    });
  });
}

/** The input cannot be rendered (invalid document, unknown version): exit code 1. */
export class RenderInputError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join("\n"));
  }
}

export function formatObjects(objects: RenderedObject[], output: "yaml" | "json"): string {
  if (output === "json")
    return `${JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }, null, 2)}\n`;
  return objects
    .map((object) => {
      const comment =
        object.kind === "Secret"
          ? "# values are placeholders: the operator generates them once, in the cluster\n"
          : "";
      return `---\n${comment}${dump(object, YAML_OUTPUT)}`;
    })
    .join("");
}

/**
 * How the YAML output is written. js-yaml rather than the `yaml` package the input is parsed with:
 * on the 150 KB a production platform renders to, its dumper takes about a third of the time in a
 * fresh process (`onto render` is a process per call), and it writes plain JSON data the same way.
 * It quotes every string a YAML 1.1 parser would read as something else (On, Off, yes, no, ...):
 * kubectl parses YAML 1.1, so an unquoted Off went to the API server as the boolean false.
 * No anchors or aliases (noRefs), so every document stands alone; no folding (lineWidth -1).
 */
const YAML_OUTPUT: DumpOptions = { noRefs: true, lineWidth: -1, quoteStyle: "double" };

export function renderCommand(): Command {
  return new Command("render")
    .description(summaryOf("render"))
    .requiredOption(
      "-f, --filename <file>",
      "YAML file of OntoPlatform documents, and OntoRelease documents for versions not built in ('-' reads stdin)",
    )
    .addOption(new Option("-o, --output <format>", "output format").choices(["yaml", "json"]).default("yaml"))
    .option("-n, --namespace <ns>", "namespace for documents without one", undefined)
    .option(
      "-a, --api-versions <group/version...>",
      `optional APIs to assume the cluster serves (${OPTIONAL_API_VERSIONS.join(", ")})`,
      [],
    )
    .action((opts: RenderOptions) => {
      try {
        const text = readManifest(opts.filename);
        const options = {
          apiVersions: opts.apiVersions,
          warn: (line: string) => console.error(line),
          ...(opts.namespace ? { namespace: opts.namespace } : {}),
        };
        process.stdout.write(formatObjects(renderFile(text, options), opts.output));
      } catch (err) {
        if (err instanceof InputTooLargeError) {
          console.error(err.message);
          process.exitCode = 1;
          return;
        }
        if (!(err instanceof RenderInputError)) throw err;
        for (const problem of err.problems) console.error(problem);
        process.exitCode = 1;
      }
    });
}
