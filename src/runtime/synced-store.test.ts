import { describe, expect, it } from "vitest";
import { Store } from "./store.js";
import { CacheNotSyncedError, syncedStore } from "./synced-store.js";

describe("syncedStore", () => {
  it("refuses every read until its informer has synced, then answers from the store", () => {
    const store = new Store();
    store.upsert({ metadata: { name: "a", namespace: "ns" } });
    let synced = false;
    const view = syncedStore(store, () => synced, "v1/ConfigMap in ns");
    expect(() => view.getByName("ns", "a")).toThrow(CacheNotSyncedError);
    expect(() => view.byNamespace("ns")).toThrow("cache of v1/ConfigMap in ns has not synced yet");
    expect(() => view.size).toThrow(CacheNotSyncedError);
    synced = true;
    expect(view.getByName("ns", "a")?.metadata?.name).toBe("a");
    expect(view.byNamespace("ns")).toHaveLength(1);
    expect(view.size).toBe(1);
    expect("upsert" in view).toBe(false);
  });
});
