// The OntoPlatform CustomResourceDefinition, built from the TypeBox schema. TypeBox writes JSON
// Schema; a CRD needs a *structural* OpenAPI v3 schema, so the few constructs that differ are
// translated here (unions of literals become enums, records become additionalProperties,
// uniqueItems is dropped in favour of x-kubernetes-list-type). No library does this translation
// for TypeBox, hence the small walker below.
import { stringify } from "yaml";
import {
  API_VERSION,
  CATEGORIES,
  CRD_NAME,
  GROUP,
  KIND,
  LIST_KIND,
  PLURAL,
  SHORT_NAMES,
  SINGULAR,
  VERSION,
} from "./constants.js";
import { MAX_PLATFORM_NAME, OntoPlatformSpecSchema, OntoPlatformStatusSchema } from "./schema.js";
import type { TSchema } from "@sinclair/typebox";

/** A JSON value as it appears in an OpenAPI schema. */
type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Key order of the generated schema nodes, so the YAML reads top-down: what, then rules. */
const KEY_ORDER = [
  "description",
  "type",
  "format",
  "enum",
  "default",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
  "maxProperties",
  "x-kubernetes-list-type",
  "x-kubernetes-list-map-keys",
  "required",
  "properties",
  "additionalProperties",
  "items",
  "x-kubernetes-validations",
];

/** Translates a TypeBox schema node into a structural OpenAPI v3 schema node. */
export function toStructural(schema: TSchema | JsonObject): JsonObject {
  // JSON round trip drops TypeBox's symbol-keyed metadata (Kind, Optional).
  const node = JSON.parse(JSON.stringify(schema)) as JsonObject;
  return convert(node);
}

function convert(node: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "anyOf" && Array.isArray(value)) {
      // Type.Union of Type.Literal: [{const, type}] -> type + enum.
      const literals = value as JsonObject[];
      if (!literals.every((l) => "const" in l))
        throw new Error("toStructural: only unions of literals are supported");
      out.type = literals[0]?.type ?? "string";
      out.enum = literals.map((l) => l.const as Json);
    } else if (key === "patternProperties") {
      // Type.Record(String, V): { "^(.*)$": V } -> additionalProperties: V.
      const values = Object.values(value as JsonObject);
      if (values.length !== 1) throw new Error("toStructural: records must have one value schema");
      out.additionalProperties = convert(values[0] as JsonObject);
    } else if (key === "properties") {
      const props: JsonObject = {};
      for (const [name, child] of Object.entries(value as JsonObject))
        props[name] = convert(child as JsonObject);
      out.properties = props;
    } else if (key === "items") {
      out.items = convert(value as JsonObject);
    } else if (key === "uniqueItems") {
      // Forbidden in CRDs (quadratic); x-kubernetes-list-type set/map enforces uniqueness instead.
      continue;
    } else if (key === "required" && Array.isArray(value) && value.length === 0) {
      continue;
    } else {
      out[key] = value;
    }
  }
  return orderKeys(out);
}

function orderKeys(node: JsonObject): JsonObject {
  const rank = (key: string) => {
    const i = KEY_ORDER.indexOf(key);
    return i === -1 ? KEY_ORDER.length : i;
  };
  return Object.fromEntries(Object.entries(node).sort(([a], [b]) => rank(a) - rank(b)));
}

/** The CustomResourceDefinition object for OntoPlatform. */
export function ontoPlatformCrd(): JsonObject {
  const spec = toStructural(OntoPlatformSpecSchema);
  const status = toStructural(OntoPlatformStatusSchema);
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      name: CRD_NAME,
      labels: { "app.kubernetes.io/name": "onto-operator", "app.kubernetes.io/part-of": "coomia-dip" },
    },
    spec: {
      group: GROUP,
      scope: "Namespaced",
      names: {
        kind: KIND,
        listKind: LIST_KIND,
        plural: PLURAL,
        singular: SINGULAR,
        shortNames: [...SHORT_NAMES],
        categories: [...CATEGORIES],
      },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            {
              name: "Phase",
              type: "string",
              jsonPath: ".status.phase",
              description: "Summary of the platform's state.",
            },
            {
              name: "Version",
              type: "string",
              jsonPath: ".status.version",
              description: "Version the platform runs.",
            },
            {
              name: "Ready",
              type: "string",
              jsonPath: ".status.ready",
              description: "Ready components / enabled components.",
            },
            {
              name: "Target",
              type: "string",
              jsonPath: ".spec.version",
              priority: 1,
              description: "Version asked for.",
            },
            {
              name: "Paused",
              type: "boolean",
              jsonPath: ".spec.paused",
              priority: 1,
              description: "Reconciling paused.",
            },
            { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
          ],
          schema: {
            openAPIV3Schema: {
              description: `${KIND} (${API_VERSION}) describes one coomia-dip data platform; onto-operator deploys, upgrades and heals it.`,
              type: "object",
              required: ["spec"],
              properties: {
                apiVersion: { type: "string", description: "onto.paas/v1alpha1" },
                kind: { type: "string", description: "OntoPlatform" },
                // A CRD may bound only name and generateName; the name is a label value of
                // every owned object, so it stops at 63 characters (MAX_PLATFORM_NAME).
                metadata: {
                  type: "object",
                  properties: {
                    name: {
                      type: "string",
                      maxLength: MAX_PLATFORM_NAME,
                      description: `Name of the platform: a DNS subdomain of at most ${MAX_PLATFORM_NAME} characters.`,
                    },
                  },
                },
                spec,
                status,
              },
            },
          },
        },
      ],
    },
  };
}

/** The CRD as the YAML file committed in deploy/crds/. */
export function ontoPlatformCrdYaml(): string {
  const header = "# Generated by `npm run generate` from src/api/schema.ts. Do not edit by hand.\n";
  return header + stringify(ontoPlatformCrd(), { lineWidth: 0 });
}
