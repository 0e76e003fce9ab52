// Building blocks for the OntoPlatform schema: defaulted properties, CEL rules, Kubernetes
// list/map markers, and the patterns for names and quantities. TypeBox gives JSON Schema plus
// static types; what it cannot express (which properties have a default, so that the resolved
// type may treat them as present) is added here as a type-level brand.
import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type {
  SchemaOptions,
  Static,
  TArray,
  TInteger,
  TObject,
  TOptional,
  TProperties,
  TRecord,
  TSchema,
  TString,
} from "@sinclair/typebox";

declare const DefaultedBrand: unique symbol;

/** An optional property that carries a default: absent in what a user writes, present once resolved. */
export type TDefaulted<T extends TSchema> = TOptional<T> & { readonly [DefaultedBrand]: true };

/**
 * Marks `schema` optional with `value` as its OpenAPI default. The API server applies the same
 * default when it stores the object; `resolveSpec` applies it in memory.
 *
 * An object default is completed with the defaults of its own fields (`{}` becomes the whole
 * default object): the API server checks a default against the CEL rules of its node without
 * defaulting inside it first, so a rule such as `self.minReplicas <= self.maxReplicas` needs
 * those fields present in the default itself.
 */
export function defaulted<T extends TSchema>(schema: T, value: Static<T>): TDefaulted<T> {
  const complete: unknown = typeof value === "object" ? Value.Default(schema, structuredClone(value)) : value;
  // The brand exists only in the type system; at run time this is TypeBox's Optional. A shallow
  // copy, as TypeBox's CloneType(schema, { default }) gives but without cloning the subtree: the
  // schema is never mutated and shares subtrees already, and the deep clone of each defaulted
  // object (nested ones cloned again by their parents) was most of building the schema when
  // src/api loads.
  return Type.Optional({ default: complete, ...schema }) as TDefaulted<T>;
}

type Flatten<T> = { [K in keyof T]: T[K] } & {};
type OptionalKeys<P extends TProperties> = {
  [K in keyof P]: P[K] extends TDefaulted<TSchema> ? never : P[K] extends TOptional<TSchema> ? K : never;
}[keyof P];
type ResolvedObject<P extends TProperties> = Flatten<
  { [K in Exclude<keyof P, OptionalKeys<P>>]: Resolved<P[K]> } & { [K in OptionalKeys<P>]?: Resolved<P[K]> }
>;

/** The static type of `T` after defaulting: defaulted properties are required, deeply. */
export type Resolved<T extends TSchema> =
  T extends TObject<infer P> ? ResolvedObject<P> : T extends TArray<infer I> ? Resolved<I>[] : Static<T>;

/** One `x-kubernetes-validations` entry: a CEL rule evaluated by the API server (and by `onto validate`). */
export interface CelRule {
  rule: string;
  message: string;
  /** Relative JSON path (e.g. `.maxReplicas`) of the field the error should name. */
  fieldPath?: string;
  reason?: "FieldValueInvalid" | "FieldValueForbidden" | "FieldValueRequired" | "FieldValueDuplicate";
}

/** Schema options that attach CEL rules. */
export function cel(...rules: CelRule[]): SchemaOptions {
  return { "x-kubernetes-validations": rules };
}

/** CEL: `a <= b` for two quantity-valued expressions, true when either is not a quantity. */
export function quantityAtMost(a: string, b: string): string {
  return `!isQuantity(${a}) || !isQuantity(${b}) || quantity(${a}).compareTo(quantity(${b})) <= 0`;
}

/** CEL: every item of the list `self` has a distinct `key`. */
export function uniqueBy(key: string): string {
  return `self.all(x, self.exists_one(y, y.${key} == x.${key}))`;
}

// Patterns. They are plain regular expressions accepted by both RE2 (the API server) and
// JavaScript, with no backslash escapes so that they can be embedded in CEL string literals.
// Every repetition a user controls is bounded (by the pattern or by the field's maxLength), so no
// value can ask for unbounded work: see `unboundedFields` for the rule and its test.
export const DNS_LABEL = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
export const DNS_SUBDOMAIN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
/**
 * The largest decimal exponent a quantity may carry (`1e18`, like the `E` suffix). The exact
 * arithmetic of quantities (src/api/quantity.ts) costs time in the exponent: an unbounded one
 * (`1e100000000`, ten characters) would stall every render and drift check.
 */
