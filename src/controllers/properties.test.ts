// Invariants of the upgrade planner and the healing rules over generated inputs: the planner
// keeps the seed's order and converges; OOM healing never goes past its cap nor raises twice in
// a cooldown; node-loss healing does nothing when most of the pool is down and never frees a pod
// of a Ready node; the hourly rate limit holds. (Postgres failover's "one primary" joins these
// when failover lands with the real nodes.)
import fc from "fast-check";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { COMPONENTS, Quantity, type MemoryOverride } from "../api/index.js";
import { rateLimited, withinWindow, RATE_WINDOW_MS } from "./shared/healing-budget.js";
import type { NodeView } from "./shared/kube-views.js";
import { assessNodeLoss, isNotReady } from "./healing/nodes.js";
import { planMemoryRaise } from "./healing/oom.js";
import { imageAt, pathRefusal, planUpgrade } from "./upgrade/plan.js";
import { KNOWN_VERSIONS, PRODUCT_CATALOG } from "../release/index.js";

const REGISTRY = { registry: "registry.example.com/coomia-dip" };
const version = fc.constantFrom(...KNOWN_VERSIONS);
const running = fc.dictionary(fc.constantFrom(...COMPONENTS.map((c) => c.name)), version, {
  noNullPrototype: true,
});

