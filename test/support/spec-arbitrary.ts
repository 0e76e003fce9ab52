// fast-check generators derived from the OntoPlatform schema itself: every field the schema has
// is generated from what the schema says of it (enums, ranges, patterns, lengths, list and map
// bounds, map keys from boundedMap), so a field added to the schema is fuzzed without touching
// this file. What the schema cannot say (which versions exist in the release catalog) comes in
// as overrides by path. Generated specs are valid for the schema's types and patterns; CEL rules
// across fields may or may not hold, which is what the agreement property wants. `mutation`
// breaks one field of a spec on purpose, naming the path it broke.
import fc from "fast-check";
import type { TSchema } from "@sinclair/typebox";
import { OntoPlatformSpecSchema } from "../../src/api/schema.js";
import { MAP_KEYS, type MapKeys } from "../../src/api/schema-kit.js";

type Node = Record<string | symbol, unknown>;

export interface SchemaArbitraryOptions {
  /** Arbitraries replacing the schema's own at these paths (e.g. "spec.version"). */
  overrides?: Record<string, fc.Arbitrary<unknown>>;
  /** Weight of "absent" against 1 for "present" for optional fields (default 3: mostly defaults). */
  absentWeight?: number;
  /** Most items generated for a list or map, below its maxItems (default 3). */
  maxGeneratedItems?: number;
  /**
   * Repairs by path suffix: four values in five of the generated node are passed through it,
   * the fifth left as generated. For the CEL rules across fields, which the schema cannot give a
   * generator; without them few whole specs would hold every rule.
   */
  repairs?: Record<string, (value: never) => unknown>;
}

const OPTIONAL = Symbol.for("TypeBox.Optional");

/** An arbitrary of values for `schema` at `path` (paths as the API server writes them, lists as []). */
export function schemaArbitrary(
  schema: TSchema,
  path: string,
  opts: SchemaArbitraryOptions = {},
): fc.Arbitrary<unknown> {
  const node = schema as unknown as Node;
  const override = opts.overrides?.[path];
  if (override) return override;
  const repair = Object.entries(opts.repairs ?? {}).find(([suffix]) => path.endsWith(suffix))?.[1];
  if (repair) {
    const inner = schemaArbitrary(schema, path, { ...opts, repairs: withoutValue(opts.repairs!, repair) });
    return fc
      .tuple(inner, fc.integer({ min: 0, max: 4 }))
      .map(([value, draw]) => (draw === 0 ? value : repair(structuredClone(value) as never)));
  }
  if (Array.isArray(node.anyOf))
    return fc.constantFrom(...(node.anyOf as Node[]).map((option) => option.const));
  switch (node.type) {
    case "boolean":
      return fc.boolean();
    case "integer":
    case "number":
      return numberArbitrary(node);
    case "string":
      return stringArbitrary(node);
    case "array":
      return arrayArbitrary(node, path, opts);
    case "object":
      return node.patternProperties ? mapArbitrary(node, path, opts) : objectArbitrary(node, path, opts);
    default:
      throw new Error(`spec-arbitrary: no generator for ${path} (${String(node.type)})`);
  }
}

function withoutValue<V>(record: Record<string, V>, value: V): Record<string, V> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== value));
}

function numberArbitrary(node: Node): fc.Arbitrary<number> {
  const min = node.minimum as number;
  const max = node.maximum as number;
  if (node.type === "integer")
    return fc.oneof(
      fc.constantFrom(min, max),
      fc.integer({ min, max: Math.min(max, min + 20) }),
      fc.integer({ min, max }),
    );
  return fc.oneof(
    fc.constantFrom(min, max),
    fc.double({ min, max, noNaN: true, noDefaultInfinity: true }).map((n) => Math.round(n * 100) / 100),
  );
}

function stringArbitrary(node: Node): fc.Arbitrary<string> {
  const minLength = typeof node.minLength === "number" ? node.minLength : 0;
  const maxLength = typeof node.maxLength === "number" ? node.maxLength : 64;
  const fits = (s: string): boolean => s.length >= minLength && s.length <= maxLength;
  if (node.format === "date-time") return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
  if (typeof node.pattern === "string") {
    // Mostly short values; some long ones, which reach the length bounds inside a pattern
    // (a 63-character name part, a 253-character prefix).
    const pattern = new RegExp(node.pattern);
    return fc
      .oneof(
        { weight: 4, arbitrary: fc.stringMatching(pattern) },
        { weight: 1, arbitrary: fc.stringMatching(pattern, { size: "+1" }) },
      )
      .filter(fits);
  }
  return fc.string({ minLength, maxLength: Math.min(maxLength, 40) });
}

