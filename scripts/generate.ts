// `npm run generate`: writes the files derived from src/api (the CRD and field reference from the
// schema, the conditions table of the troubleshooting page from conditions.ts). Unit tests in
// src/api fail when a committed file differs from what this writes.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CONDITIONS_TABLE, TROUBLESHOOTING_PAGE } from "../src/api/conditions-table.js";
import { generatedFiles } from "../src/api/generated-files.js";
import { withSection } from "../src/api/generated-section.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
for (const [path, content] of generatedFiles()) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), content);
  console.log(`wrote ${path}`);
}
const page = join(root, TROUBLESHOOTING_PAGE);
writeFileSync(page, withSection(readFileSync(page, "utf8"), CONDITIONS_TABLE));
console.log(`wrote the conditions table of ${TROUBLESHOOTING_PAGE}`);
