import { describe, expect, it } from "vitest";
import { resolveSpec, type OntoPlatformSpec, type VerticalState } from "../../api/index.js";
import type { KubeObject } from "../../kube/index.js";
import { verticalScalingStatus } from "./vertical.js";

const NOW = new Date("2026-12-01T12:00:00Z");

function vpa(
  name: string,
  rec: { target: Record<string, string>; lower: Record<string, string>; upper: Record<string, string> },
): KubeObject {
  return {
    apiVersion: "autoscaling.k8s.io/v1",
    kind: "VerticalPodAutoscaler",
    metadata: { name, namespace: "ns", labels: { "app.kubernetes.io/instance": "p" } },
    status: {
      recommendation: {
        containerRecommendations: [
          { containerName: name, target: rec.target, lowerBound: rec.lower, upperBound: rec.upper },
        ],
      },
    },
  } as KubeObject;
}

function run(
  spec: Partial<OntoPlatformSpec>,
  vpas: KubeObject[],
  previous?: Record<string, VerticalState>,
  now = NOW,
): Record<string, VerticalState> | undefined {
  return verticalScalingStatus({
    spec: resolveSpec({ version: "1.5.0", ...spec }),
    platformName: "p",
    previous,
    vpas,
    now,
  });
}

const wide = {
  target: { cpu: "700m", memory: "700Mi" },
  lower: { cpu: "100m", memory: "200Mi" },
  upper: { cpu: "40", memory: "64Gi" },
};

describe("verticalScalingStatus", () => {
  it("shows the recommendation in mode Recommend and applies nothing", () => {
    const out = run({}, [vpa("schema-registry", wide)]);
    expect(out?.["schema-registry"]).toEqual({
      mode: "Recommend",
      container: "schema-registry",
      target: { cpu: "700m", memory: "700Mi" },
      withinRange: true,
    });
  });

  it("is the same status when only the recommender's range moves, and says when the requests leave it", () => {
    // The recommender moves the bounds on every pass; copying them would rewrite the status each time.
    const before = run({}, [vpa("schema-registry", wide)]);
    const moved = run(
      {},
      [
        vpa("schema-registry", {
          ...wide,
          lower: { cpu: "25m", memory: "250Mi" },
          upper: { cpu: "63371m", memory: "100G" },
        }),
      ],
      before,
    );
    expect(moved).toEqual(before);
    // The spec's requests now below the lower bound: that crossing is what status records.
    const below = run(
      {},
      [vpa("schema-registry", { ...wide, lower: { cpu: "600m", memory: "600Mi" } })],
      moved,
    );
    expect(below?.["schema-registry"]).toEqual({ ...before?.["schema-registry"], withinRange: false });
  });

  it("applies a target far from the spec's requests at once, within maxAllowed, and keeps it while it is good enough", () => {
    const spec = {
      controlPlane: {
        schemaRegistry: { verticalScaling: { mode: "Apply" as const, maxAllowed: { cpu: "650m" } } },
      },
    };
    const first = run(spec, [vpa("schema-registry", wide)]);
    expect(first?.["schema-registry"]?.applied).toEqual({ cpu: "650m", memory: "700Mi" });
    expect(first?.["schema-registry"]?.appliedAt).toBe(NOW.toISOString());
    // Ten minutes later the target moved by less than 20%: nothing changes, appliedAt stays.
    const later = run(
      spec,
      [vpa("schema-registry", { ...wide, target: { cpu: "800m", memory: "650Mi" } })],
      first,
      new Date(NOW.getTime() + 10 * 60_000),
    );
    expect(later?.["schema-registry"]?.applied).toEqual({ cpu: "650m", memory: "700Mi" });
    expect(later?.["schema-registry"]?.appliedAt).toBe(NOW.toISOString());
    // CPU outside the recommender's range: corrected at once (to maxAllowed); memory is in range and
    // was applied 11 minutes ago, so it stays although the target is 40% lower.
    const outside = run(
      spec,
      [
        vpa("schema-registry", {
          target: { cpu: "3", memory: "500Mi" },
          lower: { cpu: "2", memory: "400Mi" },
          upper: { cpu: "4", memory: "1Gi" },
        }),
      ],
      later,
      new Date(NOW.getTime() + 11 * 60_000),
    );
    expect(outside?.["schema-registry"]?.applied).toEqual({ cpu: "650m", memory: "700Mi" });
    // maxAllowed holds CPU below the range: status says so.
    expect(outside?.["schema-registry"]?.withinRange).toBe(false);
    expect(later?.["schema-registry"]?.withinRange).toBe(true);
  });

  it("leaves the spec's requests when they are close to the target", () => {
    const out = run({ controlPlane: { schemaRegistry: { verticalScaling: { mode: "Apply" } } } }, [
      vpa("schema-registry", { ...wide, target: { cpu: "260m", memory: "500Mi" } }),
    ]);
    expect(out?.["schema-registry"]?.applied).toBeUndefined();
  });

  it("recommends and applies memory only where an HPA scales on CPU", () => {
    const out = run(
      {
        controlPlane: {
          ontologyService: { autoscaling: { enabled: true }, verticalScaling: { mode: "Apply" } },
        },
      },
      [vpa("ontology-service", wide)],
    );
    expect(out?.["ontology-service"]?.target).toEqual({ memory: "700Mi" });
    expect(out?.["ontology-service"]?.applied).toEqual({ memory: "700Mi" });
  });

  it("shows nothing for mode Off or without a recommendation", () => {
    expect(
      run({ controlPlane: { schemaRegistry: { verticalScaling: { mode: "Off" } } } }, [
        vpa("schema-registry", wide),
      ]),
    ).toBeUndefined();
    expect(run({}, [])).toBeUndefined();
  });
});
