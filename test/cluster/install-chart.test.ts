// The install artifacts against the real API server: `helm lint` and `helm template` of
// charts/onto-operator (Helm built from its Go module), and a server-side dry-run of every object
// the chart and the kustomize base (deploy/, and its single-namespace Component) render. The
// chart's defaults are compared with the kustomize base, and the operator's pod template is
// admitted by PodSecurity "restricted". The cluster serves the Prometheus Operator's CRDs, so the
// chart's ServiceMonitor and PrometheusRule are dry-run and created too.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseAllDocuments } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CRD_NAME, RELEASE_CRD_NAME } from "../../src/api/constants.js";
import { ontoPlatformCrd } from "../../src/api/crd.js";
import { ontoReleaseCrd } from "../../src/api/release-crd.js";
import { PRODUCT_RELEASES } from "../../src/release/index.js";
import { KubeClient } from "../../src/kube/index.js";
import { ensureHelm } from "../../src/localcluster/helm.js";
import {
  adminKubeConfig,
  clusterStateDir,
  createTestNamespace,
  eventually,
  kubeconfigPath,
} from "../support/cluster.js";

const repo = join(import.meta.dirname, "../..");
const chart = join(repo, "charts/onto-operator");
const client = new KubeClient(adminKubeConfig());
let helmPath = "";
const work = mkdtempSync(join(tmpdir(), "onto-install-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

function k8sBinary(): string {
  const state = JSON.parse(readFileSync(join(clusterStateDir(), "cluster.json"), "utf8")) as {
    binaries: { k8s: string };
  };
  return state.binaries.k8s;
}

function kubectl(args: string[], input?: string): string {
  return execFileSync(k8sBinary(), ["kubectl", "--kubeconfig", kubeconfigPath(), ...args], {
    encoding: "utf8",
    input,
    stdio: ["pipe", "pipe", "pipe"],
  });
}

function helm(...args: string[]): string {
  return execFileSync(helmPath, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

function objects(yamlText: string): Obj[] {
  return parseAllDocuments(yamlText)
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

const ALL_OPTIONS = [
  "--set",
  "metrics.serviceMonitor.enabled=true,prometheusRule.enabled=true,grafanaDashboard.enabled=true",
];

/** Server-side dry-run of a YAML stream; returns kubectl's lines (one per object accepted). */
function dryRun(yamlText: string): string[] {
  return kubectl(
    ["apply", "--server-side", "--dry-run=server", "--field-manager=onto-install-test", "-f", "-"],
    yamlText,
  )
    .trim()
    .split("\n");
}

/** The objects without what only one of Helm and kustomize adds (Helm's bookkeeping labels). */
function normalized(value: unknown): unknown {
  const dropped = new Set([
    "app.kubernetes.io/instance",
    "app.kubernetes.io/managed-by",
    "app.kubernetes.io/version",
    "helm.sh/chart",
  ]);
  if (Array.isArray(value)) return value.map(normalized);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => !dropped.has(key))
        .map(([key, v]) => [key, normalized(v)]),
    );
  }
  return value;
}

const byKindName = (list: Obj[], kind: string, name: string): Obj => {
  const found = list.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found)
    throw new Error(`no ${kind} ${name} among ${list.map((o) => `${o.kind}/${o.metadata.name}`).join(", ")}`);
  return found;
};

beforeAll(async () => {
  helmPath = await ensureHelm((line) => console.log(`[helm] ${line}`));
  // The chart's OntoRelease objects are dry-run against the real CRD, so both CRDs are installed.
  for (const [crd, name] of [
    [ontoPlatformCrd(), CRD_NAME],
    [ontoReleaseCrd(), RELEASE_CRD_NAME],
  ] as const) {
    await client.apply(crd);
    await eventually(`the ${name} CRD to be Established`, async () => {
      const live = (await client.requestJson(
        "GET",
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
      )) as { status?: { conditions?: { type: string; status: string }[] } };
      return live.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")
        ? true
        : undefined;
    });
  }
  client.discovery.invalidate();
});

describe("Helm chart charts/onto-operator", () => {
  it("passes helm lint --strict with the defaults, with every option on, and in single-namespace mode", () => {
    for (const extra of [[], ALL_OPTIONS, ["--set", "watchNamespaces={tenant-a,tenant-b}"]]) {
      const out = helm("lint", chart, "--strict", ...extra);
      expect(out).toContain("1 chart(s) linted, 0 chart(s) failed");
    }
  });

  it("refuses two replicas without leader election", () => {
    expect(() => helm("template", "onto-operator", chart, "--set", "leaderElection.enabled=false")).toThrow(
      /replicas > 1 needs leaderElection.enabled/,
    );
  });

  it("renders, and the API server accepts every object of it (server-side dry-run, CRD included)", async () => {
    const namespace = await createTestNamespace("install-helm");
    const rendered = helm(
      "template",
      "onto-operator",
      chart,
      "-n",
      namespace,
      "--include-crds",
      ...ALL_OPTIONS,
    );
    const all = objects(rendered);
    const kinds = all.map((o) => o.kind).sort();
    expect(kinds).toEqual([
      "ClusterRole",
      "ClusterRoleBinding",
      "ConfigMap",
      "CustomResourceDefinition",
      "CustomResourceDefinition",
      "Deployment",
      ...PRODUCT_RELEASES.map(() => "OntoRelease"),
      "PodDisruptionBudget",
      "PrometheusRule",
      "Role",
      "RoleBinding",
      "Service",
      "ServiceAccount",
      "ServiceMonitor",
    ]);
    // The local cluster serves the Prometheus Operator's CRDs: every object, ServiceMonitor and
    // PrometheusRule included, is validated by the real API server.
    const monitoring = all.filter((o) => o.apiVersion === "monitoring.coreos.com/v1");
    const accepted = dryRun(all.map((o) => JSON.stringify(o)).join("\n---\n"));
    expect(accepted).toHaveLength(all.length);
    for (const line of accepted) expect(line).toMatch(/serverside-applied \(server dry run\)$/);
    // And created for real, read back as the CRDs' schemas pruned them.
    const created = kubectl(
      ["apply", "--server-side", "--field-manager=onto-test", "-f", "-"],
      monitoring.map((o) => JSON.stringify(o)).join("\n---\n"),
    );
    expect(created.trim().split("\n")).toHaveLength(monitoring.length);
    for (const obj of monitoring) {
      const live = await client.get({ ...obj, namespace, name: obj.metadata.name });
      expect((live as unknown as { spec: unknown }).spec).toEqual((obj as unknown as { spec: unknown }).spec);
    }

    // What they point at exists.
    const monitor = byKindName(monitoring, "ServiceMonitor", "onto-operator") as Obj & {
      spec: { endpoints: { port: string }[]; selector: { matchLabels: Record<string, string> } };
    };
    const service = byKindName(all, "Service", "onto-operator-metrics") as Obj & {
      spec: { ports: { name: string }[] };
    };
    expect(monitor.spec.endpoints.map((e) => e.port)).toEqual(service.spec.ports.map((p) => p.name));
    expect(service.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
    const rules = byKindName(monitoring, "PrometheusRule", "onto-operator") as Obj & {
      spec: { groups: { rules: { alert: string; expr: string }[] }[] };
    };
    const alerts = rules.spec.groups.flatMap((g) => g.rules);
    expect(alerts.map((a) => a.alert)).toEqual([
      "OntoOperatorReconcileErrors",
      "OntoPlatformUpgradeFailed",
      "OntoPlatformUpgradeForwardFix",
      "OntoCertificateExpiresSoon",
      "OntoOperatorNoLeader",
      "OntoOperatorDown",
    ]);
    const exprs = alerts.map((a) => a.expr).join("\n");
    for (const metric of [
      "controller_runtime_reconcile_errors_total",
      'onto_upgrades_total{job="onto-operator-metrics"',
      'onto_upgrade_forward_fix{job="onto-operator-metrics"',
      'onto_certificate_expiry_timestamp_seconds{job="onto-operator-metrics"',
      "leader_election_master_status",
      "up{",
    ]) {
      expect(exprs).toContain(metric);
    }
    expect(exprs).toContain(`namespace="${namespace}"`);

    const dashboard = byKindName(all, "ConfigMap", "onto-operator-dashboard") as Obj & {
      data: Record<string, string>;
    };
    expect(dashboard.data["onto-operator.json"]).toBe(
      readFileSync(join(chart, "dashboards/onto-operator.json"), "utf8").trimEnd(),
    );
  });

  it("in single-namespace mode renders a Role per watched namespace, accepted by the API server", async () => {
    const operatorNs = await createTestNamespace("install-helm-op");
    const watched = [
      await createTestNamespace("install-helm-a"),
      await createTestNamespace("install-helm-b"),
    ];
    const rendered = helm(
      "template",
      "onto-operator",
      chart,
      "-n",
      operatorNs,
      "--set",
      `watchNamespaces={${watched.join(",")}}`,
    );
    const all = objects(rendered);
    const roles = all
      .filter((o) => o.kind === "Role")
      .map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
    expect(roles.sort()).toEqual(
      [
        `${watched[0]}/onto-operator`,
        `${watched[1]}/onto-operator`,
        `${operatorNs}/onto-operator-leader-election`,
      ].sort(),
    );
    const clusterRoles = all.filter((o) => o.kind === "ClusterRole").map((o) => o.metadata.name);
    expect(clusterRoles).toEqual(["onto-operator-cluster"]);
    const deployment = byKindName(all, "Deployment", "onto-operator") as Obj & {
      spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
    };
    expect(deployment.spec.template.spec.containers[0]?.env).toContainEqual({
      name: "WATCH_NAMESPACES",
      value: watched.join(","),
    });
    const accepted = dryRun(rendered);
    expect(accepted).toHaveLength(all.length);
  });

  it("with its defaults matches the kustomize base (Deployment, RBAC rules, PDB, Service)", () => {
    const fromHelm = objects(helm("template", "onto-operator", chart, "-n", "onto-system"));
    const fromKustomize = objects(kubectl(["kustomize", join(repo, "deploy")]));
    for (const [kind, name] of [
      ["Deployment", "onto-operator"],
      ["ClusterRole", "onto-operator"],
      ["ClusterRoleBinding", "onto-operator"],
      ["Role", "onto-operator-leader-election"],
      ["RoleBinding", "onto-operator-leader-election"],
      ["ServiceAccount", "onto-operator"],
      ["PodDisruptionBudget", "onto-operator"],
      ["Service", "onto-operator-metrics"],
    ] as const) {
      expect(normalized(byKindName(fromHelm, kind, name)), `${kind} ${name}`).toEqual(
        normalized(byKindName(fromKustomize, kind, name)),
      );
    }
  });
});

describe("Helm chart and kustomize base, single-namespace", () => {
  it("render the same roles and Deployment for watchNamespaces={onto-system} and the rbac-namespaced Component", () => {
    const fromHelm = objects(
      helm("template", "onto-operator", chart, "-n", "onto-system", "--set", "watchNamespaces={onto-system}"),
    );
    const dir = mkdtempSync(join(work, "k-"));
    writeFileSync(
      join(dir, "kustomization.yaml"),
      JSON.stringify({
        resources: [relative(dir, join(repo, "deploy"))],
        components: [relative(dir, join(repo, "deploy/rbac-namespaced"))],
      }),
    );
    const fromKustomize = objects(kubectl(["kustomize", dir]));
    for (const [kind, name] of [
      ["Deployment", "onto-operator"],
      ["Role", "onto-operator"],
      ["RoleBinding", "onto-operator"],
      ["ClusterRole", "onto-operator-cluster"],
      ["ClusterRoleBinding", "onto-operator-cluster"],
      ["Role", "onto-operator-leader-election"],
    ] as const) {
      expect(normalized(byKindName(fromHelm, kind, name)), `${kind} ${name}`).toEqual(
        normalized(byKindName(fromKustomize, kind, name)),
      );
    }
  });
});

describe("kustomize base deploy/", () => {
  /** `kubectl kustomize` of a kustomization written in a scratch folder, moved into `namespace`. */
  function kustomizeInto(namespace: string, components: string[] = []): string {
    const dir = mkdtempSync(join(work, "k-"));
    const rel = (p: string) => relative(dir, join(repo, p));
    writeFileSync(
      join(dir, "kustomization.yaml"),
      JSON.stringify({ namespace, resources: [rel("deploy")], components: components.map(rel) }),
    );
    return kubectl(["kustomize", dir]);
  }

  it("is accepted by the API server (server-side dry-run of every object)", async () => {
    const namespace = await createTestNamespace("install-kustomize");
    const rendered = kustomizeInto(namespace);
    const all = objects(rendered);
    expect(all.map((o) => o.kind).sort()).toEqual([
      "ClusterRole",
      "ClusterRoleBinding",
      "CustomResourceDefinition",
      "CustomResourceDefinition",
      "Deployment",
      "Namespace",
      "PodDisruptionBudget",
      "Role",
      "RoleBinding",
      "Service",
      "ServiceAccount",
    ]);
    const accepted = dryRun(rendered);
    expect(accepted).toHaveLength(all.length);
    for (const line of accepted) expect(line).toMatch(/serverside-applied \(server dry run\)$/);
  });

  it("deploy/releases holds the product's releases, accepted by the API server (dry-run)", () => {
    const rendered = kubectl(["kustomize", join(repo, "deploy/releases")]);
    const all = objects(rendered);
    expect(all.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(
      PRODUCT_RELEASES.map((r) => `OntoRelease/${r.version}`),
    );
    const accepted = dryRun(rendered);
    expect(accepted).toHaveLength(all.length);
    for (const line of accepted) expect(line).toMatch(/serverside-applied \(server dry run\)$/);
  });

  it("with the rbac-namespaced Component: a Role instead of the ClusterRole, accepted by the API server", async () => {
    const namespace = await createTestNamespace("install-kustomize-ns");
    const rendered = kustomizeInto(namespace, ["deploy/rbac-namespaced"]);
    const all = objects(rendered);
    expect(all.filter((o) => o.kind === "ClusterRole").map((o) => o.metadata.name)).toEqual([
      "onto-operator-cluster",
    ]);
    expect(
      all
        .filter((o) => o.kind === "Role")
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(["onto-operator", "onto-operator-leader-election"]);
    expect(dryRun(rendered)).toHaveLength(all.length);
  });

  it("runs a pod that PodSecurity admits under restricted (dry-run create of its pod template)", async () => {
    const namespace = await createTestNamespace("install-psa", {
      "pod-security.kubernetes.io/enforce": "restricted",
      "pod-security.kubernetes.io/enforce-version": "latest",
    });
    const deployment = byKindName(objects(kustomizeInto(namespace)), "Deployment", "onto-operator") as Obj & {
      spec: { template: { metadata: Obj["metadata"]; spec: Record<string, unknown> } };
    };
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "onto-operator-psa", namespace, labels: deployment.spec.template.metadata.labels },
      // The ServiceAccount does not exist in this namespace; admission of the pod's security is the point.
      spec: { ...deployment.spec.template.spec, serviceAccountName: "default" },
    };
    const admitted = (await client.requestJson("POST", `/api/v1/namespaces/${namespace}/pods`, {
      body: pod,
      query: { dryRun: "All" },
    })) as { metadata: { name: string } };
    expect(admitted.metadata.name).toBe("onto-operator-psa");

    // The check is real: the same pod with a writable root filesystem and root is refused.
    const bad = structuredClone(pod) as typeof pod & {
      spec: { containers: { securityContext: Record<string, unknown> }[] };
    };
    bad.metadata.name = "onto-operator-psa-bad";
    const container = bad.spec.containers[0];
    if (!container) throw new Error("no container");
    container.securityContext = {
      ...container.securityContext,
      runAsNonRoot: false,
      allowPrivilegeEscalation: true,
    };
    await expect(
      client.requestJson("POST", `/api/v1/namespaces/${namespace}/pods`, {
        body: bad,
        query: { dryRun: "All" },
      }),
    ).rejects.toThrow(/violates PodSecurity "restricted/);
  });
});
