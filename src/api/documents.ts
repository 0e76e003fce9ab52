// Validation of a YAML stream of OntoPlatform documents, as `kubectl apply` would send them in
// order: a document naming the same platform as an earlier one is an update of it, so the
// transition rules (oldSelf) are checked between the two.
import { parseAllDocuments } from "yaml";
import { validateOntoPlatform } from "./validate.js";
import type { ValidationIssue } from "./validate.js";

export interface DocumentReport {
  /** 0-based position in the stream. */
  index: number;
  /** namespace/name, or name, or `#index` when the document has none. */
  name: string;
  /** The parsed document (undefined when YAML parsing failed). */
  object: unknown;
  /** The earlier document this one updates, if any. */
  updates?: number;
  issues: ValidationIssue[];
}

export function validateYamlStream(text: string): DocumentReport[] {
  const reports: DocumentReport[] = [];
  const seen = new Map<string, number>();
  parseAllDocuments(text).forEach((doc, index) => {
    if (doc.errors.length > 0) {
      const issues = doc.errors.map((e) => ({ path: "", message: `YAML: ${e.message.split("\n")[0]}` }));
      reports.push({ index, name: `#${index}`, object: undefined, issues });
      return;
    }
    const object: unknown = doc.toJS();
    if (object === null || object === undefined) return; // an empty document, e.g. a trailing ---
    const key = identity(object);
    const previous = key === undefined ? undefined : seen.get(key);
    const old = previous === undefined ? undefined : reports.find((r) => r.index === previous)?.object;
    reports.push({
      index,
      name: key ?? `#${index}`,
      object,
      ...(previous === undefined ? {} : { updates: previous }),
      issues: validateOntoPlatform(object, old),
    });
    if (key !== undefined) seen.set(key, index);
  });
  return reports;
}

function identity(object: unknown): string | undefined {
  if (typeof object !== "object" || object === null) return undefined;
  const metadata = (object as { metadata?: { name?: unknown; namespace?: unknown } }).metadata;
  if (typeof metadata?.name !== "string") return undefined;
  return typeof metadata.namespace === "string" ? `${metadata.namespace}/${metadata.name}` : metadata.name;
}
