// Offline validation of an OntoPlatform, in the API server's order: default the spec, check it
// against the schema (types, enums, ranges, patterns, unknown fields as with
// fieldValidation=Strict), then evaluate the CRD's own CEL rule strings on every node that has
// them. `onto validate` prints what this returns; a cluster test checks that the API server
// refuses exactly the files this refuses.
import { Value } from "@sinclair/typebox/value";
import { ValueErrorType } from "@sinclair/typebox/errors";
import type { TSchema } from "@sinclair/typebox";
import type { Environment, ParseResult } from "@marcbachmann/cel-js";
import { API_VERSION, KIND, RELEASE_KIND } from "./constants.js";
import { kubernetesCelEnvironment } from "./kubernetes-cel.js";
import { OntoReleaseSpecSchema } from "./release-schema.js";
import { MAX_PLATFORM_NAME, OntoPlatformSpecSchema } from "./schema.js";
import type { CelRule } from "./schema-kit.js";
import { DNS_SUBDOMAIN } from "./schema-kit.js";

export interface ValidationIssue {
  /** Field path as the API server writes it, e.g. spec.infrastructure.kafka.topics[0].name. */
  path: string;
  message: string;
  /** The CEL rule that failed, when the issue comes from one. */
  rule?: string;
}

type Node = Record<string, unknown>;

/**
 * Errors after which the API server skips CEL rules (its hasBlockingErr): a wrong type, an
 * unsupported enum value, a missing field, a string too long, a list or map with too many items.
 */
const BLOCKING_ERRORS = new Set<ValueErrorType>([
  ValueErrorType.Array,
  ValueErrorType.Boolean,
  ValueErrorType.Integer,
  ValueErrorType.Number,
  ValueErrorType.Object,
  ValueErrorType.String,
  ValueErrorType.Union,
  ValueErrorType.ObjectRequiredProperty,
  ValueErrorType.StringMaxLength,
  ValueErrorType.ArrayMaxItems,
  ValueErrorType.ObjectMaxProperties,
]);

/** The API server's own cause when it skipped the CEL rules; it names no field. */
export const RULES_NOT_CHECKED =
  "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation";

// Built on the first validation, not when src/api loads: most importers (the controllers, the
// commands that only talk to a cluster) never validate offline. Each is built once per process.
let strictSpecSchema: Node | undefined;
let strictReleaseSchema: Node | undefined;
let celEnvironment: Environment | undefined;
/** Parsed CEL rules by rule text; a rule is parsed the first time a value reaches its node. */
const compiled = new Map<string, ParseResult>();

/**
 * Validates a parsed OntoPlatform document. `old` is the previous version of the object: with
 * it, the transition rules (those that read oldSelf, e.g. storage never shrinks) are evaluated
 * too, as on an update; without it they are skipped, as on a create.
 */
export function validateOntoPlatform(doc: unknown, old?: unknown): ValidationIssue[] {
  if (!isObject(doc)) return [{ path: "", message: "must be a YAML/JSON object" }];
  const issues: ValidationIssue[] = [];
  if (doc.apiVersion !== API_VERSION)
    issues.push({
      path: "apiVersion",
      message: `must be ${API_VERSION}, got ${JSON.stringify(doc.apiVersion)}`,
    });
  if (doc.kind !== KIND)
    issues.push({ path: "kind", message: `must be ${KIND}, got ${JSON.stringify(doc.kind)}` });
  const metadata = doc.metadata;
  let blocking = false;
  if (!isObject(metadata) || typeof metadata.name !== "string" || metadata.name === "") {
    issues.push({ path: "metadata.name", message: "Required value: name is required" });
  } else if (metadata.name.length > MAX_PLATFORM_NAME) {
    blocking = true;
    issues.push({
      path: "metadata.name",
      message: `Too long: may not be more than ${MAX_PLATFORM_NAME} bytes (the name is a label value of every object the platform owns)`,
    });
  } else if (!new RegExp(DNS_SUBDOMAIN).test(metadata.name)) {
    issues.push({
      path: "metadata.name",
      message:
        "must be a lowercase DNS subdomain: letters, digits, '-' and '.', starting and ending alphanumeric",
    });
  }
  for (const key of Object.keys(doc)) {
    if (!["apiVersion", "kind", "metadata", "spec", "status"].includes(key))
      issues.push({ path: key, message: `unknown field "${key}"` });
  }
  if (doc.spec === undefined) {
    issues.push({ path: "spec", message: "Required value: spec is required" });
    return issues;
  }
  return [...issues, ...validateSpec(doc.spec, isObject(old) ? old.spec : undefined, blocking)];
}

