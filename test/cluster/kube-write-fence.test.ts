// The write gate against the real API server: it is asked when a write is made and again at the
// socket, so a write whose lease lapsed between the two (the process stalled in between) never
// reaches the server; a write the gate allows is sent whole (its body as exact bytes with the
// headers) on a pooled connection, with the gate's server window as its timeout.
import { beforeAll, describe, expect, it } from "vitest";
import {
  ConnectionError,
  KubeApiError,
  NotFoundError,
  WriteRefusedError,
  type KubeObject,
} from "../../src/kube/index.js";
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
    client.setWriteGate({
      refuses: () => {
        // The stall lands on the first microtask after the check made when the write was called:
        // inside fetch's own steps, before the request is written.
        if (checks++ === 0) queueMicrotask(() => stall(400));
        return performance.now() < validUntil ? undefined : "lease lapsed";
      },
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
    const windows: (number | undefined)[] = [];
    client.setWriteGate({
      refuses: (windowMs) => {
        checks++;
        windows.push(windowMs);
        return undefined;
      },
      serverWindowMs: () => 20_000,
    });
    // Multi-byte characters: the body's length is its bytes, not its characters.
    const big = "λ→✓ ".repeat(40_000);
    for (let i = 0; i < 5; i++) await client.apply(configMap(`big-${i}`, { big, i: String(i) }));
    expect(checks).toBe(10);
    expect(new Set(windows)).toEqual(new Set([20_000]));
    for (let i = 0; i < 5; i++)
      expect((await adminClient().get<ConfigMap>(ref(`big-${i}`))).data).toEqual({ big, i: String(i) });
    await client.delete(ref("big-0"));
    await expect(client.get(ref("big-0"))).rejects.toBeInstanceOf(NotFoundError);
  });

  it("sends each write with its server window as its timeout: the API server gives up a write it cannot end in time", async () => {
    const client = adminClient();
    client.setWriteGate({ refuses: () => undefined, serverWindowMs: () => 1 });
    // One millisecond is shorter than any write takes through authentication, admission and etcd.
    const refused = await client.apply(configMap("late", { v: "1" })).then(
      () => undefined,
      (err: unknown) => err,
    );
    // The server answers 504, or, when its handler had begun its own timeout answer as the
    // deadline struck, ends the connection; either way the object was not stored.
    if (refused instanceof KubeApiError) expect(refused.code).toBe(504);
    else expect(refused).toBeInstanceOf(ConnectionError);
    await expect(adminClient().get(ref("late"))).rejects.toBeInstanceOf(NotFoundError);
    client.setWriteGate({ refuses: () => undefined, serverWindowMs: () => 10_000 });
    await client.apply(configMap("in-time", { v: "1" }));
    expect((await adminClient().get<ConfigMap>(ref("in-time"))).data).toEqual({ v: "1" });
  });
});
