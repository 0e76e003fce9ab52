// The operator's RBAC rules as data: every API group, resource and verb it uses, and nothing
// else (no "*"). The install manifests (deploy/), the Helm chart and the tests all read these,
// so the role cannot drift from one copy to another. ./rbac.ts turns them into Role and
// ClusterRole objects.
import { GROUP, PLURAL, RELEASE_PLURAL } from "../api/index.js";
import { MANAGED_KINDS } from "../render/index.js";

export type Verb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete";

/** One RBAC PolicyRule, as the API server stores it. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: Verb[];
  resourceNames?: string[];
}

/** A rule and the reason the operator needs it (the reason is printed in docs/operations/install.md). */
export interface ExplainedRule {
  rule: PolicyRule;
  why: string;
}

/**
 * What server-side apply of a rendered object needs: patch (the apply itself), create (an apply
 * that creates the object is authorized as create), get/list/watch (the informer cache and the
 * read before a decision), delete (pruning what the spec no longer asks for, and replacing a
 * changed Job). No update: the operator never PUTs a rendered object.
 */
export const APPLY_VERBS: readonly Verb[] = ["get", "list", "watch", "create", "patch", "delete"];

/** Rules for every kind the renderer can produce (render's MANAGED_KINDS), one per API group. */
function managedKindRules(): ExplainedRule[] {
  const byGroup = new Map<string, string[]>();
  for (const { group, plural } of MANAGED_KINDS) byGroup.set(group, [...(byGroup.get(group) ?? []), plural]);
  return [...byGroup.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group, resources]) => ({
      rule: { apiGroups: [group], resources: [...resources].sort(), verbs: [...APPLY_VERBS] },
      why: "objects the renderer produces: read from the cache, server-side applied, pruned",
    }));
}

/**
 * Rules for the namespaces that hold OntoPlatforms: granted cluster-wide by the ClusterRole, or
 * per watched namespace by a Role in single-namespace mode.
 */
export function platformRules(): ExplainedRule[] {
  return [
    {
      rule: { apiGroups: [GROUP], resources: [PLURAL], verbs: ["get", "list", "watch"] },
      why: "watch the OntoPlatform resources",
    },
    {
      rule: { apiGroups: [GROUP], resources: [`${PLURAL}/status`], verbs: ["patch"] },
      why: "write phase, conditions, components, upgrade and healing progress (merge patches)",
    },
    {
      rule: { apiGroups: [GROUP], resources: [`${PLURAL}/finalizers`], verbs: ["update"] },
      why: "set blockOwnerDeletion on owner references (required where OwnerReferencesPermissionEnforcement is on)",
    },
    ...managedKindRules(),
    {
      rule: { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch", "patch", "delete"] },
      why: "healing: diagnose crash loops and OOM kills, clean up evicted pods, free pods on lost nodes; Postgres HA: the role label (patch) and demoting a second primary (delete)",
    },
    {
      rule: {
        apiGroups: [""],
        resources: ["persistentvolumeclaims"],
        verbs: ["get", "list", "watch", "patch"],
      },
      why: "online volume growth: a larger storage patches the claims' requested size (never creates or deletes one)",
    },
    {
      rule: { apiGroups: ["cert-manager.io"], resources: ["issuers"], verbs: ["get"] },
      why: "with spec.global.tls.issuerRef: whether the cert-manager Issuer exists and is Ready, while the platform certificate is not issued",
    },
    {
      rule: { apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] },
      why: "Events about what the operator did (events.k8s.io/v1, with series)",
    },
  ];
}

/**
 * Rules on cluster-scoped resources: always in a ClusterRole, even in single-namespace mode,
 * because a Role cannot grant them. In single-namespace mode, get and patch of namespaces are
 * pinned to the watched namespaces with resourceNames; list and watch cannot be pinned that way
 * for the operator's Namespace informer, which lists all namespaces (names and labels only).
 */
export function clusterScopedRules(watchNamespaces?: readonly string[]): ExplainedRule[] {
  const nodes: ExplainedRule = {
    rule: { apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch"] },
    why: "healing: node pressure for evictions, lost nodes for stranded pods",
  };
  const storageClasses: ExplainedRule = {
    rule: { apiGroups: ["storage.k8s.io"], resources: ["storageclasses"], verbs: ["get", "list", "watch"] },
    why: "whether spec.global.storageClass exists, and whether a claim's class allows volume expansion",
  };
  const clusterIssuers: ExplainedRule = {
    rule: { apiGroups: ["cert-manager.io"], resources: ["clusterissuers"], verbs: ["get"] },
    why: "with spec.global.tls.issuerRef to a ClusterIssuer: whether it exists and is Ready, while the platform certificate is not issued",
  };
  // OntoRelease objects are cluster-scoped: every operator reads them, whatever it watches.
  const releases: ExplainedRule[] = [
    {
      rule: { apiGroups: [GROUP], resources: [RELEASE_PLURAL], verbs: ["get", "list", "watch"] },
      why: "the release catalog: platform versions added (or built-in ones overridden) as OntoRelease objects",
    },
    {
      rule: { apiGroups: [GROUP], resources: [`${RELEASE_PLURAL}/status`], verbs: ["patch"] },
      why: "say on each OntoRelease whether it is used for its version, and why (Accepted condition)",
    },
  ];
  if (watchNamespaces) {
    return [
      nodes,
      storageClasses,
      clusterIssuers,
      ...releases,
      {
        rule: { apiGroups: [""], resources: ["namespaces"], verbs: ["list", "watch"] },
        why: "the operator's Namespace cache (one cluster-wide informer)",
      },
      {
        rule: {
          apiGroups: [""],
          resources: ["namespaces"],
          verbs: ["get", "patch"],
          resourceNames: [...watchNamespaces],
        },
        why: "label the watched namespaces for Pod Security (restricted)",
      },
    ];
  }
  return [
    nodes,
    storageClasses,
    clusterIssuers,
    ...releases,
    {
      rule: { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list", "watch", "patch"] },
      why: "label tenant namespaces for Pod Security (restricted); the operator's Namespace cache",
    },
  ];
}

/** Rules in the operator's own namespace only: the leader election Lease. */
export function leaderElectionRules(): ExplainedRule[] {
  return [
    {
      rule: { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] },
      why: "leader election between the operator's replicas",
    },
  ];
}

/** Whether `rules` allow `verb` on `group`/`resource` (and on the object `name`, when given). */
export function allows(
  rules: readonly PolicyRule[],
  request: { group: string; resource: string; verb: Verb; name?: string },
): boolean {
  return rules.some(
    (r) =>
      r.apiGroups.includes(request.group) &&
      r.resources.includes(request.resource) &&
      r.verbs.includes(request.verb) &&
      (r.resourceNames === undefined ||
        (request.name !== undefined && r.resourceNames.includes(request.name))),
  );
}