describe("upgrade planner", () => {
  it("plans in the seed's order exactly the components whose image changes, and then nothing", () => {
    fc.assert(
      fc.property(running, version, (current, target) => {
        const now = new Map(Object.entries(current));
        const plan = planUpgrade(COMPONENTS, now, target, PRODUCT_CATALOG, REGISTRY);
        const order = COMPONENTS.map((c) => c.name);
        // A subsequence of COMPONENTS: the planes' order (infrastructure first, gateway last).
        expect(plan).toEqual(order.filter((name) => plan.includes(name)));
        for (const name of order) {
          const from = now.get(name) ?? target;
          const changes =
            imageAt(PRODUCT_CATALOG, name, from, REGISTRY) !==
            imageAt(PRODUCT_CATALOG, name, target, REGISTRY);
          expect(plan.includes(name), name).toBe(changes);
        }
        // Once every planned component runs the target, there is nothing left to do.
        for (const name of plan) now.set(name, target);
        expect(planUpgrade(COMPONENTS, now, target, PRODUCT_CATALOG, REGISTRY)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it("the built-in upgrade graph never allows a downgrade without force", () => {
    fc.assert(
      fc.property(version, version, fc.boolean(), (from, to, forced) => {
        const refused = pathRefusal(PRODUCT_CATALOG, from, to, forced);
        if (semver.lt(to, from) && !forced) expect(refused?.forceHelps, `${from} -> ${to}`).toBe(true);
        // Force only ever helps: what is allowed without it is allowed with it.
        if (pathRefusal(PRODUCT_CATALOG, from, to, false) === undefined)
          expect(pathRefusal(PRODUCT_CATALOG, from, to, true)).toBeUndefined();
      }),
      { numRuns: 200 },
    );
  });
});

const MI = 1024 * 1024;
const mebibytes = (n: number): string => `${n}Mi`;

describe("OOM healing", () => {
  const input = fc.record({
    podLimitMi: fc.integer({ min: 64, max: 65_536 }),
    requestMi: fc.option(fc.integer({ min: 16, max: 65_536 }), { nil: undefined }),
    factor: fc.double({ min: 1.1, max: 4, noNaN: true }),
    capMi: fc.integer({ min: 128, max: 131_072 }),
    cooldownSeconds: fc.integer({ min: 0, max: 86_400 }),
    raisedAgoSeconds: fc.option(fc.integer({ min: 0, max: 200_000 }), { nil: undefined }),
    raises: fc.integer({ min: 0, max: 20 }),
  });

  it("never raises past the cap, never lowers, keeps the request within the limit, waits out the cooldown", () => {
    const now = new Date("2026-11-30T03:00:00Z");
    fc.assert(
      fc.property(input, (i) => {
        const override: MemoryOverride | undefined =
          i.raisedAgoSeconds === undefined
            ? undefined
            : {
                memoryLimit: mebibytes(i.podLimitMi),
                raisedAt: new Date(now.getTime() - i.raisedAgoSeconds * 1000).toISOString(),
                raises: i.raises,
                atCap: false,
              };
        const decision = planMemoryRaise({
          component: "kafka",
          podLimit: mebibytes(i.podLimitMi),
          podRequest: i.requestMi === undefined ? undefined : mebibytes(i.requestMi),
          override,
          specRequest: i.requestMi === undefined ? undefined : mebibytes(i.requestMi),
          policy: {
            oomMemoryFactor: i.factor,
            maxMemory: mebibytes(i.capMi),
            cooldownSeconds: i.cooldownSeconds,
          },
          now,
        });
        const cap = Quantity.parse(mebibytes(i.capMi));
        if (i.podLimitMi >= i.capMi) expect(decision.kind).toBe("atCap");
        if (decision.kind === "cooldown") {
          expect(override).toBeDefined();
          expect(i.raisedAgoSeconds!).toBeLessThan(i.cooldownSeconds);
        }
        if (decision.kind !== "raise") return;
        const limit = Quantity.parse(decision.override.memoryLimit);
        expect(limit.compareTo(cap)).toBeLessThanOrEqual(0);
        expect(limit.compareTo(Quantity.parse(mebibytes(i.podLimitMi)))).toBeGreaterThan(0);
        expect(limit.toNumber() % MI).toBe(0);
        if (decision.override.memoryRequest)
          expect(Quantity.parse(decision.override.memoryRequest).compareTo(limit)).toBeLessThanOrEqual(0);
        expect(decision.override.raises).toBe((override?.raises ?? 0) + 1);
        expect(decision.override.atCap).toBe(limit.compareTo(cap) === 0);
        if (override) expect(i.raisedAgoSeconds!).toBeGreaterThanOrEqual(i.cooldownSeconds);
      }),
      { numRuns: 500 },
    );
  });
});

describe("node-loss healing", () => {
  const now = new Date("2026-11-30T03:00:00Z");
  const nodeArb = fc.record({
    ready: fc.constantFrom("True", "False", "Unknown"),
    downSeconds: fc.integer({ min: 0, max: 3_600 }),
    inPool: fc.boolean(),
  });
  const nodes = fc.array(nodeArb, { minLength: 1, maxLength: 12 }).map((list) =>
    list.map((n, i): NodeView => ({
      metadata: { name: `w${i}`, labels: n.inPool ? { pool: "a" } : { pool: "b" } },
      status: {
        conditions: [
          {
            type: "Ready",
            status: n.ready,
            lastTransitionTime: new Date(now.getTime() - n.downSeconds * 1000).toISOString(),
          },
        ],
      },
    })),
  );

  it("frees nothing when more than half of the pool is down, and only nodes down past the grace", () => {
    fc.assert(
      fc.property(nodes, fc.integer({ min: 30, max: 900 }), (list, graceSeconds) => {
        const pool = { nodeSelector: { pool: "a" }, tolerations: [] };
        const a = assessNodeLoss(list, pool, graceSeconds * 1000, now);
        const poolNodes = list.filter((n) => n.metadata?.labels?.pool === "a");
        const poolDown = poolNodes.filter(isNotReady).length;
        if (poolDown * 2 > poolNodes.length) {
          expect(a.lost).toEqual([]);
          expect(a.withheld).toEqual({ notReady: poolDown, total: poolNodes.length });
        }
        for (const lost of a.lost) {
          expect(isNotReady(lost)).toBe(true);
          const since = Date.parse(lost.status!.conditions![0]!.lastTransitionTime!);
          expect(now.getTime() - since).toBeGreaterThanOrEqual(graceSeconds * 1000);
        }
        if (a.recheckAfterMs !== undefined) expect(a.recheckAfterMs).toBeLessThanOrEqual(graceSeconds * 1000);
      }),
      { numRuns: 500 },
    );
  });
});

describe("healing rate limit", () => {
  it("keeps only the last hour (at most 100 actions) and limits at maxActionsPerHour", () => {
    const now = new Date("2026-11-30T03:00:00Z");
    const actions = fc
      .array(fc.integer({ min: 0, max: 2 * RATE_WINDOW_MS }), { maxLength: 150 })
      .map((ages) =>
        ages
          .sort((a, b) => b - a)
          .map((age) => ({
            at: new Date(now.getTime() - age).toISOString(),
            component: "kafka",
            action: "raise",
          })),
      );
    fc.assert(
      fc.property(actions, fc.integer({ min: 1, max: 1000 }), (list, max) => {
        const recent = withinWindow(list, now);
        expect(recent.length).toBeLessThanOrEqual(100);
        for (const a of recent) expect(now.getTime() - Date.parse(a.at)).toBeLessThan(RATE_WINDOW_MS);
        expect(rateLimited(recent, max)).toBe(recent.length >= max);
      }),
      { numRuns: 300 },
    );
  });
});
