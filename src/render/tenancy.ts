// Tenant guard rails (seed section 6), with tenancy.mode "namespace": a ResourceQuota with the
// spec's hard limits, a LimitRange giving defaults to containers that set none (every container
// render produces sets its own), and, with networkPolicy.isolate, a default-deny NetworkPolicy
// plus one that allows traffic inside the namespace, from and to allowedNamespaces (which must
// include the ingress controller's namespace for the Ingress to reach the gateway), and DNS.
import { platformOwner, type RenderContext } from "./context.js";
import { objectMeta } from "./meta.js";
import type { RenderedObject } from "./objects.js";

export const QUOTA_NAME = "onto-tenant-quota";
export const LIMIT_RANGE_NAME = "onto-tenant-limits";
export const DEFAULT_DENY_POLICY = "onto-default-deny";
export const ALLOW_POLICY = "onto-allow-platform";

const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name";

export function renderTenancy(ctx: RenderContext): RenderedObject[] {
  const { tenancy } = ctx.spec;
  if (tenancy.mode !== "namespace") return [];
  const owner = platformOwner(ctx, "tenancy");
  const objects: RenderedObject[] = [];
  if (tenancy.resourceQuota && Object.keys(tenancy.resourceQuota).length > 0) {
    const hard = Object.fromEntries(
      Object.entries(tenancy.resourceQuota).sort(([a], [b]) => a.localeCompare(b)),
    );
    objects.push({
      apiVersion: "v1",
      kind: "ResourceQuota",
      metadata: objectMeta(owner, QUOTA_NAME),
      spec: { hard },
    });
  }
  objects.push({
    apiVersion: "v1",
    kind: "LimitRange",
    metadata: objectMeta(owner, LIMIT_RANGE_NAME),
    spec: {
      limits: [
        {
          type: "Container",
          defaultRequest: { cpu: "100m", memory: "128Mi" },
          default: { cpu: "500m", memory: "512Mi" },
        },
      ],
    },
  });
  if (tenancy.networkPolicy.isolate) {
    const allowed = [...tenancy.networkPolicy.allowedNamespaces].sort();
    const fromAllowed = allowed.length
      ? [
          {
            namespaceSelector: {
              matchExpressions: [{ key: NAMESPACE_NAME_LABEL, operator: "In", values: allowed }],
            },
          },
        ]
      : [];
    const dns = {
      to: [
        {
          namespaceSelector: { matchLabels: { [NAMESPACE_NAME_LABEL]: "kube-system" } },
          podSelector: { matchLabels: { "k8s-app": "kube-dns" } },
        },
      ],
      ports: [
        { protocol: "UDP", port: 53 },
        { protocol: "TCP", port: 53 },
      ],
    };
    objects.push(
      {
        apiVersion: "networking.k8s.io/v1",
        kind: "NetworkPolicy",
        metadata: objectMeta(owner, ALLOW_POLICY),
        spec: {
          podSelector: {},
          policyTypes: ["Ingress", "Egress"],
          ingress: [{ from: [{ podSelector: {} }, ...fromAllowed] }],
          egress: [{ to: [{ podSelector: {} }, ...fromAllowed] }, dns],
        },
      },
      {
        apiVersion: "networking.k8s.io/v1",
        kind: "NetworkPolicy",
        metadata: objectMeta(owner, DEFAULT_DENY_POLICY),
        spec: { podSelector: {}, policyTypes: ["Ingress", "Egress"] },
      },
    );
  }
  return objects;
}
