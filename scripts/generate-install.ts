// Second step of `npm run generate`: writes the install files derived from src/permissions (the
// kustomize base in deploy/, the chart's CRD copy and RBAC rules). A unit test
// (src/permissions/install-files.test.ts) fails when a committed file differs from what this writes.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { installFiles } from "../src/permissions/install-files.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
for (const [path, content] of installFiles()) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), content);
  console.log(`wrote ${path}`);
}
