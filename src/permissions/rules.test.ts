import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { GROUP, PLURAL } from "../api/index.js";
import { OPTIONAL_API_VERSIONS, renderFile } from "../cli/commands/render.js";
import { MANAGED_KINDS } from "../render/index.js";
import { rbacObjects, serviceAccount, type RbacObject } from "./rbac.js";
import {
  APPLY_VERBS,
  allows,
  clusterScopedRules,
  leaderElectionRules,
  platformRules,
  type PolicyRule,
  type Verb,
} from "./rules.js";

const opts = { namespace: "onto-system", serviceAccount: "onto-operator", name: "onto-operator" };
const wide = rbacObjects(opts);
const narrow = rbacObjects({ ...opts, watchNamespaces: ["tenant-a", "tenant-b"] });
const ALL_VERBS: Verb[] = ["get", "list", "watch", "create", "update", "patch", "delete"];

function rulesOf(
  objects: RbacObject[],
  kind: RbacObject["kind"],
  name: string,
  namespace?: string,
): PolicyRule[] {
  const found = objects.find(
    (o) => o.kind === kind && o.metadata.name === name && o.metadata.namespace === namespace,
  );
  if (!found?.rules) throw new Error(`no ${kind} ${name} in ${namespace ?? "the cluster"}`);
  return found.rules;
}

/** Every string anywhere in a value. */
function strings(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value && typeof value === "object") return Object.values(value).flatMap(strings);
  return [];
}

