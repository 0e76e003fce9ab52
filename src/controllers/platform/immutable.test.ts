import { describe, expect, it } from "vitest";
import type { RenderedObject } from "../../render/index.js";
import { keepCreationOnlyFields } from "./immutable.js";

const statefulSet = (policy: string): RenderedObject => ({
  apiVersion: "apps/v1",
  kind: "StatefulSet",
  metadata: { name: "postgres", namespace: "onto", labels: {} },
  spec: { replicas: 3, podManagementPolicy: policy },
});

describe("keepCreationOnlyFields", () => {
  it("keeps a live StatefulSet's podManagementPolicy and everything else rendered", () => {
    const desired = { ...statefulSet("Parallel"), spec: { replicas: 5, podManagementPolicy: "Parallel" } };
    expect(keepCreationOnlyFields(desired, statefulSet("OrderedReady")).spec).toEqual({
      replicas: 5,
      podManagementPolicy: "OrderedReady",
    });
  });

  it("leaves a StatefulSet to be created, one that already agrees, and other kinds as rendered", () => {
    const desired = statefulSet("Parallel");
    expect(keepCreationOnlyFields(desired, undefined)).toBe(desired);
    expect(keepCreationOnlyFields(desired, statefulSet("Parallel"))).toBe(desired);
    const deployment = { ...desired, kind: "Deployment" };
    expect(keepCreationOnlyFields(deployment, statefulSet("OrderedReady"))).toBe(deployment);
  });
});
