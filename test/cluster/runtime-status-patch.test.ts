// The status writer every controller uses (runtime's patchStatus) against the real API server: a
// write computed from a stale read is refused by the resourceVersion precondition, the object is
// read again and the change computed again over what another writer wrote meanwhile, so neither
// write is lost; an update that changes nothing sends nothing; a refusal from the update stops it.
import { beforeAll, describe, expect, it } from "vitest";
import { PLATFORM_REF, type OntoPlatform, type OntoPlatformStatus } from "../../src/api/index.js";
import type { KubeObject, RequestRecord } from "../../src/kube/index.js";
import { patchStatus } from "../../src/runtime/index.js";
import { createTestNamespace } from "../support/cluster.js";
import { adminClient, installCrd, loadSample } from "../support/platform.js";

type Platform = OntoPlatform & KubeObject;
const client = adminClient();
let ns = "";

beforeAll(async () => {
  await installCrd(client);
  ns = await createTestNamespace("rt-status");
  await client.create(loadSample("minimal.yaml", ns));
});

const ref = () => ({ ...PLATFORM_REF, namespace: ns, name: "onto-minimal" });

describe("patchStatus", () => {
  it("computes the change again over a fresh read after a conflict, keeping the other writer's fields", async () => {
    const stale = await client.get<Platform>(ref());
    // Another writer gets in first.
    await client.mergePatch(ref(), { status: { phase: "Provisioning", version: "1.4.0" } }, "status");
    const requests: RequestRecord[] = [];
    const off = client.onRequest((r) => requests.push(r));
    const seen: (OntoPlatformStatus | undefined)[] = [];
    let written: Platform | undefined;
    try {
      written = await patchStatus<OntoPlatformStatus, Platform>(
        client,
        ref(),
        { resourceVersion: stale.metadata.resourceVersion, status: stale.status },
        (current) => {
          seen.push(current);
          return { ...current, version: "1.5.0" };
        },
      );
    } finally {
      off();
    }
    expect(requests.map((r) => `${r.method} ${r.code}`)).toEqual(["PATCH 409", "GET 200", "PATCH 200"]);
    expect(seen[1]?.phase).toBe("Provisioning");
    expect(written?.status).toMatchObject({ phase: "Provisioning", version: "1.5.0" });
  });

  it("sends nothing when the update changes nothing, and stops when the update refuses", async () => {
    const live = await client.get<Platform>(ref());
    const read = { resourceVersion: live.metadata.resourceVersion, status: live.status };
    const requests: RequestRecord[] = [];
    const off = client.onRequest((r) => requests.push(r));
    try {
      expect(
        await patchStatus<OntoPlatformStatus, Platform>(client, ref(), read, (s) => ({ ...s })),
      ).toBeUndefined();
      expect(requests).toEqual([]);
      await client.mergePatch(ref(), { status: { version: "1.6.0" } }, "status");
      requests.length = 0;
      const refused = patchStatus<OntoPlatformStatus, Platform>(client, ref(), read, (s) => {
        if (s?.version !== read.status?.version) throw new Error("decided from another version");
        return { ...s, phase: "Running" };
      });
      await expect(refused).rejects.toThrow("decided from another version");
      expect(requests.map((r) => `${r.method} ${r.code}`)).toEqual(["PATCH 409", "GET 200"]);
    } finally {
      off();
    }
    expect((await client.get<Platform>(ref())).status?.phase).toBe("Provisioning");
  });
});
