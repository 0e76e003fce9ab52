// Runs the operator as it runs when installed: under its ServiceAccount, bound to the generated
// roles only, never as admin. Creates the ServiceAccount and the roles with an admin client, asks
// the API server for a token of that ServiceAccount (TokenRequest), and returns a kubeconfig that
// authenticates with it. Tests and the demo pass that kubeconfig to `onto operator`, so a rule
// the operator lacks shows up as a 403 instead of hiding behind admin rights.
import { KubeConfig } from "@kubernetes/client-node";
import type { KubeClient } from "../kube/index.js";
import { rbacObjects, serviceAccount, type RbacObject, type RbacOptions } from "./rbac.js";

export interface OperatorAccess {
  /** Kubeconfig (JSON, which every kubeconfig reader accepts) authenticating as the ServiceAccount. */
  kubeconfig: string;
  /** The ServiceAccount, roles and bindings created. */
  objects: RbacObject[];
  /** Deletes the roles and bindings (cluster-scoped ones included) and the ServiceAccount. */
  revoke(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function serviceAccountMay(admin: KubeClient, opts: RbacOptions): Promise<boolean> {
  const review = (await admin.requestJson("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
    body: {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user: `system:serviceaccount:${opts.namespace}:${opts.serviceAccount}`,
        groups: [
          "system:serviceaccounts",
          `system:serviceaccounts:${opts.namespace}`,
          "system:authenticated",
        ],
        resourceAttributes: {
          namespace: opts.namespace,
          group: "coordination.k8s.io",
          resource: "leases",
          verb: "create",
        },
      },
    },
  })) as { status?: { allowed?: boolean } };
  return review.status?.allowed === true;
}

export async function grantOperatorAccess(
  admin: KubeClient,
  opts: RbacOptions,
  tokenSeconds = 3600,
): Promise<OperatorAccess> {
  const objects = [serviceAccount(opts), ...rbacObjects(opts)];
  for (const object of objects) await admin.apply(object);
  // The authorizer reads RBAC from an informer: wait until the last binding is in effect.
  for (let attempt = 0; !(await serviceAccountMay(admin, opts)); attempt++) {
    if (attempt >= 100) throw new Error(`RBAC for ${opts.serviceAccount} not in effect after 10 s`);
    await sleep(100);
  }
  const request = (await admin.requestJson(
    "POST",
    `/api/v1/namespaces/${opts.namespace}/serviceaccounts/${opts.serviceAccount}/token`,
    {
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { expirationSeconds: tokenSeconds },
      },
    },
  )) as { status: { token: string } };

  const cluster = admin.kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error("kubeconfig: the admin client's context names no cluster");
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ ...cluster, name: "cluster" }],
    users: [{ name: opts.serviceAccount, token: request.status.token }],
    contexts: [
      { name: "operator", cluster: "cluster", user: opts.serviceAccount, namespace: opts.namespace },
    ],
    currentContext: "operator",
  });

  return {
    kubeconfig: config.exportConfig(),
    objects,
    revoke: async () => {
      for (const object of [...objects].reverse()) {
        const { name, namespace } = object.metadata;
        await admin.delete({
          apiVersion: object.apiVersion,
          kind: object.kind,
          name,
          ...(namespace ? { namespace } : {}),
        });
      }
    },
  };
}
