// The fleet limit's slot table: at most N platforms restart pods at once, counted from the slots
// it gave and from what the caches show replacing pods; the oldest waiter goes first; a slot
// frees when its platform's rolls finish, or when the platform is gone; the waiters are woken.
import { describe, expect, it } from "vitest";
import { FleetLimit, type FleetRequest } from "./fleet-limit.js";

const T0 = Date.parse("2026-12-01T12:00:00Z");

function table(limit: number, opts: { inCaches?: Set<string>; gone?: Set<string> } = {}) {
  let now = T0;
  const woken: string[] = [];
  const fleet = new FleetLimit({
    limit,
    restartingInCaches: () => opts.inCaches ?? new Set(),
    exists: (key) => !(opts.gone ?? new Set()).has(key),
    wake: (key) => woken.push(key),
    now: () => new Date(now),
  });
  const tick = (ms: number) => (now += ms);
  return { fleet, woken, tick, at: () => new Date(now) };
}
const wants = (since: Date): FleetRequest => ({ wants: true, rolling: false, since });
const rolling: FleetRequest = { wants: false, rolling: true, since: new Date(T0) };
const idle: FleetRequest = { wants: false, rolling: false, since: new Date(T0) };

describe("the fleet limit", () => {
  it("admits anything without a limit", () => {
    const { fleet, at } = table(0);
    expect(fleet.request("a/p", wants(at())).admitted).toBe(true);
    expect(fleet.request("b/p", wants(at())).admitted).toBe(true);
  });

  it("two platforms asking in the same instant under a limit of 1: the first gets the slot, the second waits until the first's rolls finish", () => {
    const { fleet, woken, at } = table(1);
    expect(fleet.request("a/p", wants(at()))).toEqual({ admitted: true });
    expect(fleet.request("b/p", wants(at()))).toEqual({
      admitted: false,
      limit: 1,
      restarting: ["a/p"],
      ahead: 0,
    });
    // a's change is written; its workloads replace pods; b still waits.
    expect(fleet.request("a/p", rolling).admitted).toBe(true);
    expect(fleet.request("b/p", wants(at())).admitted).toBe(false);
    // a's rolls finished: its slot frees and b is woken, then admitted.
    expect(fleet.request("a/p", idle).admitted).toBe(true);
    expect(woken).toEqual(["b/p"]);
    expect(fleet.request("b/p", wants(at())).admitted).toBe(true);
    expect(fleet.request("a/p", wants(at())).admitted).toBe(false);
  });

  it("counts what the caches show replacing pods (a leader change: an empty table, a platform still rolling)", () => {
    const { fleet, at } = table(1, { inCaches: new Set(["a/p"]) });
    expect(fleet.request("b/p", wants(at()))).toMatchObject({ admitted: false, restarting: ["a/p"] });
    // a itself is not counted against itself.
    expect(fleet.request("a/p", wants(at())).admitted).toBe(true);
  });

  it("a platform rolling holds a slot whatever the limit (an emergency fix, an upgrade in flight)", () => {
    const { fleet, at } = table(1);
    expect(fleet.request("a/p", wants(at())).admitted).toBe(true);
    expect(fleet.request("b/p", rolling).admitted).toBe(true);
    expect(fleet.request("c/p", wants(at()))).toMatchObject({ admitted: false, restarting: ["a/p", "b/p"] });
  });

  it("lets the platform that has waited longest go first, even if a younger one asks first", () => {
    const { fleet, at, tick } = table(1);
    fleet.request("a/p", wants(at()));
    const older = at();
    expect(fleet.request("old/p", wants(older)).admitted).toBe(false);
    tick(5_000);
    expect(fleet.request("young/p", wants(at())).admitted).toBe(false);
    fleet.request("a/p", idle);
    // young asks first after the slot freed, but old waited longer.
    expect(fleet.request("young/p", wants(at()))).toMatchObject({
      admitted: false,
      restarting: [],
      ahead: 1,
    });
    expect(fleet.request("old/p", wants(older)).admitted).toBe(true);
  });

  it("the place in the queue comes from the status (since), so it survives a restart of the operator", () => {
    const { fleet, at, tick } = table(1, { inCaches: new Set(["a/p"]) });
    tick(60_000);
    fleet.request("young/p", wants(at()));
    expect(fleet.request("old/p", wants(new Date(T0))).admitted).toBe(false);
    expect(fleet.request("young/p", wants(at()))).toMatchObject({ ahead: 1 });
  });

  it("a limit of 2 admits two", () => {
    const { fleet, at } = table(2);
    expect(fleet.request("a/p", wants(at())).admitted).toBe(true);
    expect(fleet.request("b/p", wants(at())).admitted).toBe(true);
    expect(fleet.request("c/p", wants(at()))).toMatchObject({ admitted: false, restarting: ["a/p", "b/p"] });
  });

  it("frees the slot of a platform deleted or gone, and forgets waiters that stopped asking", () => {
    const gone = new Set<string>();
    const { fleet, woken, at } = table(1, { gone });
    fleet.request("a/p", wants(at()));
    fleet.request("b/p", wants(at()));
    fleet.forget("a/p");
    expect(woken).toEqual(["b/p"]);
    expect(fleet.request("b/p", wants(at())).admitted).toBe(true);
    gone.add("b/p");
    expect(fleet.request("c/p", wants(at())).admitted).toBe(true);
    // A waiter not seen for over a minute is not waited for.
    const { fleet: f2, at: at2, tick: tick2 } = table(1);
    f2.request("x/p", wants(at2()));
    f2.request("stale/p", wants(at2()));
    f2.request("x/p", idle);
    tick2(61_000);
    expect(f2.request("late/p", wants(at2())).admitted).toBe(true);
  });
});
