// The optional APIs are looked for again every ten minutes, not every minute (each look-up is five
// GETs, most of an idle operator's requests), and one installed later is found then.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Discovery } from "../kube/index.js";
import { CapabilityPoll, discoverCapabilities } from "./capabilities.js";

/** Discovery answers of a server that serves the VPA once `vpa` is set; every path asked is kept. */
function server(): { discovery: Discovery; asked: string[]; serveVpa: () => void } {
  const asked: string[] = [];
  let vpa = false;
  const discovery = new Discovery((path) => {
    asked.push(path);
    if (path === "/api") return Promise.resolve({ versions: ["v1"] });
    if (path === "/apis")
      return Promise.resolve({
        groups: vpa ? [{ versions: [{ groupVersion: "autoscaling.k8s.io/v1" }] }] : [],
      });
    if (vpa && path === "/apis/autoscaling.k8s.io/v1")
      return Promise.resolve({
        resources: [
          { name: "verticalpodautoscalers", kind: "VerticalPodAutoscaler", namespaced: true, verbs: [] },
        ],
      });
    return Promise.resolve({ resources: [] });
  });
  return { discovery, asked, serveVpa: () => (vpa = true) };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("CapabilityPoll", () => {
  it("asks nothing for ten minutes after start, then finds an API installed meanwhile", async () => {
    const s = server();
    const poll = new CapabilityPoll(s, await discoverCapabilities(s), { onError: () => undefined });
    expect(poll.current().verticalPodAutoscaler).toBe(false);
    s.serveVpa();
    s.asked.length = 0;
    await vi.advanceTimersByTimeAsync(9 * 60_000 + 59_000);
    expect(s.asked).toEqual([]);
    expect(poll.current().verticalPodAutoscaler).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(s.asked.length).toBeGreaterThan(0);
    expect(poll.current().verticalPodAutoscaler).toBe(true);
    // And again ten minutes later, not before.
    s.asked.length = 0;
    await vi.advanceTimersByTimeAsync(9 * 60_000);
    expect(s.asked).toEqual([]);
    poll.stop();
    await vi.advanceTimersByTimeAsync(60 * 60_000);
    expect(s.asked).toEqual([]);
  });
});
