// The write gate against the real API server: it is asked when a write is made and again at the
// socket, so a write whose lease lapsed between the two (the process stalled in between) never
// reaches the server, and a write the gate allows is sent whole (its body as exact bytes with the
// headers) on a pooled connection.
import { beforeAll, describe, expect, it } from "vitest";
import { NotFoundError, WriteRefusedError, type KubeObject } from "../../src/kube/index.js";
import { createTestNamespace } from "../support/cluster.js";
import { adminClient } from "../support/platform.js";

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

let ns = "";
beforeAll(async () => {
  ns = await createTestNamespace("write-fence");
});

const configMap = (name: string, data: Record<string, string>): ConfigMap => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: ns },
  data,
});
const ref = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", namespace: ns, name });

/** Blocks the event loop for `ms`: what a frozen or stalled process looks like from inside. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    /* busy */
  }
}

describe("the write gate at the socket", () => {
  it("refuses a write whose lease lapsed after the first check: the server never sees it", async () => {
    const client = adminClient();
    const admin = adminClient();
    await admin.apply(configMap("kept", { v: "1" }));
    let validUntil = 0;
    let checks = 0;
    client.setWriteGate(() => {
      // The stall lands on the first microtask after the check made when the write was called:
      // inside fetch's own steps, before the request is written.
      if (checks++ === 0) queueMicrotask(() => stall(400));
      return performance.now() < validUntil ? undefined : "lease lapsed";
    });
    for (const [name, write] of [
      ["created", () => client.apply(configMap("created", { v: "1" }))],
      ["kept", () => client.mergePatch(ref("kept"), { data: { v: "2" } })],
    ] as const) {
      checks = 0;
      validUntil = performance.now() + 200;
      await expect(write(), name).rejects.toBeInstanceOf(WriteRefusedError);
      expect(checks, `${name}: checks`).toBe(2);
    }
    await expect(admin.get(ref("created"))).rejects.toBeInstanceOf(NotFoundError);
    expect((await admin.get<ConfigMap>(ref("kept"))).data).toEqual({ v: "1" });
  });

  it("sends an allowed write whole, on a pooled connection, as the same bytes", async () => {
    const client = adminClient();
    let checks = 0;
    client.setWriteGate(() => {
      checks++;
      return undefined;
    });
    // Multi-byte characters: the body's length is its bytes, not its characters.
    const big = "λ→✓ ".repeat(40_000);
    for (let i = 0; i < 5; i++) await client.apply(configMap(`big-${i}`, { big, i: String(i) }));
    expect(checks).toBe(10);
    for (let i = 0; i < 5; i++)
      expect((await adminClient().get<ConfigMap>(ref(`big-${i}`))).data).toEqual({ big, i: String(i) });
    await client.delete(ref("big-0"));
    await expect(client.get(ref("big-0"))).rejects.toBeInstanceOf(NotFoundError);
  });
});
