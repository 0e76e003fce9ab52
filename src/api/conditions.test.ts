import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CONDITION, CONDITION_TYPES, REASON, reasonDocs } from "./conditions.js";
import { CONDITIONS_TABLE, TROUBLESHOOTING_PAGE } from "./conditions-table.js";
import { withSection } from "./generated-section.js";

describe("conditions and reasons", () => {
  it(`${TROUBLESHOOTING_PAGE} shows the current table (\`npm run generate\` writes it)`, () => {
    const page = readFileSync(join(import.meta.dirname, "../..", TROUBLESHOOTING_PAGE), "utf8");
    expect(page).toContain(CONDITIONS_TABLE.content());
    expect(withSection(page, CONDITIONS_TABLE)).toBe(page);
    expect(() => withSection("no markers", CONDITIONS_TABLE)).toThrow(/markers/);
  });

  it("names every constant after its value, and every reason is a CamelCase word for a known condition", () => {
    for (const [key, value] of Object.entries(CONDITION)) expect(value).toBe(key);
    for (const [key, value] of Object.entries(REASON)) expect(value).toBe(key);
    for (const [reason, doc] of reasonDocs()) {
      expect(reason).toMatch(/^[A-Z][A-Za-z0-9]*$/);
      expect(doc.means).not.toBe("");
      for (const type of doc.conditions) expect(CONDITION_TYPES).toContain(type);
    }
  });

  it("documents a True and a False reason for every condition type", () => {
    for (const type of CONDITION_TYPES) {
      const docs = reasonDocs().filter(([, d]) => d.conditions.includes(type));
      expect(new Set(docs.map(([, d]) => d.status)), type).toEqual(new Set(["True", "False"]));
    }
  });
});