export const MAX_QUANTITY_EXPONENT = 18;
/** The largest quantity any field takes: an int64 holds it, so the API server stores it exactly. */
export const MAX_QUANTITY = "1Ei";
/**
 * A non-negative Kubernetes quantity: 2, 500m, 1.5, 4Gi, 100G, 1e3. At most 3 decimals, and
 * `m` only after a whole number: the API server keeps quantities to the milli-unit and rounds
 * anything finer up (".6374" is stored as "638m"), so a finer value would never match what the
 * operator reads back and every reconcile would see drift. The exponent is at most 18.
 */
export const QUANTITY =
  "^(([0-9]+([.][0-9]{0,3})?|[.][0-9]{1,3})([KMGTPE]i|[kMGTPE]|[eE]([0-9]|1[0-8]))?|[0-9]+m)$";
/** A volume size: a quantity with a byte suffix or none (100Gi, 500G, 1e9), at most 3 decimals. */
export const STORAGE_QUANTITY = "^([0-9]+([.][0-9]{0,3})?|[.][0-9]{1,3})([KMGTPE]i|[kMGTPE])?$";
export const SEMVER =
  "^(0|[1-9][0-9]*)[.](0|[1-9][0-9]*)[.](0|[1-9][0-9]*)(-[0-9A-Za-z-]+([.][0-9A-Za-z-]+)*)?([+][0-9A-Za-z-]+([.][0-9A-Za-z-]+)*)?$";
/** A duration as hours, minutes and seconds, each optional, in that order: 2160h, 1h30m, 90s. */
export const DURATION = "^([0-9]{1,6}h)?([0-9]{1,6}m)?([0-9]{1,6}s)?$";
/**
 * A label key or resource name as Kubernetes' IsQualifiedName checks it: an optional DNS
 * subdomain prefix and '/', then a name of at most 63 characters. The prefix's own bound (253)
 * is QUALIFIED_NAME_PREFIX, a second pattern: one regular expression cannot bound both.
 */
export const QUALIFIED_NAME =
  "^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$";
export const QUALIFIED_NAME_PREFIX = "^([^/]{1,253}/)?[^/]*$";
/** The longest qualified name: a 253-character prefix, '/', a 63-character name. */
export const QUALIFIED_NAME_MAX = 317;
export const LABEL_VALUE = "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$";

/** CEL: the string `expr` is a qualified name (both patterns). */
export function isQualifiedName(expr: string): string {
  return `${expr}.size() <= ${QUALIFIED_NAME_MAX} && ${expr}.matches('${QUALIFIED_NAME}') && ${expr}.matches('${QUALIFIED_NAME_PREFIX}')`;
}

/**
 * A quantity field: the pattern bounds the exponent, maxLength the digits, and a CEL rule the
 * value (at most MAX_QUANTITY).
 */
export function quantity(description: string): TString {
  return Type.String({
    pattern: QUANTITY,
    maxLength: 32,
    description,
    ...cel({
      rule: `!isQuantity(self) || quantity(self).compareTo(quantity('${MAX_QUANTITY}')) <= 0`,
      message: `must be at most ${MAX_QUANTITY}`,
    }),
  });
}

/** An RFC 3339 time (status): bounded like every other string. */
export function dateTime(description?: string): TString {
  return Type.String({ format: "date-time", maxLength: 64, ...(description ? { description } : {}) });
}

/** A count (pods, components, generations): from 0 to what a JSON number holds exactly. */
export function count(description?: string): TInteger {
  return Type.Integer({
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    ...(description ? { description } : {}),
  });
}

export function dnsLabel(description: string): TString {
  return Type.String({ pattern: DNS_LABEL, minLength: 1, maxLength: 63, description });
}

export function dnsSubdomain(description: string): TString {
  return Type.String({ pattern: DNS_SUBDOMAIN, minLength: 1, maxLength: 253, description });
}

