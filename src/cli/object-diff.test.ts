// Field-level diff of `onto diff`: named list elements matched by name, server-maintained fields
// skipped, Secret values never shown, multi-line values by line.
import { describe, expect, it } from "vitest";
import { formatDiffs } from "./commands/diff.js";
import { HIDDEN, diffObjects, formatChange, formatValue } from "./object-diff.js";
import { plain } from "./output.js";

describe("diffObjects", () => {
  it("lists changed, added and removed fields by path", () => {
    const from = { spec: { replicas: 3, paused: true, selector: { app: "x" } } };
    const to = { spec: { replicas: 5, selector: { app: "x" }, minReadySeconds: 10 } };
    expect(diffObjects(from, to)).toEqual([
      { path: "spec.minReadySeconds", to: 10 },
      { path: "spec.paused", from: true },
      { path: "spec.replicas", from: 3, to: 5 },
    ]);
  });

  it("matches list elements by name and quotes keys that are not identifiers", () => {
    const container = (image: string) => ({ name: "gateway", image, env: [{ name: "A", value: "1" }] });
    const from = {
      spec: { containers: [{ name: "sidecar", image: "s:1" }, container("g:1")] },
      metadata: { annotations: { "onto.paas/config-checksum": "a" } },
    };
    const to = {
      spec: { containers: [container("g:2"), { name: "sidecar", image: "s:1" }] },
      metadata: { annotations: { "onto.paas/config-checksum": "b" } },
    };
    expect(diffObjects(from, to).map((c) => c.path)).toEqual([
      'metadata.annotations["onto.paas/config-checksum"]',
      "spec.containers[gateway].image",
    ]);
  });

  it("skips what the API server maintains, status and the applied-hash annotation", () => {
    const from = {
      metadata: {
        resourceVersion: "1",
        generation: 1,
        managedFields: [{ manager: "a" }],
        annotations: { "onto.paas/applied-hash": "x" },
      },
      status: { readyReplicas: 1 },
      spec: { a: 1 },
    };
    const to = {
      metadata: {
        resourceVersion: "2",
        generation: 2,
        managedFields: [{ manager: "b" }],
        annotations: { "onto.paas/applied-hash": "y" },
      },
      status: { readyReplicas: 2 },
      spec: { a: 1 },
    };
    expect(diffObjects(from, to)).toEqual([]);
  });

  it("compares unnamed lists by position, and a length change as a whole", () => {
    expect(diffObjects({ a: [1, 2] }, { a: [1, 3] })).toEqual([{ path: "a[1]", from: 2, to: 3 }]);
    expect(diffObjects({ a: [1, 2] }, { a: [1, 2, 3] })).toEqual([
      { path: "a", from: [1, 2], to: [1, 2, 3] },
    ]);
  });

  it("never shows a Secret's values, only which key changes", () => {
    const from = { data: { password: "c2VjcmV0", user: "dQ==" }, metadata: { labels: { a: "1" } } };
    const to = { data: { password: "bmV3", token: "dA==", user: "dQ==" }, metadata: { labels: { a: "2" } } };
    const changes = diffObjects(from, to, { secret: true });
    expect(changes).toEqual([
      { path: "data.password", from: HIDDEN, to: HIDDEN },
      { path: "data.token", to: HIDDEN },
      { path: "metadata.labels.a", from: "1", to: "2" },
    ]);
    expect(JSON.stringify(changes)).not.toMatch(/c2VjcmV0|bmV3|dA==/);
  });
});

describe("formatChange", () => {
  it("writes old -> new, additions and removals", () => {
    expect(formatChange({ path: "spec.replicas", from: 3, to: 5 })).toEqual(["spec.replicas: 3 -> 5"]);
    expect(formatChange({ path: "a", to: "x" })).toEqual(["a: (added) x"]);
    expect(formatChange({ path: "a", from: { b: 1 } })).toEqual(['a: {"b":1} (removed)']);
  });

  it("shows only the lines that differ in multi-line values", () => {
    expect(formatChange({ path: "data.conf", from: "a=1\nb=2\nc=3", to: "a=1\nb=5\nc=3" })).toEqual([
      "data.conf:",
      "    - b=2",
      "    + b=5",
    ]);
  });

  it("shortens hashes and long values", () => {
    expect(formatValue("b5d610fc01698de8a5621c1642dc0ca72b23aa372bd210dc263a016a2c8425cc")).toBe(
      "b5d610fc0169...",
    );
    expect(formatValue("x".repeat(200), 10)).toBe("xxxxxxx...");
    expect(formatValue("")).toBe('""');
  });
});

describe("formatDiffs", () => {
  it("prints notes, then + ~ - per object with its fields, then the counts", () => {
    const text = formatDiffs(
      [
        {
          namespace: "ns",
          name: "p",
          notes: ["spec.version 1.5.0 -> 1.6.0: shown is the end state"],
          changes: [
            { op: "add", apiVersion: "v1", kind: "ConfigMap", namespace: "ns", name: "new", fields: [] },
            {
              op: "change",
              apiVersion: "apps/v1",
              kind: "Deployment",
              namespace: "ns",
              name: "gateway",
              fields: [{ path: "spec.replicas", from: 3, to: 5 }],
            },
            { op: "prune", apiVersion: "v1", kind: "Service", namespace: "ns", name: "old", fields: [] },
            {
              op: "change",
              apiVersion: "batch/v1",
              kind: "Job",
              namespace: "ns",
              name: "topics",
              fields: [],
              note: "its pod template is immutable: the operator re-creates it",
            },
          ],
        },
      ],
      plain,
    );
    expect(text).toBe(
      [
        "# ns/p: spec.version 1.5.0 -> 1.6.0: shown is the end state",
        "+ ConfigMap/new",
        "~ Deployment/gateway",
        "    spec.replicas: 3 -> 5",
        "- Service/old",
        "~ Job/topics  (its pod template is immutable: the operator re-creates it)",
        "1 to add, 2 to change, 1 to prune",
        "",
      ].join("\n"),
    );
    expect(formatDiffs([{ namespace: "ns", name: "p", notes: [], changes: [] }], plain)).toBe(
      "no differences\n",
    );
  });
});