function arrayArbitrary(node: Node, path: string, opts: SchemaArbitraryOptions): fc.Arbitrary<unknown[]> {
  const item = schemaArbitrary(node.items as TSchema, `${path}[]`, opts);
  const maxLength = Math.min((node.maxItems as number | undefined) ?? 0, opts.maxGeneratedItems ?? 3);
  const keys = node["x-kubernetes-list-map-keys"] as string[] | undefined;
  if (keys)
    return fc.uniqueArray(item, {
      maxLength,
      selector: (v) => JSON.stringify(keys.map((k) => (v as Record<string, unknown>)[k])),
    });
  if (node["x-kubernetes-list-type"] === "set") return fc.uniqueArray(item, { maxLength });
  return fc.array(item, { maxLength });
}

function mapArbitrary(node: Node, path: string, opts: SchemaArbitraryOptions): fc.Arbitrary<unknown> {
  const keys = node[MAP_KEYS] as MapKeys | undefined;
  if (!keys) throw new Error(`spec-arbitrary: map ${path} has no key bounds (boundedMap)`);
  const key = fc.oneof(
    ...(keys.examples.names?.length
      ? [{ weight: 4, arbitrary: fc.constantFrom(...keys.examples.names) }]
      : []),
    ...(keys.examples.patterns ?? []).map((p) => ({
      weight: 4,
      arbitrary: fc.stringMatching(new RegExp(p)),
    })),
    // Keys the key rule may refuse: more than one '/', long name parts, capitals, dots at the ends.
    { weight: 1, arbitrary: fc.stringMatching(/^[-a-zA-Z0-9._/]{1,90}$/) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.integer({ min: 1, max: 260 }), fc.integer({ min: 1, max: 70 }))
        .map(([prefix, name]) => `${"d".repeat(prefix)}/${"n".repeat(name)}`),
    },
  );
  const value = schemaArbitrary(
    Object.values(node.patternProperties as Record<string, TSchema>)[0]!,
    `${path}[key]`,
    opts,
  );
  const maxKeys = Math.min(node.maxProperties as number, opts.maxGeneratedItems ?? 3);
  return fc.dictionary(key, value, { maxKeys, noNullPrototype: true });
}

function objectArbitrary(node: Node, path: string, opts: SchemaArbitraryOptions): fc.Arbitrary<unknown> {
  const properties = (node.properties as Record<string, Node> | undefined) ?? {};
  const required = new Set((node.required as string[] | undefined) ?? []);
  const absent = opts.absentWeight ?? 3;
  const fields: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [key, child] of Object.entries(properties)) {
    const value = schemaArbitrary(child as unknown as TSchema, `${path}.${key}`, opts);
    // An optional object is present half the time (deep fields must be reachable: a leaf five
    // objects down is still set in one spec in about 60); an optional leaf less often.
    const weight = child.type === "object" && child.properties ? 1 : absent;
    fields[key] =
      required.has(key) && !child[OPTIONAL]
        ? value
        : fc.oneof({ weight, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: value });
  }
  return fc
    .record(fields)
    .map((record) => Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)));
}

/** Platform names: DNS subdomains, mostly short, sometimes at or past the 63-character bound. */
export const platformNameArbitrary: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.stringMatching(/^[a-z]([-a-z0-9]{0,20}[a-z0-9])?$/) },
  { weight: 1, arbitrary: fc.integer({ min: 60, max: 70 }).map((n) => `p${"a".repeat(n - 2)}z`) },
);

type Loose = Record<string, unknown>;
const COUNTED =
  /^(pods|resourcequotas|services|replicationcontrollers|secrets|configmaps|persistentvolumeclaims|services[.]nodeports|services[.]loadbalancers|count\/.*)$/;

/** Repairs for the common cross-field rules of the spec (see SchemaArbitraryOptions.repairs). */
export const SPEC_REPAIRS: Record<string, (value: never) => unknown> = {
  // A toleration without a key must be Exists (and then has no value); tolerationSeconds needs NoExecute.
  "tolerations[]": (t: Loose) => {
    const out: Loose = { ...t };
    if (out.key === undefined) out.operator = "Exists";
    if (out.operator === "Exists") delete out.value;
    if (out.tolerationSeconds !== undefined) out.effect = "NoExecute";
    return out;
  },
  autoscaling: (a: Loose) => {
    const min = (a.minReplicas as number | undefined) ?? 2;
    const max = (a.maxReplicas as number | undefined) ?? 10;
    return min <= max ? a : { ...a, minReplicas: max, maxReplicas: min };
  },
  tenancy: (t: Loose) =>
    t.resourceQuota !== undefined || t.networkPolicy !== undefined ? { ...t, mode: "namespace" } : t,
  // Counted quota resources take whole numbers, written the way CEL reads integers.
  "tenancy.resourceQuota": (q: Record<string, string>) =>
    Object.fromEntries(Object.entries(q).map(([k, v]) => [k, COUNTED.test(k) ? String(v.length) : v])),
  "infrastructure.redis": (r: Loose) =>
    r.mode === "sentinel"
      ? { ...r, replicas: Math.max(3, Number(r.replicas ?? 3)) }
      : { ...r, mode: "standalone", replicas: 1 },
  "infrastructure.minio": (m: Loose) =>
    m.replicas === undefined || m.replicas === 1 || Number(m.replicas) >= 4 ? m : { ...m, replicas: 4 },
  "spec.global": (g: Loose) =>
    g.tlsEnabled === true && g.tlsSecretName === undefined ? { ...g, tlsSecretName: "onto-tls" } : g,
};

