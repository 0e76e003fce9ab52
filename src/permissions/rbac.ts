// Turns the operator's rules (./rules.ts) into RBAC objects bound to one ServiceAccount: a
// ClusterRole for an install that watches all namespaces, or a Role per watched namespace for a
// single-namespace install (plus the small ClusterRole for nodes and namespaces that a Role
// cannot grant). Leader election always gets a Role in the operator's own namespace only.
import { clusterScopedRules, leaderElectionRules, platformRules, type PolicyRule } from "./rules.js";

export interface RbacOptions {
  /** Namespace the operator runs in: its ServiceAccount and its leader election Lease live here. */
  namespace: string;
  serviceAccount: string;
  /** Name of the roles and bindings (suffixed for the secondary ones). */
  name: string;
  /** Omitted: one ClusterRole, every namespace. Given: a Role in each of these namespaces only. */
  watchNamespaces?: readonly string[];
  labels?: Record<string, string>;
}

export interface RbacObject {
  apiVersion: "v1" | "rbac.authorization.k8s.io/v1";
  kind: "ServiceAccount" | "ClusterRole" | "ClusterRoleBinding" | "Role" | "RoleBinding";
  metadata: { name: string; namespace?: string; labels: Record<string, string> };
  rules?: PolicyRule[];
  roleRef?: { apiGroup: "rbac.authorization.k8s.io"; kind: "ClusterRole" | "Role"; name: string };
  subjects?: { kind: "ServiceAccount"; name: string; namespace: string }[];
  automountServiceAccountToken?: boolean;
}

const RBAC = "rbac.authorization.k8s.io/v1";

function meta(name: string, labels: Record<string, string>, namespace?: string): RbacObject["metadata"] {
  return namespace === undefined
    ? { name, labels: { ...labels } }
    : { name, namespace, labels: { ...labels } };
}

/** A role (ClusterRole when namespace is undefined) and the binding of the ServiceAccount to it. */
function roleAndBinding(
  opts: RbacOptions,
  name: string,
  rules: PolicyRule[],
  namespace: string | undefined,
): RbacObject[] {
  const labels = opts.labels ?? {};
  const cluster = namespace === undefined;
  return [
    {
      apiVersion: RBAC,
      kind: cluster ? "ClusterRole" : "Role",
      metadata: meta(name, labels, namespace),
      rules,
    },
    {
      apiVersion: RBAC,
      kind: cluster ? "ClusterRoleBinding" : "RoleBinding",
      metadata: meta(name, labels, namespace),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: cluster ? "ClusterRole" : "Role", name },
      subjects: [{ kind: "ServiceAccount", name: opts.serviceAccount, namespace: opts.namespace }],
    },
  ];
}

const rulesOf = (explained: { rule: PolicyRule }[]): PolicyRule[] => explained.map((e) => e.rule);

/** The ServiceAccount the operator runs as. */
export function serviceAccount(opts: RbacOptions): RbacObject {
  return {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: meta(opts.serviceAccount, opts.labels ?? {}, opts.namespace),
  };
}

/** The roles and bindings for the operator's ServiceAccount (the ServiceAccount itself excluded). */
export function rbacObjects(opts: RbacOptions): RbacObject[] {
  const objects: RbacObject[] = [];
  if (opts.watchNamespaces === undefined) {
    objects.push(
      ...roleAndBinding(opts, opts.name, rulesOf([...platformRules(), ...clusterScopedRules()]), undefined),
    );
  } else {
    if (opts.watchNamespaces.length === 0) throw new Error("watchNamespaces: give at least one namespace");
    for (const namespace of opts.watchNamespaces) {
      objects.push(...roleAndBinding(opts, opts.name, rulesOf(platformRules()), namespace));
    }
    objects.push(
      ...roleAndBinding(
        opts,
        `${opts.name}-cluster`,
        rulesOf(clusterScopedRules(opts.watchNamespaces)),
        undefined,
      ),
    );
  }
  objects.push(
    ...roleAndBinding(opts, `${opts.name}-leader-election`, rulesOf(leaderElectionRules()), opts.namespace),
  );
  return objects;
}