/** A label key (node selector, taint key): a qualified name. */
export function qualifiedName(description: string): TString {
  return Type.String({
    pattern: QUALIFIED_NAME,
    maxLength: QUALIFIED_NAME_MAX,
    description,
    ...cel({
      rule: `self.matches('${QUALIFIED_NAME_PREFIX}')`,
      message: "the prefix before '/' must be at most 253 characters",
    }),
  });
}

/**
 * An extended resource name (nvidia.com/gpu), as the API server checks a container's resource
 * names: a qualified name with a prefix outside kubernetes.io, not starting with "requests.",
 * whose quota name "requests.<name>" is a qualified name too (so the prefix has at most 244
 * characters).
 */
export function extendedResourceName(description: string): TString {
  return Type.String({
    pattern:
      "^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$",
    maxLength: 244 + 1 + 63,
    description,
    ...cel(
      {
        rule: "self.matches('^[^/]{1,244}/')",
        message: "the domain before '/' must be at most 244 characters",
      },
      {
        rule: "!self.contains('kubernetes.io/') && !self.startsWith('requests.')",
        message:
          "an extended resource is named in a domain of its own, not kubernetes.io, e.g. nvidia.com/gpu",
      },
    ),
  });
}

/** What the keys of a bounded map may be; kept on the schema node for generators and docs. */
export interface MapKeys {
  /** CEL over one key `k`: true when the key is acceptable (its length bound included). */
  rule: (k: string) => string;
  message: string;
  /** Longest key; the rule enforces it. */
  maxLength: number;
  /** Keys a test generator may draw from (regular expressions, or fixed names). */
  examples: { patterns?: string[]; names?: string[] };
}

/** Symbol under which a map's key bounds sit on its schema node (dropped from the CRD's JSON). */
export const MAP_KEYS = Symbol.for("onto.paas/map-keys");

/**
 * A map (Type.Record) with bounded entries and keys. A structural schema cannot constrain map
 * keys, so the key rule is a CEL rule on the map; the API server names the map's path.
 */
export function boundedMap<V extends TSchema>(
  value: V,
  opts: { maxProperties: number; description: string; keys: MapKeys; rules?: CelRule[] },
): TRecord<TString, V> {
  const schema = Type.Record(Type.String(), value, {
    maxProperties: opts.maxProperties,
    description: opts.description,
    ...cel(
      { rule: `self.all(k, ${opts.keys.rule("k")})`, message: opts.keys.message },
      ...(opts.rules ?? []),
    ),
  });
  (schema as unknown as Record<symbol, unknown>)[MAP_KEYS] = opts.keys;
  return schema;
}

/**
 * Every field of `schema` a user could make arbitrarily large: a string without maxLength (or
 * a closed set of values), a number without minimum and maximum, a list without maxItems, a map
 * without maxProperties and a key bound (boundedMap). The CRD then refuses what is too large
 * with the field's path, and no code path needs to guard against it. The kit's rule: a unit test
 * requires this to be empty for the spec and the status.
 */
export function unboundedFields(schema: TSchema, path = ""): string[] {
  const node = schema as unknown as Record<string | symbol, unknown>;
  const out: string[] = [];
  const type = node.type;
  if (Array.isArray(node.anyOf)) return out; // a union of literals: a closed set
  if (type === "string" && node.const === undefined && typeof node.maxLength !== "number")
    out.push(`${path}: string without maxLength`);
  if (
    (type === "integer" || type === "number") &&
    (typeof node.minimum !== "number" || typeof node.maximum !== "number")
  )
    out.push(`${path}: number without minimum and maximum`);
  if (type === "array") {
    if (typeof node.maxItems !== "number") out.push(`${path}: list without maxItems`);
    out.push(...unboundedFields(node.items as TSchema, `${path}[]`));
  }
  if (node.patternProperties) {
    if (typeof node.maxProperties !== "number") out.push(`${path}: map without maxProperties`);
    if (!node[MAP_KEYS]) out.push(`${path}: map keys unbounded (use boundedMap)`);
    for (const value of Object.values(node.patternProperties as Record<string, TSchema>))
      out.push(...unboundedFields(value, `${path}[key]`));
  }
  for (const [key, child] of Object.entries((node.properties as Record<string, TSchema> | undefined) ?? {}))
    out.push(...unboundedFields(child, `${path}.${key}`));
  return out;
}
