// The generated roles as the real API server's authorizer sees them: the roles of a
// single-namespace install are created for a ServiceAccount, and SubjectAccessReviews ask, for
// every resource the rules mention (and a few they must not), every verb, in the watched
// namespace, another namespace, the operator's namespace and at cluster scope, whether the
// ServiceAccount may. The answers must equal what the rules say (src/permissions `allows`), and
// the few facts that matter most are checked by name.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeClient } from "../../src/kube/index.js";
import { rbacObjects, serviceAccount, type RbacObject } from "../../src/permissions/rbac.js";
import {
  allows,
  clusterScopedRules,
  leaderElectionRules,
  platformRules,
  type PolicyRule,
  type Verb,
} from "../../src/permissions/rules.js";
import { adminKubeConfig, createTestNamespace, eventually } from "../support/cluster.js";

const client = new KubeClient(adminKubeConfig());
const VERBS: Verb[] = ["get", "list", "watch", "create", "update", "patch", "delete"];
const suffix = Date.now().toString(36);
const name = `onto-rbac-test-${suffix}`;
let operatorNs = "";
let watchedNs = "";
let otherNs = "";
let objects: RbacObject[] = [];

interface Review {
  namespace: string;
  group: string;
  resource: string;
  verb: Verb;
  name?: string;
}

async function mayI(review: Review): Promise<boolean> {
  const [resource, subresource] = review.resource.split("/");
  const result = (await client.requestJson("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
    body: {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user: `system:serviceaccount:${operatorNs}:${name}`,
        groups: ["system:serviceaccounts", `system:serviceaccounts:${operatorNs}`, "system:authenticated"],
        resourceAttributes: {
          namespace: review.namespace,
          group: review.group,
          resource,
          subresource,
          verb: review.verb,
          name: review.name,
        },
      },
    },
  })) as { status: { allowed: boolean } };
  return result.status.allowed;
}

/** What the generated objects grant in `namespace` ("" for cluster scope), by our reading. */
function granted(namespace: string): PolicyRule[] {
  return objects
    .filter((o) => o.kind === "ClusterRole" || (o.kind === "Role" && o.metadata.namespace === namespace))
    .flatMap((o) => o.rules ?? []);
}

beforeAll(async () => {
  operatorNs = await createTestNamespace("rbac-op");
  watchedNs = await createTestNamespace("rbac-watched");
  otherNs = await createTestNamespace("rbac-other");
  const opts = { namespace: operatorNs, serviceAccount: name, name, watchNamespaces: [watchedNs] };
  objects = rbacObjects(opts);
  await client.apply(serviceAccount(opts));
  for (const object of objects) await client.apply(object);
  // RBAC is read from an informer in the API server: wait until the last binding is effective.
  await eventually("the roles to take effect", async () =>
    (await mayI({ namespace: operatorNs, group: "coordination.k8s.io", resource: "leases", verb: "create" }))
      ? true
      : undefined,
  );
});

afterAll(async () => {
  for (const o of objects.filter((o) => o.kind.startsWith("Cluster"))) {
    await client
      .delete({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name })
      .catch(() => undefined);
  }
});

describe("the operator's generated roles in the API server's authorizer", () => {
  it("allow exactly what the rules say, for every resource they name, every verb, in every scope", async () => {
    const resources = new Map<string, { group: string; resource: string }>();
    for (const { rule } of [...platformRules(), ...clusterScopedRules(), ...leaderElectionRules()]) {
      for (const group of rule.apiGroups)
        for (const resource of rule.resources) resources.set(`${group}/${resource}`, { group, resource });
    }
    // What the operator must never be able to touch.
    for (const extra of [
      { group: "", resource: "pods/exec" },
      { group: "", resource: "serviceaccounts/token" },
      { group: "rbac.authorization.k8s.io", resource: "roles" },
      { group: "rbac.authorization.k8s.io", resource: "clusterroles" },
      { group: "apiextensions.k8s.io", resource: "customresourcedefinitions" },
      { group: "admissionregistration.k8s.io", resource: "validatingwebhookconfigurations" },
    ]) {
      resources.set(`${extra.group}/${extra.resource}`, extra);
    }
    const reviews: Review[] = [];
    for (const namespace of [watchedNs, otherNs, operatorNs, ""]) {
      for (const { group, resource } of resources.values()) {
        for (const verb of VERBS) reviews.push({ namespace, group, resource, verb });
      }
    }
    const disagreements: string[] = [];
    let allowedCount = 0;
    for (let i = 0; i < reviews.length; i += 25) {
      const batch = reviews.slice(i, i + 25);
      const answers = await Promise.all(batch.map(mayI));
      batch.forEach((review, j) => {
        const expected = allows(granted(review.namespace), review);
        if (answers[j]) allowedCount++;
        if (answers[j] !== expected) {
          disagreements.push(
            `${review.verb} ${review.group || "core"}/${review.resource} in ${review.namespace || "cluster"}: ` +
              `server ${String(answers[j])}, rules ${String(expected)}`,
          );
        }
      });
    }
    console.log(
      `[rbac] ${reviews.length} SubjectAccessReviews, ${allowedCount} allowed, ${disagreements.length} disagreements`,
    );
    expect(disagreements).toEqual([]);
    expect(allowedCount).toBeGreaterThan(50);
  });

  it("let the operator apply in its watched namespace only, and lease only in its own", async () => {
    const may = (namespace: string, group: string, resource: string, verb: Verb, objectName?: string) =>
      mayI({ namespace, group, resource, verb, ...(objectName ? { name: objectName } : {}) });
    expect(await may(watchedNs, "apps", "deployments", "patch")).toBe(true);
    expect(await may(watchedNs, "", "secrets", "create")).toBe(true);
    expect(await may(otherNs, "apps", "deployments", "patch")).toBe(false);
    expect(await may(otherNs, "", "secrets", "get")).toBe(false);
    expect(await may("kube-system", "", "secrets", "list")).toBe(false);
    expect(await may(watchedNs, "", "pods/exec", "create")).toBe(false);
    expect(await may(watchedNs, "coordination.k8s.io", "leases", "create")).toBe(false);
    expect(await may(operatorNs, "coordination.k8s.io", "leases", "update")).toBe(true);
    expect(await may("", "", "nodes", "watch")).toBe(true);
    expect(await may("", "", "namespaces", "patch", watchedNs)).toBe(true);
    expect(await may("", "", "namespaces", "patch", otherNs)).toBe(false);
    expect(await may("", "", "namespaces", "get", otherNs)).toBe(false);
    expect(await may("", "", "nodes", "delete")).toBe(false);
  });
});
