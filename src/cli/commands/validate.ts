// `onto validate -f FILE`: checks OntoPlatform documents offline with the schema and the CRD's
// own CEL rules (src/api/validate.ts), or with --server asks the API server for a server-side
// dry run (create, or update when the platform already exists, so transition rules apply).
// Prints every problem with its field path; exit 1 when there is one.
import { Command, Option } from "commander";
import pc from "picocolors";
import { API_VERSION, PLURAL } from "../../api/constants.js";
import { validateYamlStream } from "../../api/documents.js";
import type { DocumentReport } from "../../api/documents.js";
import type { ValidationIssue } from "../../api/validate.js";
import { InputTooLargeError, readManifest } from "../input.js";
import { KubeApiError, KubeClient, NotFoundError, loadKubeConfig } from "../../kube/index.js";

interface ValidateOptions {
  filename: string[];
  server?: boolean;
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

export function validateCommand(): Command {
  return new Command("validate")
    .description(
      "Check OntoPlatform files: offline with the CRD's schema and CEL rules, or --server for a dry run",
    )
    .requiredOption("-f, --filename <file...>", "YAML files of OntoPlatform documents ('-' reads stdin)")
    .option("--server", "ask the API server (server-side dry run) instead of checking offline")
    .addOption(new Option("--kubeconfig <path>", "kubeconfig for --server"))
    .addOption(new Option("--context <name>", "kubeconfig context for --server"))
    .addOption(new Option("-n, --namespace <ns>", "namespace for documents without one (--server)"))
    .action(async (opts: ValidateOptions) => {
      const files = opts.filename.map((file) => ({ file, ...readInput(file) }));
      const client = opts.server
        ? new KubeClient(loadKubeConfig({ path: opts.kubeconfig, context: opts.context }))
        : undefined;
      let problems = 0;
      try {
        for (const { file, text, refusal } of files) {
          const reports = refusal === undefined ? validateYamlStream(text) : [];
          if (reports.length === 0) {
            // An empty file validates nothing: say so rather than pass it.
            problems++;
            console.log(`${pc.red("invalid")} ${refusal ?? `${file}: no OntoPlatform document found`}`);
          }
          for (const report of reports) {
            const issues =
              client && report.object !== undefined
                ? await serverValidate(client, report.object, opts.namespace)
                : report.issues;
            problems += issues.length;
            print(file, report, issues, client !== undefined);
          }
        }
      } finally {
        await client?.close();
      }
      if (problems > 0) process.exitCode = 1;
    });
}

/** The file's text, or why it is refused (too large); an unreadable file is an error (exit 2). */
function readInput(file: string): { text: string; refusal?: string } {
  try {
    return { text: readManifest(file) };
  } catch (err) {
    if (err instanceof InputTooLargeError) return { text: "", refusal: err.message };
    throw err;
  }
}

function print(file: string, report: DocumentReport, issues: ValidationIssue[], server: boolean): void {
  // Offline, a repeated platform is an update of the earlier document; the server checks every
  // document against what it stores instead.
  const update = report.updates === undefined ? "" : server ? " (against the live object)" : " (update)";
  const what = `${file}: ${report.name}${update}`;
  if (issues.length === 0) {
    console.log(`${pc.green("valid")}   ${what}`);
    return;
  }
  console.log(`${pc.red("invalid")} ${what}: ${issues.length} ${issues.length === 1 ? "error" : "errors"}`);
  for (const issue of issues)
    console.log(`  ${issue.path ? `${pc.bold(issue.path)}: ` : ""}${issue.message}`);
}

/**
 * Asks the API server whether it would accept `object`: a dry-run create, or a dry-run update
 * when an object of that name exists (so transition rules are checked against it), with
 * fieldValidation=Strict so unknown fields are refused as offline. Returns the refusal's causes.
 */
export async function serverValidate(
  client: KubeClient,
  object: unknown,
  defaultNamespace?: string,
): Promise<ValidationIssue[]> {
  if (typeof object !== "object" || object === null)
    return [{ path: "", message: "must be a YAML/JSON object" }];
  const doc = structuredClone(object) as {
    metadata?: { name?: unknown; namespace?: unknown; resourceVersion?: string };
  };
  const namespace =
    typeof doc.metadata?.namespace === "string"
      ? doc.metadata.namespace
      : (defaultNamespace ?? currentNamespace(client));
  const collection = `/apis/${API_VERSION}/namespaces/${namespace}/${PLURAL}`;
  const query = { dryRun: "All", fieldValidation: "Strict" };
  try {
    const name = typeof doc.metadata?.name === "string" ? doc.metadata.name : undefined;
    const live = name
      ? await client.requestJson("GET", `${collection}/${name}`).catch((err: unknown) => {
          if (err instanceof NotFoundError) return undefined;
          throw err;
        })
      : undefined;
    if (live && doc.metadata) {
      doc.metadata.resourceVersion = (
        live as { metadata: { resourceVersion: string } }
      ).metadata.resourceVersion;
      await client.requestJson("PUT", `${collection}/${String(name)}`, { body: doc, query });
    } else {
      await client.requestJson("POST", collection, { body: doc, query });
    }
    return [];
  } catch (err) {
    if (!(err instanceof KubeApiError) || err.code >= 500 || err.code === 401 || err.code === 403) throw err;
    const causes = err.status?.details?.causes ?? [];
    if (causes.length === 0) return [{ path: "", message: err.status?.message ?? err.message }];
    return causes.map((cause) => ({
      path: cause.field === undefined || cause.field === "<nil>" ? "" : cause.field,
      message: cause.message ?? cause.reason ?? "",
    }));
  }
}

function currentNamespace(client: KubeClient): string {
  const kc = client.kubeConfig;
  return kc.getContextObject(kc.getCurrentContext())?.namespace ?? "default";
}
