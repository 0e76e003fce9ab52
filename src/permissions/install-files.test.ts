import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { installFiles } from "./install-files.js";
import { rulesTable, withRulesTable } from "./rules-table.js";

const root = join(import.meta.dirname, "../..");
const files = installFiles();

describe("install files", () => {
  for (const [path, content] of files) {
    it(`${path} is what \`npm run generate\` writes from src/permissions`, () => {
      expect(readFileSync(join(root, path), "utf8")).toBe(content);
    });
  }

  it("docs/operations/install.md shows the current RBAC rules (`npm run generate` writes them)", () => {
    const doc = readFileSync(join(root, "docs/operations/install.md"), "utf8");
    expect(doc).toContain(rulesTable());
    expect(withRulesTable(doc)).toBe(doc);
    expect(() => withRulesTable("no markers")).toThrow(/markers/);
  });

  it("the chart's CRD is the CRD of deploy/crds", () => {
    expect(files.get("charts/onto-operator/crds/onto.paas_ontoplatforms.yaml")).toBe(
      readFileSync(join(root, "deploy/crds/onto.paas_ontoplatforms.yaml"), "utf8"),
    );
  });
});

interface Container {
  command: string[];
  securityContext: Record<string, unknown>;
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  livenessProbe: { httpGet: { path: string; port: string } };
  readinessProbe: { httpGet: { path: string; port: string } };
  ports: { name: string; containerPort: number }[];
}

describe("the operator's Deployment (deploy/operator/deployment.yaml)", () => {
  const deployment = parse(files.get("deploy/operator/deployment.yaml") ?? "") as {
    metadata: { namespace: string };
    spec: {
      replicas: number;
      template: {
        spec: {
          securityContext: Record<string, unknown>;
          topologySpreadConstraints: { topologyKey: string }[];
          containers: Container[];
        };
      };
    };
  };
  const pod = deployment.spec.template.spec;
  const [container] = pod.containers;
  if (!container) throw new Error("no container");

  it("runs two replicas with leader election in onto-system", () => {
    expect(deployment.metadata.namespace).toBe("onto-system");
    expect(deployment.spec.replicas).toBe(2);
    expect(container.command).toEqual([
      "node",
      "dist/cli/main.js",
      "operator",
      "--leader-elect",
      "--metrics-port",
      "8080",
      "--health-port",
      "8081",
      "--max-restarting-platforms",
      "0",
    ]);
  });

  it("is hardened to Pod Security restricted", () => {
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(Number(container.securityContext.runAsUser)).toBeGreaterThan(0);
  });

  it("has requests and limits, probes on the health port and the metrics port", () => {
    expect(Object.keys(container.resources.requests).sort()).toEqual(["cpu", "memory"]);
    expect(Object.keys(container.resources.limits).sort()).toEqual(["cpu", "memory"]);
    expect(container.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "health" });
    expect(container.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "health" });
    expect(container.ports).toEqual([
      expect.objectContaining({ name: "metrics", containerPort: 8080 }),
      expect.objectContaining({ name: "health", containerPort: 8081 }),
    ]);
  });

  it("spreads across zones and nodes", () => {
    expect(pod.topologySpreadConstraints.map((c) => c.topologyKey)).toEqual([
      "topology.kubernetes.io/zone",
      "kubernetes.io/hostname",
    ]);
  });
});
