// Building blocks for the OntoPlatform schema: defaulted properties, CEL rules, Kubernetes
// list/map markers, and the patterns for names and quantities. TypeBox gives JSON Schema plus
// static types; what it cannot express (which properties have a default, so that the resolved
// type may treat them as present) is added here as a type-level brand.
import { CloneType, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type {
  SchemaOptions,
  Static,
  TArray,
  TObject,
  TOptional,
  TProperties,
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
  // The brand exists only in the type system; at run time this is TypeBox's Optional.
  return Type.Optional(CloneType(schema, { default: complete })) as TDefaulted<T>;
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
export const DNS_LABEL = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
export const DNS_SUBDOMAIN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
/** A non-negative Kubernetes quantity: 2, 500m, 1.5, 4Gi, 100G, 1e3. */
export const QUANTITY = "^([0-9]+([.][0-9]*)?|[.][0-9]+)([KMGTPE]i|[mkMGTPE]|[eE][0-9]+)?$";
export const SEMVER =
  "^(0|[1-9][0-9]*)[.](0|[1-9][0-9]*)[.](0|[1-9][0-9]*)(-[0-9A-Za-z-]+([.][0-9A-Za-z-]+)*)?([+][0-9A-Za-z-]+([.][0-9A-Za-z-]+)*)?$";
/** A duration as hours, minutes and seconds, each optional, in that order: 4h, 1h30m, 90s. */
export const DURATION = "^([0-9]{1,3}h)?([0-9]{1,5}m)?([0-9]{1,6}s)?$";
/** A label key or extended resource name: optional DNS-subdomain prefix, then a name. */
export const QUALIFIED_NAME = "^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$";
export const LABEL_VALUE = "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$";

export function quantity(description: string): TString {
  return Type.String({ pattern: QUANTITY, maxLength: 32, description });
}

export function dnsLabel(description: string): TString {
  return Type.String({ pattern: DNS_LABEL, minLength: 1, maxLength: 63, description });
}

export function dnsSubdomain(description: string): TString {
  return Type.String({ pattern: DNS_SUBDOMAIN, minLength: 1, maxLength: 253, description });
}
