// Cluster DNS of the real nodes: CoreDNS (built here, image onto.local/coredns) as a Deployment in
// kube-system on a real node, behind the `kube-dns` Service at the kubelets' clusterDNS address.
// It answers for cluster.local (Services, headless Service members, pod addresses) and reverse
// lookups; it forwards nothing, so a name outside the cluster fails instead of leaving the machine.
import { IMAGE_REFS } from "./images/recipes.js";
import { DNS_SERVICE_IP } from "./network.js";
import { REAL_NODE_SELECTOR, REAL_NODE_TOLERATION } from "./node-kind.js";

export const DNS_NAMESPACE = "kube-system";
export const DNS_DEPLOYMENT = "coredns";

const COREFILE = `.:53 {
    errors
    health :8080
    ready :8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    cache 30
    loadbalance
}
`;

export function dnsManifests(): Record<string, unknown>[] {
  const labels = { "k8s-app": "kube-dns" };
  const meta = (name: string, namespaced = true): Record<string, unknown> => ({
    name,
    ...(namespaced ? { namespace: DNS_NAMESPACE } : {}),
    labels,
  });
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: meta("coredns") },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: meta("system:coredns", false),
      rules: [
        {
          apiGroups: [""],
          resources: ["endpoints", "services", "pods", "namespaces"],
          verbs: ["list", "watch"],
        },
        { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: meta("system:coredns", false),
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:coredns" },
      subjects: [{ kind: "ServiceAccount", name: "coredns", namespace: DNS_NAMESPACE }],
    },
    { apiVersion: "v1", kind: "ConfigMap", metadata: meta("coredns"), data: { Corefile: COREFILE } },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: meta(DNS_DEPLOYMENT),
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: "coredns",
            priorityClassName: "system-cluster-critical",
            dnsPolicy: "Default",
            nodeSelector: REAL_NODE_SELECTOR,
            tolerations: [REAL_NODE_TOLERATION],
            securityContext: {
              runAsNonRoot: true,
              runAsUser: 65532,
              runAsGroup: 65532,
              seccompProfile: { type: "RuntimeDefault" },
            },
            containers: [
              {
                name: "coredns",
                image: IMAGE_REFS.coredns,
                imagePullPolicy: "Never",
                args: ["-conf", "/etc/coredns/Corefile"],
                ports: [
                  { name: "dns", containerPort: 53, protocol: "UDP" },
                  { name: "dns-tcp", containerPort: 53, protocol: "TCP" },
                ],
                resources: { requests: { cpu: "50m", memory: "70Mi" }, limits: { memory: "170Mi" } },
                securityContext: {
                  allowPrivilegeEscalation: false,
                  readOnlyRootFilesystem: true,
                  capabilities: { drop: ["ALL"] },
                },
                readinessProbe: { httpGet: { path: "/ready", port: 8181 }, periodSeconds: 2 },
                livenessProbe: {
                  httpGet: { path: "/health", port: 8080 },
                  periodSeconds: 10,
                  failureThreshold: 5,
                },
                volumeMounts: [{ name: "config", mountPath: "/etc/coredns", readOnly: true }],
              },
            ],
            volumes: [{ name: "config", configMap: { name: "coredns" } }],
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { ...meta("kube-dns"), annotations: { "prometheus.io/port": "9153" } },
      spec: {
        selector: labels,
        clusterIP: DNS_SERVICE_IP,
        ports: [
          { name: "dns", port: 53, protocol: "UDP", targetPort: 53 },
          { name: "dns-tcp", port: 53, protocol: "TCP", targetPort: 53 },
        ],
      },
    },
  ];
}