/**
 * Validates a spec as written (defaults are applied first, as the API server does).
 * `blocked`: an error outside the spec already stops the CEL rules (metadata.name too long).
 */
export function validateSpec(spec: unknown, oldSpec?: unknown, blocked = false): ValidationIssue[] {
  strictSpecSchema ??= strict(OntoPlatformSpecSchema);
  return validateWith(OntoPlatformSpecSchema, strictSpecSchema, spec, oldSpec, blocked);
}

/** Validates a parsed OntoRelease document (cluster-scoped: no namespace). */
export function validateOntoRelease(doc: unknown): ValidationIssue[] {
  if (!isObject(doc)) return [{ path: "", message: "must be a YAML/JSON object" }];
  const issues: ValidationIssue[] = [];
  if (doc.apiVersion !== API_VERSION)
    issues.push({
      path: "apiVersion",
      message: `must be ${API_VERSION}, got ${JSON.stringify(doc.apiVersion)}`,
    });
  if (doc.kind !== RELEASE_KIND)
    issues.push({ path: "kind", message: `must be ${RELEASE_KIND}, got ${JSON.stringify(doc.kind)}` });
  const metadata = doc.metadata;
  if (
    !isObject(metadata) ||
    typeof metadata.name !== "string" ||
    !new RegExp(DNS_SUBDOMAIN).test(metadata.name)
  )
    issues.push({ path: "metadata.name", message: "Required value: a lowercase DNS subdomain" });
  if (doc.spec === undefined)
    return [...issues, { path: "spec", message: "Required value: spec is required" }];
  strictReleaseSchema ??= strict(OntoReleaseSpecSchema);
  return [...issues, ...validateWith(OntoReleaseSpecSchema, strictReleaseSchema, doc.spec, undefined)];
}

function validateWith(
  schema: TSchema,
  strictSchema: Node,
  spec: unknown,
  oldSpec: unknown,
  blocked = false,
): ValidationIssue[] {
  const defaulted = Value.Default(schema, structuredClone(spec));
  const issues: ValidationIssue[] = [];
  let blocking = blocked;
  for (const error of Value.Errors(strictSchema as unknown as TSchema, defaulted)) {
    // A missing required field is reported once, as Required value, not also as a wrong type.
    if (error.value === undefined && error.type !== ValueErrorType.ObjectRequiredProperty) continue;
    if (BLOCKING_ERRORS.has(error.type)) blocking = true;
    issues.push({
      path: fieldPath("spec", error.path),
      message: describe(error.type, error.message, error.schema),
    });
  }
  // Like the API server, evaluate CEL only when no blocking error was found, and say so.
  if (blocking) issues.push({ path: "", message: RULES_NOT_CHECKED });
  else {
    const old = oldSpec === undefined ? undefined : Value.Default(schema, structuredClone(oldSpec));
    checkRules(schema, defaulted, old, "spec", issues);
  }
  return issues;
}

