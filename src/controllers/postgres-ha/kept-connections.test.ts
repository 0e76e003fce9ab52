import { describe, expect, it } from "vitest";
import type pg from "pg";
import { KeptConnections, connectionKey } from "./kept-connections.js";

/** A stand-in for a connected pg.Client: what KeptConnections touches (end, its stream). */
function client(): pg.Client & { ended: boolean } {
  const fake = {
    ended: false,
    connection: { stream: {} },
    end() {
      fake.ended = true;
      return Promise.resolve();
    },
  };
  return fake as unknown as pg.Client & { ended: boolean };
}

describe("KeptConnections", () => {
  it("gives back the connection kept for a host only to a look opened the same way", () => {
    let now = 0;
    const kept = new KeptConnections(60_000, 30_000, () => now);
    const a = client();
    const key = connectionKey(["10.0.0.1", "onto", "secret", undefined, undefined]);
    kept.keep("10.0.0.1", key, a);
    now = 1_000;
    expect(kept.take("10.0.0.1", key)).toBe(a);
    expect(kept.take("10.0.0.2", key)).toBeUndefined();
    // Other credentials (a rotated password): the old connection is closed, not handed out.
    const other = connectionKey(["10.0.0.1", "onto", "rotated", undefined, undefined]);
    expect(kept.take("10.0.0.1", other)).toBeUndefined();
    expect(a.ended).toBe(true);
    expect(kept.size).toBe(0);
  });

  it("closes a connection once it is older than the maximum age or idle too long", () => {
    let now = 0;
    const kept = new KeptConnections(60_000, 30_000, () => now);
    const key = connectionKey(["h"]);
    const young = client();
    kept.keep("a", key, young);
    const idle = client();
    kept.keep("b", key, idle);
    for (now = 10_000; now < 60_000; now += 10_000) expect(kept.take("a", key)).toBe(young);
    // "b" has not been used for 50 s: closed at the next take, whichever host it is for.
    expect(idle.ended).toBe(true);
    now = 60_000;
    expect(kept.take("a", key)).toBeUndefined();
    expect(young.ended).toBe(true);
  });

  it("drops and closes on request, and closes everything at once", () => {
    const kept = new KeptConnections();
    const key = connectionKey(["h"]);
    const [a, b] = [client(), client()];
    kept.keep("a", key, a);
    kept.keep("b", key, b);
    kept.drop("a");
    expect(a.ended).toBe(true);
    expect(kept.size).toBe(1);
    kept.closeAll();
    expect(b.ended).toBe(true);
    expect(kept.size).toBe(0);
  });
});
