import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generatedFiles } from "./generated-files.js";

describe("generated files", () => {
  for (const [path, content] of generatedFiles()) {
    it(`${path} is what \`npm run generate\` writes from the schema`, () => {
      expect(readFileSync(join(import.meta.dirname, "../..", path), "utf8")).toBe(content);
    });
  }
});
