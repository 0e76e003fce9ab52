import { describe, expect, it } from "vitest";
import { ontoPlatformCrd } from "./crd.js";

type Node = Record<string, unknown>;

function nodes(node: unknown, path = "", out: [string, Node][] = []): [string, Node][] {
  if (typeof node !== "object" || node === null || Array.isArray(node)) return out;
  const schema = node as Node;
  out.push([path, schema]);
  for (const [key, child] of Object.entries((schema.properties as Record<string, Node> | undefined) ?? {}))
    nodes(child, `${path}.${key}`, out);
  if (schema.items) nodes(schema.items, `${path}[]`, out);
  if (typeof schema.additionalProperties === "object") nodes(schema.additionalProperties, `${path}[*]`, out);
  return out;
}

describe("ontoPlatformCrd", () => {
  const crd = ontoPlatformCrd() as {
    spec: { versions: { schema: { openAPIV3Schema: Node }; additionalPrinterColumns: { name: string }[] }[] };
  };
  const version = crd.spec.versions[0]!;
  const all = nodes(version.schema.openAPIV3Schema);

  it("is a structural schema: every node typed, no JSON Schema constructs Kubernetes refuses", () => {
    expect(all.length).toBeGreaterThan(200);
    for (const [path, node] of all) {
      expect(typeof node.type, path).toBe("string");
      for (const forbidden of [
        "anyOf",
        "const",
        "patternProperties",
        "uniqueItems",
        "$id",
        "additionalItems",
      ])
        expect(node, path).not.toHaveProperty(forbidden);
      if (node.properties) expect(node, path).not.toHaveProperty("additionalProperties");
    }
  });

  it("bounds every string and list that a CEL rule reads, keeping the rule cost estimate low", () => {
    for (const [path, node] of all) {
      if (node.type === "string" && !path.endsWith(".apiVersion") && !path.endsWith(".kind")) {
        const fixed = Array.isArray(node.enum) || node.format === "date-time";
        if (!fixed) expect(node.maxLength, path).toBeTypeOf("number");
      }
      if (node.type === "array") expect(node.maxItems, path).toBeTypeOf("number");
    }
  });

  it("shows Phase, Version, Ready and Age in kubectl get", () => {
    const columns = version.additionalPrinterColumns.map((c) => c.name);
    expect(columns).toEqual(expect.arrayContaining(["Phase", "Version", "Ready", "Age"]));
  });
});
