// The conditions table of docs/operations/troubleshooting.md, generated from src/api/conditions.ts
// between two markers (`npm run generate`), so the page lists every reason the operator writes.
import { reasonDocs } from "./conditions.js";
import type { GeneratedSection } from "./generated-section.js";

export const CONDITIONS_TABLE: GeneratedSection = {
  begin: "<!-- BEGIN generated conditions table (npm run generate) -->",
  end: "<!-- END generated conditions table -->",
  content: () =>
    [
      CONDITIONS_TABLE.begin,
      "| condition | status | reason | means | what to do |",
      "| --- | --- | --- | --- | --- |",
      ...reasonDocs().map(([reason, doc]) => {
        const types = doc.conditions.map((t) => `\`${t}\``).join(", ");
        return `| ${types} | ${doc.status} | \`${reason}\` | ${doc.means} | ${doc.todo} |`;
      }),
      CONDITIONS_TABLE.end,
    ].join("\n"),
};

export const TROUBLESHOOTING_PAGE = "docs/operations/troubleshooting.md";
