// Second step of `npm run generate`: writes the install files derived from src/permissions (the
// kustomize base in deploy/, the chart's CRD copy and RBAC rules) and the RBAC table of
// docs/operations/install.md. Unit tests in src/permissions fail when a committed file differs.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { installFiles } from "../src/permissions/install-files.js";
import { withRulesTable } from "../src/permissions/rules-table.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
for (const [path, content] of installFiles()) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), content);
  console.log(`wrote ${path}`);
}
const doc = join(root, "docs/operations/install.md");
writeFileSync(doc, withRulesTable(readFileSync(doc, "utf8")));
console.log("wrote the RBAC table of docs/operations/install.md");
