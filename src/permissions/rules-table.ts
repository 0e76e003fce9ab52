// The operator's RBAC rules as a Markdown table, for docs/operations/install.md (written there
// by `npm run generate` between two markers, so the page always shows the rules the roles hold).
import { withSection } from "../api/index.js";
import { clusterScopedRules, leaderElectionRules, platformRules, type ExplainedRule } from "./rules.js";

export const TABLE_BEGIN = "<!-- BEGIN generated RBAC rules (npm run generate) -->";
export const TABLE_END = "<!-- END generated RBAC rules -->";

function rows(scope: string, rules: ExplainedRule[]): string[] {
  return rules.map(({ rule, why }) => {
    const group = rule.apiGroups.map((g) => (g === "" ? "core" : g)).join(", ");
    const names = rule.resourceNames ? ` (only ${rule.resourceNames.join(", ")})` : "";
    return `| ${scope} | ${group} | ${rule.resources.join(", ")}${names} | ${rule.verbs.join(", ")} | ${why} |`;
  });
}

/** The table, between its markers. */
export function rulesTable(): string {
  return [
    TABLE_BEGIN,
    "| where | API group | resources | verbs | why |",
    "| --- | --- | --- | --- | --- |",
    ...rows("watched namespaces", platformRules()),
    ...rows("cluster", clusterScopedRules()),
    ...rows("cluster, single-namespace install", clusterScopedRules(["the watched namespaces"])),
    ...rows("operator namespace", leaderElectionRules()),
    TABLE_END,
  ].join("\n");
}

/** `text` with the part between the markers replaced by the current table. */
export function withRulesTable(text: string): string {
  return withSection(text, { begin: TABLE_BEGIN, end: TABLE_END, content: rulesTable });
}
