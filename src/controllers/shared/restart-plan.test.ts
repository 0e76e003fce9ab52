// The restart plan over two renders of the production sample: which workloads restart for a
// log-level change, an image change, a resources change and an operator-side change, why, in
// what order and under what budget; and which do not restart at all.
import { describe, expect, it } from "vitest";
import type { OntoPlatformSpec } from "../../api/index.js";
import {
  TEMPLATE_REVISION,
  TEMPLATE_REVISION_ANNOTATION,
  withTlsRevision,
  type RenderedObject,
} from "../../render/index.js";
import { goldenCases, renderGolden } from "../../../test/support/golden.js";
import { formatPlan, restartPlan, sameValue, type RestartEntry } from "./restart-plan.js";

const cases = goldenCases();
function productionCase() {
  const found = cases["production"];
  if (!found) throw new Error("no production case");
  return found;
}
const production = productionCase();

function render(edit: (spec: OntoPlatformSpec) => void = () => {}): RenderedObject[] {
  const input = structuredClone(production);
  edit(input.spec);
  return renderGolden(input);
}

function plan(before: RenderedObject[], after: RenderedObject[]): RestartEntry[] {
  const live = new Map(before.map((o) => [`${o.kind}/${o.metadata.name}`, o]));
  return restartPlan({ desired: after, live: (o) => live.get(`${o.kind}/${o.metadata.name}`) });
}
const restarting = (p: RestartEntry[]) =>
  p.filter((e) => e.restarts).map((e) => `${e.name}:${e.reasons.join("+")}`);

describe("restart plan", () => {
  const base = render();

  it("restarts nothing when nothing changes", () => {
    expect(restarting(plan(base, render()))).toEqual([]);
  });

  it("a log-level change rolls the services that read it, for their config checksum", () => {
    const after = render((s) => {
      s.observability = { ...s.observability, logging: { ...s.observability?.logging, level: "DEBUG" } };
    });
    const p = plan(base, after);
    const names = restarting(p);
    expect(names.length).toBeGreaterThan(0);
    for (const n of names) expect(n).toMatch(/:config$/);
    expect(names).not.toContain("postgres:config");
    expect(p.find((e) => e.name === "postgres")?.restarts).toBe(false);
  });

  it("an image change restarts by image, in the seed's order, under each PodDisruptionBudget", () => {
    const p = plan(
      base,
      render((s) => {
        s.version = "1.6.0";
      }),
    );
    const restarts = p.filter((e) => e.restarts);
    expect(restarts.length).toBeGreaterThan(0);
    for (const e of restarts) expect(e.reasons).toContain("image");
    expect(restarts.map((e) => e.order)).toEqual(restarts.map((_, i) => i + 1));
    const gateway = restarts.find((e) => e.name === "gateway");
    expect(gateway?.budget).toBe("gateway: maxUnavailable 1");
    expect(gateway?.details.some((d) => d.startsWith("image of gateway:"))).toBe(true);
  });

  it("a resources change restarts exactly that workload, for resources", () => {
    const p = plan(
      base,
      render((s) => {
        const svc = s.controlPlane?.ontologyService ?? {};
        s.controlPlane = {
          ...s.controlPlane,
          ontologyService: { ...svc, resources: { requests: { cpu: "777m", memory: "1Gi" } } },
        };
      }),
    );
    expect(restarting(p)).toEqual(["ontology-service:resources"]);
  });

  it("an operator-side change names both revisions", () => {
    const older = structuredClone(base);
    const kafka = older.find((o) => o.kind === "StatefulSet" && o.metadata.name === "kafka");
    if (!kafka) throw new Error("no kafka");
    kafka.metadata.annotations = { [TEMPLATE_REVISION_ANNOTATION]: "0" };
    (
      kafka.spec as { template: { spec: { terminationGracePeriodSeconds?: number } } }
    ).template.spec.terminationGracePeriodSeconds = 1;
    const p = plan(older, base);
    expect(restarting(p)).toEqual(["kafka:template"]);
    expect(p.find((e) => e.name === "kafka")?.operatorChange).toMatchObject({
      fromRevision: 0,
      toRevision: TEMPLATE_REVISION,
    });
    expect(formatPlan(p).join("\n")).toContain(`operator-side change r0 -> r${TEMPLATE_REVISION}`);
  });

  it("a renewed certificate restarts the workloads that read it at start, for certificate", () => {
    const serial = (value: string) => withTlsRevision(base, "onto-tls", value, new Set(["minio"]));
    const restarts = restarting(plan(serial("0a"), serial("0b")));
    expect(restarts.length).toBeGreaterThan(0);
    expect(restarts.every((r) => r.endsWith(":certificate"))).toBe(true);
    expect(restarts.some((r) => r.startsWith("minio"))).toBe(false);
  });

  it("compares quantities by value", () => {
    expect(sameValue({ memory: "1Gi" }, { memory: "1024Mi" })).toBe(true);
    expect(sameValue({ memory: "1Gi" }, { memory: "1025Mi" })).toBe(false);
  });
});
