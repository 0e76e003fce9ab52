// The secret-hygiene check every operator suite runs at its end (test/support/secret-hygiene.ts)
// must be able to fail: a generated value planted in a log file is found and named.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/kube/index.js";
import { createTestNamespace } from "../support/cluster.js";
import { adminClient, installCrd } from "../support/platform.js";
import { assertNoSecretLeaks } from "../support/secret-hygiene.js";

describe("secret hygiene check", () => {
  it("passes on clean output and names the Secret and the place of a leak, not the value", async () => {
    const client = adminClient();
    // The check lists OntoPlatforms: the CRD must be served even when this file runs first.
    await installCrd(client);
    const ns = await createTestNamespace("hygiene");
    const value = `s3cr3t-${Date.now().toString(36)}-value`;
    await client.create({
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "postgres-credentials",
        namespace: ns,
        labels: { "onto.paas/generated-secret": "true" },
      },
      stringData: { password: value },
    } as KubeObject);
    const dir = mkdtempSync(join(tmpdir(), "hygiene-"));
    const clean = join(dir, "clean.log");
    writeFileSync(clean, '{"msg":"applied Secret/postgres-credentials"}\n');
    await expect(assertNoSecretLeaks(client, [ns], [clean])).resolves.toMatchObject({ values: 1 });

    const leaky = join(dir, "leaky.log");
    writeFileSync(leaky, `{"msg":"connecting with ${value}"}\n`);
    const err = await assertNoSecretLeaks(client, [ns], [clean, leaky]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(String(err)).toContain(`${ns}/postgres-credentials[password] in ${leaky}`);
    expect(String(err)).not.toContain(value);
  });
});