/** Evaluates the x-kubernetes-validations of `schema` and its descendants against `value`. */
function checkRules(
  schema: Node,
  value: unknown,
  old: unknown,
  path: string,
  issues: ValidationIssue[],
): void {
  if (value === undefined) return;
  const rules = schema["x-kubernetes-validations"] as CelRule[] | undefined;
  for (const rule of rules ?? []) {
    const transition = /\boldSelf\b/.test(rule.rule);
    if (transition && old === undefined) continue;
    const context: Record<string, unknown> = { self: toCel(schema, value) };
    if (transition) context.oldSelf = toCel(schema, old);
    const where = rule.fieldPath ? path + rule.fieldPath : path;
    try {
      if (evaluate(rule.rule, context) !== true)
        issues.push({ path: where, message: rule.message, rule: rule.rule });
    } catch (err) {
      const reason = err instanceof Error ? err.message.split("\n")[0] : String(err);
      issues.push({ path: where, message: `rule could not be evaluated: ${reason}`, rule: rule.rule });
    }
  }
  const properties = schema.properties as Record<string, Node> | undefined;
  if (properties && isObject(value)) {
    for (const [key, child] of Object.entries(properties)) {
      checkRules(child, value[key], isObject(old) ? old[key] : undefined, `${path}.${key}`, issues);
    }
  }
  const record = recordValueSchema(schema);
  if (record && isObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      checkRules(record, item, isObject(old) ? old[key] : undefined, `${path}[${key}]`, issues);
    }
  }
  const items = schema.items as Node | undefined;
  if (items && Array.isArray(value)) {
    const keys = schema["x-kubernetes-list-map-keys"] as string[] | undefined;
    value.forEach((item: unknown, i) => {
      // Like the API server, items of a listType=map list meet their old selves by key.
      const previous: unknown =
        keys && Array.isArray(old)
          ? (old as unknown[]).find(
              (o) => isObject(o) && isObject(item) && keys.every((k) => o[k] === item[k]),
            )
          : undefined;
      checkRules(items, item, previous, `${path}[${i}]`, issues);
    });
  }
}

function evaluate(rule: string, context: Record<string, unknown>): unknown {
  let parsed = compiled.get(rule);
  if (!parsed) {
    celEnvironment ??= kubernetesCelEnvironment();
    parsed = celEnvironment.parse(rule);
    compiled.set(rule, parsed);
  }
  return parsed(context);
}

/** The value as CEL sees it: integers (by schema) become CEL ints (BigInt). */
function toCel(schema: Node | undefined, value: unknown): unknown {
  if (schema?.type === "integer" && typeof value === "number") return BigInt(value);
  if (Array.isArray(value)) return value.map((item) => toCel(schema?.items as Node | undefined, item));
  if (isObject(value)) {
    const properties = schema?.properties as Record<string, Node> | undefined;
    const record = schema ? recordValueSchema(schema) : undefined;
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, toCel(properties?.[k] ?? record, v)]),
    );
  }
  return value;
}

function recordValueSchema(schema: Node): Node | undefined {
  const patterns = schema.patternProperties as Record<string, Node> | undefined;
  return patterns ? Object.values(patterns)[0] : undefined;
}

/** A copy of `schema` that refuses unknown properties, as the API server does with fieldValidation=Strict. */
function strict(schema: Node): Node {
  const copy: Node = { ...schema };
  if (isObject(schema.properties)) {
    copy.properties = Object.fromEntries(
      Object.entries(schema.properties).map(([k, v]) => [k, strict(v as Node)]),
    );
    copy.additionalProperties = false;
  }
  if (isObject(schema.items)) copy.items = strict(schema.items);
  if (isObject(schema.patternProperties)) {
    copy.patternProperties = Object.fromEntries(
      Object.entries(schema.patternProperties).map(([k, v]) => [k, strict(v as Node)]),
    );
  }
  return copy;
}

function describe(type: ValueErrorType, message: string, schema: unknown): string {
  if (type === ValueErrorType.ObjectAdditionalProperties) return "unknown field";
  if (type === ValueErrorType.ObjectRequiredProperty) return "Required value";
  if (type === ValueErrorType.StringPattern && isObject(schema) && typeof schema.description === "string")
    return `${message}: ${schema.description}`;
  if (type === ValueErrorType.Union && isObject(schema) && Array.isArray(schema.anyOf)) {
    const values = (schema.anyOf as Node[]).map((option) => JSON.stringify(option.const));
    return `Unsupported value: must be one of ${values.join(", ")}`;
  }
  return message;
}

/** `/infrastructure/kafka/topics/0/name` under `spec` -> `spec.infrastructure.kafka.topics[0].name`. */
function fieldPath(root: string, pointer: string): string {
  let path = root;
  for (const raw of pointer.split("/").slice(1)) {
    const segment = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    path += /^[0-9]+$/.test(segment) ? `[${segment}]` : `.${segment}`;
  }
  return path;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
