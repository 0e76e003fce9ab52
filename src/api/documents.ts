// Validation of a YAML stream of OntoPlatform and OntoRelease documents, as `kubectl apply` would
// send them in order: each document is checked against its kind's schema (a document of any other
// kind is checked as an OntoPlatform, so `kind` is reported); a document naming the same platform
// as an earlier one is an update of it, so the transition rules (oldSelf) are checked between the
// two. A `kind: List` (or any *List with
// items) stands for its items, and YAML merge keys (`<<: *base`) are honoured, as kubectl does.
//
// The input is a user's file, so every cost is bounded (INPUT_LIMITS): the caller refuses a file
// above maxBytes before parsing; the parser runs without the yaml library's duplicate-key check,
// which is quadratic in the keys of a map (80k keys took 96 s), and a linear one of our own
// reports duplicates instead; aliases, documents and nesting depth are capped.
import { isAlias, isMap, isScalar, isSeq, parseAllDocuments } from "yaml";
import type { Document } from "yaml";
import { RELEASE_KIND } from "./constants.js";
import { validateOntoPlatform, validateOntoRelease } from "./validate.js";
import type { ValidationIssue } from "./validate.js";

/** Bounds on what `onto validate`, `render` and `diff` read. */
export const INPUT_LIMITS = {
  /**
   * Largest file: the API server takes at most 3 MiB per request and etcd 1.5 MiB per object,
   * and an OntoPlatform at its schema's bounds is under 100 KiB.
   */
  maxBytes: 2 * 1024 * 1024,
  /** Documents per file, List items included. */
  maxDocuments: 256,
  /** Alias nodes expanded per document (the yaml library's guard against alias bombs). */
  maxAliases: 100,
  /** Nesting of maps and lists; the deepest OntoPlatform field is 8 levels down. */
  maxDepth: 64,
} as const;

export interface DocumentReport {
  /** 0-based position among the reports (a List's items count one each). */
  index: number;
  /**
   * namespace/name (or name) of a platform, OntoRelease/name of a release, or `#index` when the
   * document has none.
   */
  name: string;
  /** What the document was checked as: an OntoRelease, or an OntoPlatform (every other kind). */
  kind: "OntoPlatform" | "OntoRelease";
  /** The parsed document (undefined when YAML parsing failed). */
  object: unknown;
  /** The earlier document this one updates, if any. */
  updates?: number;
  issues: ValidationIssue[];
}

export function validateYamlStream(text: string): DocumentReport[] {
  const reports: DocumentReport[] = [];
  const seen = new Map<string, number>();
  const refuse = (name: string, message: string): void => {
    reports.push({
      index: reports.length,
      name,
      kind: "OntoPlatform",
      object: undefined,
      issues: [{ path: "", message }],
    });
  };
  let index = 0;
  for (const doc of parseAllDocuments(text, { merge: true, uniqueKeys: false })) {
    const at = index++;
    if (index > INPUT_LIMITS.maxDocuments) {
      refuse(`#${at}`, `more than ${INPUT_LIMITS.maxDocuments} documents in one file`);
      break;
    }
    const problem = doc.errors[0]?.message.split("\n")[0] ?? structureProblem(doc);
    if (problem !== undefined) {
      refuse(`#${at}`, `YAML: ${problem}`);
      continue;
    }
    let parsed: unknown;
    try {
      parsed = doc.toJS({ maxAliasCount: INPUT_LIMITS.maxAliases });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      refuse(
        `#${at}`,
        `YAML: ${/alias/i.test(reason) ? `more than ${INPUT_LIMITS.maxAliases} aliases` : reason}`,
      );
      continue;
    }
    if (parsed === null || parsed === undefined) continue; // an empty document, e.g. a trailing ---
    for (const [offset, object] of listItems(parsed).entries()) {
      const position = isList(parsed) ? `#${at}.items[${offset}]` : `#${at}`;
      if (reports.length >= INPUT_LIMITS.maxDocuments) {
        refuse(position, `more than ${INPUT_LIMITS.maxDocuments} documents in one file`);
        return reports;
      }
      const release = kindOf(object) === RELEASE_KIND;
      const key = identity(object, release);
      const previous = key === undefined ? undefined : seen.get(key);
      const old = previous === undefined ? undefined : reports.find((r) => r.index === previous)?.object;
      const reportIndex = reports.length;
      reports.push({
        index: reportIndex,
        name: key ?? position,
        kind: release ? "OntoRelease" : "OntoPlatform",
        object,
        ...(previous === undefined ? {} : { updates: previous }),
        // An OntoRelease has no transition rules: a repeated one is checked on its own.
        issues: release ? validateOntoRelease(object) : validateOntoPlatform(object, old),
      });
      if (key !== undefined) seen.set(key, reportIndex);
    }
  }
  return reports;
}

/** `kind: List` (or SomethingList) with an items array: what kubectl applies item by item. */
function isList(object: unknown): object is { items: unknown[] } {
  if (typeof object !== "object" || object === null) return false;
  const { kind, items } = object as { kind?: unknown; items?: unknown };
  return typeof kind === "string" && kind.endsWith("List") && Array.isArray(items);
}

function listItems(object: unknown): unknown[] {
  return isList(object) ? object.items : [object];
}

/**
 * Duplicate keys and nesting depth, in one pass over the document's nodes (linear in its size;
 * iterative, so no input can exhaust the stack). The merge key `<<` may repeat.
 */
function structureProblem(doc: Document.Parsed): string | undefined {
  const stack: { node: unknown; depth: number }[] = [{ node: doc.contents, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (isAlias(node) || isScalar(node) || node === null || node === undefined) continue;
    if (depth > INPUT_LIMITS.maxDepth) return `nesting deeper than ${INPUT_LIMITS.maxDepth} levels`;
    if (isMap(node)) {
      const keys = new Set<string>();
      for (const pair of node.items) {
        if (isScalar(pair.key)) {
          const key = String(pair.key.value);
          if (key !== "<<" && keys.has(key)) {
            const line = pair.key.range ? ` at offset ${pair.key.range[0]}` : "";
            return `duplicate key ${JSON.stringify(key.slice(0, 80))}${line}`;
          }
          keys.add(key);
        } else {
          stack.push({ node: pair.key, depth: depth + 1 });
        }
        stack.push({ node: pair.value, depth: depth + 1 });
      }
    } else if (isSeq(node)) {
      for (const item of node.items) stack.push({ node: item, depth: depth + 1 });
    }
  }
  return undefined;
}

function kindOf(object: unknown): unknown {
  return typeof object === "object" && object !== null ? (object as { kind?: unknown }).kind : undefined;
}

/** How a report names its document; a release (cluster-scoped) as OntoRelease/name. */
function identity(object: unknown, release: boolean): string | undefined {
  if (typeof object !== "object" || object === null) return undefined;
  const metadata = (object as { metadata?: { name?: unknown; namespace?: unknown } }).metadata;
  if (typeof metadata?.name !== "string") return undefined;
  if (release) return `${RELEASE_KIND}/${metadata.name}`;
  return typeof metadata.namespace === "string" ? `${metadata.namespace}/${metadata.name}` : metadata.name;
}
