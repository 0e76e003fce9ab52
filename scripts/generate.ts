// `npm run generate`: writes the files derived from src/api/schema.ts. A unit test
// (test/unit/api-generated.test.ts) fails when a committed file differs from what this writes.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { generatedFiles } from "../src/api/generated-files.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
for (const [path, content] of generatedFiles()) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), content);
  console.log(`wrote ${path}`);
}
