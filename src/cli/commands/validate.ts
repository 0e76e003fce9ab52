// `onto validate -f FILE`: checks OntoPlatform and OntoRelease documents offline with their
// schemas and the CRDs' own CEL rules (src/api/validate.ts), or with --server asks the API server
// for a server-side dry run (../server-validate.ts).
// Prints every problem with its field path; exit 1 when there is one.
import { Command, Option } from "commander";
import { summaryOf } from "./catalog.js";
import pc from "picocolors";
import { validateYamlStream, type DocumentReport, type ValidationIssue } from "../../api/index.js";
import { InputTooLargeError, readManifest } from "../input.js";
import type { KubeClient } from "../../kube/index.js";

interface ValidateOptions {
  filename: string[];
  server?: boolean;
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

export function validateCommand(): Command {
  return new Command("validate")
    .description(summaryOf("validate"))
    .requiredOption(
      "-f, --filename <file...>",
      "YAML files of OntoPlatform and OntoRelease documents ('-' reads stdin)",
    )
    .option("--server", "ask the API server (server-side dry run) instead of checking offline")
    .addOption(new Option("--kubeconfig <path>", "kubeconfig for --server"))
    .addOption(new Option("--context <name>", "kubeconfig context for --server"))
    .addOption(new Option("-n, --namespace <ns>", "namespace for documents without one (--server)"))
    .action(async (opts: ValidateOptions) => {
      const files = opts.filename.map((file) => ({ file, ...readInput(file) }));
      // The API client (and its library) is loaded only for --server: offline starts fast.
      const server = opts.server ? await import("../server-validate.js") : undefined;
      const client: KubeClient | undefined = server?.serverClient(opts.kubeconfig, opts.context);
      let problems = 0;
      try {
        for (const { file, text, refusal } of files) {
          const reports = refusal === undefined ? validateYamlStream(text) : [];
          if (reports.length === 0) {
            // An empty file validates nothing: say so rather than pass it.
            problems++;
            console.log(
              `${pc.red("invalid")} ${refusal ?? `${file}: no OntoPlatform or OntoRelease document found`}`,
            );
          }
          for (const report of reports) {
            const issues =
              server && client && report.object !== undefined
                ? await server.serverValidate(client, report.object, opts.namespace)
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
