// What `onto approve-restarts` shows before it sets the annotation: the restarts the approval lets
// go (as `onto status` shows them), or that nothing waits.
import { describe, expect, it } from "vitest";
import type { OntoPlatform } from "../../api/index.js";
import { plain } from "../output.js";
import { restartsApproved, waitingLines } from "./approve-restarts.js";

const NOW = new Date("2026-12-01T12:00:00Z");

function platform(status: OntoPlatform["status"], annotations?: Record<string, string>): OntoPlatform {
  return {
    apiVersion: "onto.paas/v1alpha1",
    kind: "OntoPlatform",
    metadata: { name: "onto-production", namespace: "onto-system", ...(annotations ? { annotations } : {}) },
    spec: { version: "1.5.0" },
    ...(status ? { status } : {}),
  };
}

describe("onto approve-restarts", () => {
  it("lists what waits, with what holds it and why", () => {
    const lines = waitingLines(
      platform({
        disruption: {
          waiting: [
            {
              workload: "StatefulSet/postgres",
              reasons: ["resources"],
              cause: "MaintenanceWindow",
              since: "2026-12-01T11:00:00Z",
            },
          ],
          nextWindow: "2026-12-02T02:00:00Z",
        },
      }),
      NOW,
      plain,
    );
    expect(lines[0]).toBe("  1 workload(s) wait to restart their pods");
    expect(lines[2]).toMatch(/^ {4}StatefulSet\/postgres\s+MaintenanceWindow\s+resources\s+60m \(since /);
    expect(lines.at(-1)).toBe("  next maintenance window 2026-12-02T02:00:00Z (in 14h)");
  });

  it("says when nothing waits", () => {
    expect(waitingLines(platform(undefined), NOW, plain)).toEqual(["  no pod restart waits now"]);
  });

  it('reads the approval from the annotation (only "true" approves)', () => {
    expect(restartsApproved(platform(undefined, { "onto.paas/approve-restarts": "true" }))).toBe(true);
    expect(restartsApproved(platform(undefined, { "onto.paas/approve-restarts": "yes" }))).toBe(false);
    expect(restartsApproved(platform(undefined))).toBe(false);
  });
});