describe("operator RBAC rules", () => {
  it("contain no wildcard in any role of either install mode", () => {
    const everything = [...wide, ...narrow, serviceAccount(opts)];
    const all = strings(everything);
    expect(all.length).toBeGreaterThan(50);
    expect(all.filter((s) => s.includes("*"))).toEqual([]);
  });

  it("grant every kind the renderer can produce the verbs server-side apply and pruning need", () => {
    const clusterRole = rulesOf(wide, "ClusterRole", "onto-operator");
    const role = rulesOf(narrow, "Role", "onto-operator", "tenant-a");
    const missing: string[] = [];
    for (const { group, kind, plural } of MANAGED_KINDS) {
      for (const verb of APPLY_VERBS) {
        if (!allows(clusterRole, { group, resource: plural, verb }))
          missing.push(`ClusterRole: ${verb} ${kind}`);
        if (!allows(role, { group, resource: plural, verb })) missing.push(`Role: ${verb} ${kind}`);
      }
    }
    expect(missing).toEqual([]);
    expect(MANAGED_KINDS.length).toBeGreaterThanOrEqual(15);
  });

  it("cover every kind the samples render to, with the optional APIs served", () => {
    const samples = join(import.meta.dirname, "../../samples");
    const kinds = new Set<string>();
    for (const file of ["production.yaml", "minimal.yaml", "tenant.yaml"]) {
      const text = readFileSync(join(samples, file), "utf8");
      for (const o of renderFile(text, { apiVersions: OPTIONAL_API_VERSIONS })) {
        kinds.add(`${o.apiVersion} ${o.kind}`);
      }
    }
    const managed = new Set(
      MANAGED_KINDS.map((k) => `${k.group ? `${k.group}/` : ""}${k.version} ${k.kind}`),
    );
    expect([...kinds].filter((k) => !managed.has(k))).toEqual([]);
    expect(kinds.size).toBeGreaterThanOrEqual(12);
  });

  it("grant exactly the listed verbs on what is not applied", () => {
    const rules = rulesOf(wide, "ClusterRole", "onto-operator");
    const granted = (group: string, resource: string) =>
      ALL_VERBS.filter((verb) => allows(rules, { group, resource, verb }));
    expect(granted(GROUP, PLURAL)).toEqual(["get", "list", "watch"]);
    expect(granted(GROUP, `${PLURAL}/status`)).toEqual(["patch"]);
    // Claims are the StatefulSet controller's (it creates them; retention deletes them): the
    // operator only grows them. The healer never reads logs (they can carry credentials). Pods
    // are patched for the Postgres role label only.
    expect(granted("", "persistentvolumeclaims")).toEqual(["get", "list", "watch", "patch"]);
    expect(granted("storage.k8s.io", "storageclasses")).toEqual(["get", "list", "watch"]);
    expect(granted("", "pods")).toEqual(["get", "list", "watch", "patch", "delete"]);
    expect(granted("", "pods/log")).toEqual([]);
    expect(granted("", "nodes")).toEqual(["get", "list", "watch"]);
    expect(granted("", "namespaces")).toEqual(["get", "list", "watch", "patch"]);
    expect(granted("events.k8s.io", "events")).toEqual(["create", "patch"]);
    expect(granted("", "events")).toEqual([]);
    // Not granted: the operator never touches these.
    expect(granted("", "pods/exec")).toEqual([]);
    expect(granted("rbac.authorization.k8s.io", "roles")).toEqual([]);
    expect(granted("apiextensions.k8s.io", "customresourcedefinitions")).toEqual([]);
    expect(granted("coordination.k8s.io", "leases")).toEqual([]);
  });

  it("grant leases only in the operator's own namespace", () => {
    const lease = rulesOf(wide, "Role", "onto-operator-leader-election", "onto-system");
    const verbs = ALL_VERBS.filter((verb) =>
      allows(lease, { group: "coordination.k8s.io", resource: "leases", verb }),
    );
    expect(verbs).toEqual(["get", "create", "update"]);
    expect(
      narrow.filter((o) => o.kind === "Role").map((o) => `${o.metadata.namespace}/${o.metadata.name}`),
    ).toEqual([
      "tenant-a/onto-operator",
      "tenant-b/onto-operator",
      "onto-system/onto-operator-leader-election",
    ]);
  });

  it("single-namespace mode: platform rules per namespace, a small ClusterRole pinned to the watched namespaces", () => {
    expect(narrow.some((o) => o.kind === "ClusterRole" && o.metadata.name === "onto-operator")).toBe(false);
    const cluster = rulesOf(narrow, "ClusterRole", "onto-operator-cluster");
    expect(allows(cluster, { group: "", resource: "nodes", verb: "watch" })).toBe(true);
    expect(allows(cluster, { group: "", resource: "namespaces", verb: "patch", name: "tenant-b" })).toBe(
      true,
    );
    expect(allows(cluster, { group: "", resource: "namespaces", verb: "patch", name: "kube-system" })).toBe(
      false,
    );
    expect(allows(cluster, { group: "", resource: "namespaces", verb: "get", name: "kube-system" })).toBe(
      false,
    );
    expect(allows(cluster, { group: "", resource: "namespaces", verb: "delete", name: "tenant-a" })).toBe(
      false,
    );
    // Nothing namespaced leaks into the ClusterRole.
    expect(allows(cluster, { group: "", resource: "secrets", verb: "get" })).toBe(false);
    expect(rulesOf(narrow, "Role", "onto-operator", "tenant-b")).toEqual(platformRules().map((r) => r.rule));
    expect(() => rbacObjects({ ...opts, watchNamespaces: [] })).toThrow(/watchNamespaces/);
  });

  it("bind every role to the operator's ServiceAccount in its own namespace", () => {
    for (const objects of [wide, narrow]) {
      const bindings = objects.filter((o) => o.kind.endsWith("Binding"));
      const roles = objects.filter((o) => o.kind.endsWith("Role"));
      expect(bindings).toHaveLength(roles.length);
      for (const binding of bindings) {
        expect(binding.subjects).toEqual([
          { kind: "ServiceAccount", name: "onto-operator", namespace: "onto-system" },
        ]);
        const role = roles.find(
          (r) =>
            r.kind === binding.roleRef?.kind &&
            r.metadata.name === binding.roleRef.name &&
            r.metadata.namespace === binding.metadata.namespace,
        );
        expect(role, `${binding.kind} ${binding.metadata.name}`).toBeDefined();
      }
    }
  });

  it("give a reason for every rule", () => {
    const explained = [...platformRules(), ...clusterScopedRules(), ...leaderElectionRules()];
    expect(explained.filter((e) => e.why.length < 10)).toEqual([]);
  });
});