/** Specs from the schema, for the release versions that exist (a few of any other semver). */
export function specArbitrary(
  versions: readonly string[],
  opts: SchemaArbitraryOptions = {},
): fc.Arbitrary<unknown> {
  return schemaArbitrary(OntoPlatformSpecSchema, "spec", {
    repairs: SPEC_REPAIRS,
    ...opts,
    overrides: {
      "spec.version": fc.oneof(
        { weight: 9, arbitrary: fc.constantFrom(...versions) },
        { weight: 1, arbitrary: fc.stringMatching(/^[0-9]{1,2}[.][0-9]{1,2}[.][0-9]{1,2}$/) },
      ),
      ...opts.overrides,
    },
  });
}

/** One field broken on purpose: the path the refusal must name, and the spec with it. */
export interface Mutation {
  path: string;
  how: string;
  spec: unknown;
}

/**
 * Breaks one leaf of `spec` that the schema bounds: a number past its range, a string past its
 * length or outside its pattern, an enum value that is not one, a list past maxItems, a field of
 * the wrong type. `pick` chooses among the breakable leaves (a number in [0, 1)).
 */
export function mutate(spec: unknown, pick: number, kind: number): Mutation | undefined {
  const leaves: { path: string; pointer: (string | number)[]; schema: Node }[] = [];
  collect(OntoPlatformSpecSchema as unknown as Node, spec, "spec", [], leaves);
  if (leaves.length === 0) return undefined;
  const leaf = leaves[Math.floor(pick * leaves.length)]!;
  const broken = breakValue(leaf.schema, kind);
  if (!broken) return undefined;
  const copy = structuredClone(spec) as Record<string, unknown>;
  let at: Record<string | number, unknown> = copy;
  for (const step of leaf.pointer.slice(0, -1)) at = at[step] as Record<string | number, unknown>;
  at[leaf.pointer.at(-1)!] = broken.value;
  return { path: broken.path === "" ? leaf.path : `${leaf.path}${broken.path}`, how: broken.how, spec: copy };
}

function collect(
  schema: Node,
  value: unknown,
  path: string,
  pointer: (string | number)[],
  out: { path: string; pointer: (string | number)[]; schema: Node }[],
): void {
  if (value === undefined) return;
  if (schema.type === "object" && schema.properties && typeof value === "object" && value !== null) {
    for (const [key, child] of Object.entries(schema.properties as Record<string, Node>))
      collect(child, (value as Record<string, unknown>)[key], `${path}.${key}`, [...pointer, key], out);
    return;
  }
  if (schema.type === "array" && Array.isArray(value)) {
    if (pointer.length > 0) out.push({ path, pointer, schema });
    value.forEach((item, i) => collect(schema.items as Node, item, `${path}[${i}]`, [...pointer, i], out));
    return;
  }
  if (schema.patternProperties) return; // map values: their path names a key the server quotes
  if (pointer.length > 0) out.push({ path, pointer, schema });
}

function breakValue(schema: Node, kind: number): { value: unknown; how: string; path: string } | undefined {
  const options: { value: unknown; how: string; path?: string }[] = [];
  if (Array.isArray(schema.anyOf)) options.push({ value: "NotAValue", how: "an enum value that is not one" });
  if (schema.type === "integer" || schema.type === "number") {
    if (typeof schema.maximum === "number") options.push({ value: schema.maximum + 1, how: "above maximum" });
    if (typeof schema.minimum === "number") options.push({ value: schema.minimum - 1, how: "below minimum" });
    options.push({ value: "seven", how: "a string for a number" });
  }
  if (schema.type === "string" && !Array.isArray(schema.anyOf)) {
    if (typeof schema.maxLength === "number")
      options.push({ value: "a".repeat(schema.maxLength + 1), how: "longer than maxLength" });
    if (typeof schema.pattern === "string" && !new RegExp(schema.pattern).test("Not Valid!"))
      options.push({ value: "Not Valid!", how: "outside the pattern" });
    options.push({ value: 12, how: "a number for a string" });
  }
  if (schema.type === "boolean") options.push({ value: "yes", how: "a string for a boolean" });
  if (schema.type === "array" && typeof schema.maxItems === "number" && schema.items) {
    const item = (schema.items as Node).type === "string" ? "x" : {};
    options.push({
      value: Array.from({ length: schema.maxItems + 1 }, () => item),
      how: "more than maxItems",
    });
  }
  const chosen = options[kind % Math.max(1, options.length)];
  return chosen ? { value: chosen.value, how: chosen.how, path: chosen.path ?? "" } : undefined;
}
