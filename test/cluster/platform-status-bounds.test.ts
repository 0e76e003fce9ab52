// A status that names hundreds of failed applies against the real API server: joined as it came,
// the Degraded message is above the CRD's bound and the API server refuses the whole status patch
// (the platform would keep whatever status it had); computed by computeStatus and written by the
// one status writer, it is bounded and taken.
import { beforeAll, describe, expect, it } from "vitest";
import {
  MAX_MESSAGE,
  PLATFORM_REF,
  resolveSpec,
  type OntoPlatform,
  type OntoPlatformStatus,
} from "../../src/api/index.js";
import { computeStatus } from "../../src/controllers/platform/status.js";
import { writePlatformStatus } from "../../src/controllers/shared/platform-status.js";
import { InvalidError, type KubeObject } from "../../src/kube/index.js";
import { createTestNamespace } from "../support/cluster.js";
import { adminClient, installCrd, loadSample } from "../support/platform.js";

type Platform = OntoPlatform & KubeObject;
const client = adminClient();
let ns = "";
const ref = () => ({ ...PLATFORM_REF, namespace: ns, name: "onto-minimal" });

const applyErrors = Array.from(
  { length: 200 },
  (_, i) =>
    `Service/component-${i}: admission webhook "policy.example.com" denied the request: services of this namespace need the label team (${"detail ".repeat(10)})`,
);

beforeAll(async () => {
  await installCrd(client);
  ns = await createTestNamespace("status-bounds");
  await client.create(loadSample("minimal.yaml", ns));
});

describe("a status naming 200 failed applies", () => {
  it("is refused by the API server when the errors are joined as they came", async () => {
    const joined = applyErrors.join("; ");
    expect(Buffer.byteLength(joined, "utf8")).toBeGreaterThan(MAX_MESSAGE);
    const status = {
      conditions: [
        {
          type: "Degraded",
          status: "True",
          reason: "ApplyFailed",
          message: joined,
          lastTransitionTime: "2026-12-01T10:00:00Z",
        },
      ],
    };
    const refused = await client.mergePatch(ref(), { status }, "status").catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(InvalidError);
    expect(String((refused as Error).message)).toContain("status.conditions[0].message");
  });

  it("is taken when computed and written by the status writer, the message bounded", async () => {
    const platform = await client.get<Platform>(ref());
    const spec = resolveSpec(platform.spec);
    const written = await writePlatformStatus(client, platform, (current: OntoPlatformStatus) =>
      computeStatus({
        spec,
        generation: platform.metadata.generation ?? 1,
        previous: current,
        workloads: new Map(),
        applyErrors,
        problems: [],
        changed: 0,
        paused: false,
        now: new Date(),
      }),
    );
    const stored = await client.get<Platform>(ref());
    const degraded = stored.status?.conditions?.find((c) => c.type === "Degraded");
    console.log(
      `[figures] Degraded message of 200 apply errors: ${Buffer.byteLength(degraded?.message ?? "", "utf8")} bytes stored (joined: ${Buffer.byteLength(applyErrors.join("; "), "utf8")}); ends "${degraded?.message.slice(-24)}"`,
    );
    expect(written).toBeDefined();
    expect(stored.status?.phase).toBe("Error");
    expect(degraded?.message).toContain("Service/component-0:");
    expect(degraded?.message).toMatch(/\(and \d+ more\)$/);
  });
});
