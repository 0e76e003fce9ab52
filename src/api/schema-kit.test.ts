import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { Quantity } from "./quantity.js";
import { OntoReleaseSpecSchema, OntoReleaseStatusSchema } from "./release-schema.js";
import { OntoPlatformSpecSchema, OntoPlatformStatusSchema } from "./schema.js";
import { boundedMap, MAX_QUANTITY_EXPONENT, QUANTITY, unboundedFields } from "./schema-kit.js";
import { validateSpec } from "./validate.js";

describe("limits as a rule of the schema kit", () => {
  it("every string, number, list and map of both resources (spec and status) has a bound", () => {
    expect(unboundedFields(OntoPlatformSpecSchema, "spec")).toEqual([]);
    expect(unboundedFields(OntoPlatformStatusSchema, "status")).toEqual([]);
    expect(unboundedFields(OntoReleaseSpecSchema, "spec")).toEqual([]);
    expect(unboundedFields(OntoReleaseStatusSchema, "status")).toEqual([]);
  });

  it("names each kind of unbounded field a new field could bring", () => {
    const schema = Type.Object({
      name: Type.String(),
      count: Type.Integer({ minimum: 0 }),
      ratio: Type.Number({ maximum: 1 }),
      items: Type.Array(Type.String({ maxLength: 8 })),
      labels: Type.Record(Type.String(), Type.String({ maxLength: 8 }), { maxProperties: 4 }),
      nested: Type.Object({ list: Type.Array(Type.Object({ note: Type.String() }), { maxItems: 2 }) }),
      fine: boundedMap(Type.String({ maxLength: 8 }), {
        maxProperties: 4,
        description: "bounded",
        keys: { rule: (k) => `${k}.size() <= 8`, message: "short keys", maxLength: 8, examples: {} },
      }),
      choice: Type.Union([Type.Literal("a"), Type.Literal("b")]),
    });
    expect(unboundedFields(schema, "spec")).toEqual([
      "spec.name: string without maxLength",
      "spec.count: number without minimum and maximum",
      "spec.ratio: number without minimum and maximum",
      "spec.items: list without maxItems",
      "spec.labels: map keys unbounded (use boundedMap)",
      "spec.nested.list[].note: string without maxLength",
    ]);
  });
});

describe("quantity bounds (a 10-character quantity froze the operator)", () => {
  it("the schema refuses an exponent beyond 18, naming the field", () => {
    const spec = {
      version: "1.5.0",
      controlPlane: { ontologyService: { resources: { requests: { cpu: "1e100000000" } } } },
    };
    const issues = validateSpec(spec);
    expect(issues.map((i) => i.path)).toContain("spec.controlPlane.ontologyService.resources.requests.cpu");
    expect(new RegExp(QUANTITY).test(`1e${MAX_QUANTITY_EXPONENT}`)).toBe(true);
    expect(new RegExp(QUANTITY).test(`1e${MAX_QUANTITY_EXPONENT + 1}`)).toBe(false);
  });

  it("takes only quantities the API server stores as written (at most milli-units)", () => {
    const ok = ["2", "500m", "1.5", "1.125Gi", "0.001", ".5", "1e3", "100G", "4Gi"];
    const finer = ["0.6374", ".169220895k", "0.5m", "1.0001Ki", "1.5e-3"];
    for (const text of ok) expect(new RegExp(QUANTITY).test(text), text).toBe(true);
    for (const text of finer) expect(new RegExp(QUANTITY).test(text), text).toBe(false);
    const spec = { version: "1.5.0", infrastructure: { postgres: { storage: ".63748449" } } };
    expect(validateSpec(spec).map((i) => i.path)).toEqual(["spec.infrastructure.postgres.storage"]);
  });

  it("the schema refuses a quantity above 1Ei", () => {
    const spec = { version: "1.5.0", selfHealing: { maxMemory: "2Ei" } };
    expect(validateSpec(spec)).toEqual([
      expect.objectContaining({ path: "spec.selfHealing.maxMemory", message: "must be at most 1Ei" }),
    ]);
    expect(validateSpec({ version: "1.5.0", selfHealing: { maxMemory: "1Ei" } })).toEqual([]);
  });

  it("the parser refuses huge exponents at once instead of computing them", () => {
    expect(() => Quantity.parse("1e100000000")).toThrow(/exponent/);
    expect(() => Quantity.parse(`1${"0".repeat(100)}`)).toThrow(/at most 64 characters/);
    expect(Quantity.isValid("1e100000000")).toBe(false);
    expect(Quantity.parse("1e18").compareTo(Quantity.parse("1E"))).toBe(0);
    // CEL's isInteger as the API server computes it: it depends on how the value is written
    // (the property run found ".0", ".0Ti" and "94531Ti" refused by the server, taken offline).
    for (const [text, integer] of [
      ["0", true],
      ["50k", true],
      ["1.5k", true],
      ["12", true],
      ["1.5", false],
      [".0", false],
      ["1.0", false],
      ["1000m", false],
      ["94531Ti", false],
      [".0Ti", false],
      ["1Ki", true],
      ["8Ei", false],
      ["1e3", true],
    ] as const)
      expect(Quantity.parse(text).isInteger(), text).toBe(integer);
  });
});
