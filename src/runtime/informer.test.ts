// The informer holds each watch for 30-60 minutes, as the API server does for a watch that names no
// timeout: every reconnect is a request, and an idle operator with an informer per kind should
// send almost none.
import { describe, expect, it } from "vitest";
import type { KubeClient, WatchOptions } from "../kube/index.js";
import { Informer } from "./informer.js";

describe("Informer", () => {
  it("asks the server for watches of 30 to 60 minutes", async () => {
    const asked: WatchOptions[] = [];
    // The two calls the informer makes: an empty list, then watches that end at once.
    const client = {
      list: () => Promise.resolve({ items: [], resourceVersion: "1" }),
      async *watch(_apiVersion: string, _kind: string, opts: WatchOptions = {}) {
        asked.push(opts);
        opts.onOpen?.();
        await Promise.resolve();
        yield* [];
      },
    } as unknown as KubeClient; // only list and watch are used
    const informer = new Informer(client, { apiVersion: "v1", kind: "ConfigMap", backoffBaseMs: 1 });
    informer.start();
    await informer.waitForSync();
    while (asked.length < 20) await new Promise((r) => setTimeout(r, 5));
    await informer.stop();
    for (const opts of asked) {
      expect(opts.timeoutSeconds).toBeGreaterThanOrEqual(1800);
      expect(opts.timeoutSeconds).toBeLessThan(3600);
    }
  });
});
