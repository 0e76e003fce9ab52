import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decideRolling, type RollingDecision, type RollingInput, type RollingMember } from "./rolling.js";

const member = (ordinal: number, over: Partial<RollingMember> = {}): RollingMember => ({
  name: `postgres-${ordinal}`,
  ordinal,
  pod: "present",
  uid: `uid-${ordinal}`,
  updated: false,
  ready: true,
  streaming: true,
  ...over,
});

const memberArb = (ordinal: number): fc.Arbitrary<RollingMember> =>
  fc.record({
    name: fc.constant(`postgres-${ordinal}`),
    ordinal: fc.constant(ordinal),
    pod: fc.constantFrom<RollingMember["pod"]>(
      "present",
      "present",
      "present",
      "present",
      "terminating",
      "absent",
    ),
    uid: fc.option(fc.constant(`uid-${ordinal}`), { nil: undefined, freq: 8 }),
    updated: fc.boolean(),
    ready: fc.boolean(),
    streaming: fc.boolean(),
  });

const inputArb: fc.Arbitrary<RollingInput> = fc.integer({ min: 2, max: 5 }).chain((n) =>
  fc.record({
    members: fc.tuple(...Array.from({ length: n }, (_, i) => memberArb(i))),
    primary: fc.option(fc.constantFrom(...Array.from({ length: n }, (_, i) => `postgres-${i}`)), {
      nil: undefined,
    }),
    partition: fc.constantFrom(0, 0, 0, n - 1),
    busy: fc.option(fc.constant("a promotion is in flight"), { nil: undefined, freq: 6 }),
  }),
);

/** The member the decision stops (deleted, or the primary that a switchover deletes). */
function stopped(d: RollingDecision): string | undefined {
  return d.action === "delete" ? d.member : d.action === "switchover" ? d.from : undefined;
}

const outdatedOthers = (input: RollingInput): RollingMember[] =>
  input.members.filter(
    (m) => m.name !== input.primary && m.pod === "present" && !m.updated && m.ordinal >= input.partition,
  );

describe("Postgres rolling update: properties", () => {
  it("stops at most one member, a present one on an old revision at or above the partition, by its uid", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const d = decideRolling(input);
        const name = stopped(d);
        if (name === undefined) return;
        const m = input.members.find((x) => x.name === name);
        expect(m?.pod).toBe("present");
        expect(m?.updated).toBe(false);
        expect(m?.ordinal).toBeGreaterThanOrEqual(input.partition);
        if (d.action === "delete") expect(d.uid).toBe(m?.uid);
      }),
      { numRuns: 3000 },
    );
  });

  it("never stops a member while another is being replaced, nor while HA is busy", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const d = decideRolling(input);
        if (input.busy || input.members.some((m) => m.pod !== "present")) expect(stopped(d)).toBeUndefined();
      }),
      { numRuns: 3000 },
    );
  });

  it("never deletes the primary while a Ready streaming standby exists (it is switched over from)", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const d = decideRolling(input);
        const healthy = input.members.some((m) => m.name !== input.primary && m.ready && m.streaming);
        if (d.action === "delete" && healthy) expect(d.member).not.toBe(input.primary);
      }),
      { numRuns: 3000 },
    );
  });

  it("never stops the primary while another member at or above the partition is on an old revision", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const d = decideRolling(input);
        if (input.primary !== undefined && stopped(d) === input.primary) {
          // Only a primary that is not Ready with no standby streaming goes before the others.
          const exception = d.action === "delete";
          if (!exception) expect(outdatedOthers(input)).toEqual([]);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("switches over only to a Ready streaming standby, an updated one when there is one", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const d = decideRolling(input);
        if (d.action !== "switchover") return;
        expect(d.from).toBe(input.primary);
        const to = input.members.find((m) => m.name === d.to);
        expect(to?.ready && to.streaming && to.name !== input.primary).toBe(true);
        const updated = input.members.some(
          (m) => m.name !== input.primary && m.ready && m.streaming && m.updated,
        );
        if (updated) expect(to?.updated).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it("replaces a Ready member only once every member replaced before it is Ready (and streaming)", () => {
    fc.assert(
      fc.property(inputArb, (input) => {
        const d = decideRolling(input);
        const name = stopped(d);
        const m = input.members.find((x) => x.name === name);
        if (!m?.ready) return;
        for (const done of input.members.filter((x) => x.updated && x.name !== input.primary)) {
          expect(done.ready).toBe(true);
          if (input.primary !== undefined) expect(done.streaming).toBe(true);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("ends, on a healthy set of members, with every member replaced, standbys highest ordinal first and the primary last", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 5 }).chain((n) =>
          fc.record({
            n: fc.constant(n),
            primary: fc.option(fc.integer({ min: 0, max: n - 1 }), { nil: undefined }),
          }),
        ),
        ({ n, primary }) => {
          let members = Array.from({ length: n }, (_, i) => member(i, { streaming: primary !== undefined }));
          let current = primary === undefined ? undefined : `postgres-${primary}`;
          if (current) members = members.map((m) => (m.name === current ? { ...m, streaming: false } : m));
          const order: string[] = [];
          for (let step = 0; step < 2 * n; step++) {
            const d = decideRolling({ members, primary: current, partition: 0 });
            if (d.action === "done") break;
            expect(d.action === "delete" || d.action === "switchover").toBe(true);
            const gone = stopped(d) as string;
            order.push(d.action === "switchover" ? `switchover ${d.from}->${d.to}` : gone);
            if (d.action === "switchover") current = d.to;
            // The pod comes back on the new revision; a standby streams again.
            members = members.map((m) =>
              m.name === gone
                ? { ...m, updated: true, uid: `${m.uid ?? ""}'`, streaming: current !== undefined }
                : m.name === current
                  ? { ...m, streaming: false }
                  : m,
            );
          }
          expect(members.every((m) => m.updated)).toBe(true);
          const ordinals = Array.from({ length: n }, (_, i) => n - 1 - i);
          if (primary === undefined) {
            expect(order).toEqual(ordinals.map((i) => `postgres-${i}`));
          } else {
            const standbys = ordinals.filter((i) => i !== primary).map((i) => `postgres-${i}`);
            expect(order.slice(0, -1)).toEqual(standbys);
            expect(order.at(-1)).toBe(`switchover postgres-${primary}->${standbys[0]}`);
          }
        },
      ),
    );
  });
});

describe("Postgres rolling update: cases", () => {
  it("replaces a member that is not Ready on an old revision first", () => {
    const d = decideRolling({
      members: [member(0, { streaming: false }), member(1, { ready: false, streaming: false }), member(2)],
      primary: "postgres-0",
      partition: 0,
    });
    expect(d).toMatchObject({ action: "delete", member: "postgres-1", uid: "uid-1" });
  });

  it("waits for a replaced standby to stream again before the next", () => {
    const d = decideRolling({
      members: [member(0, { streaming: false }), member(1), member(2, { updated: true, streaming: false })],
      primary: "postgres-0",
      partition: 0,
    });
    expect(d).toEqual({ action: "wait", why: "postgres-2 (replaced) is not streaming from the primary yet" });
  });

  it("with no primary ever named (simulated pods, no SQL) goes in ordinal order once the one before is Ready", () => {
    const members = [
      member(0, { streaming: false }),
      member(1, { streaming: false }),
      member(2, { streaming: false }),
    ];
    expect(decideRolling({ members, primary: undefined, partition: 0 })).toMatchObject({
      action: "delete",
      member: "postgres-2",
    });
    const starting = [members[0], members[1], member(2, { updated: true, ready: false, streaming: false })];
    expect(decideRolling({ members: starting as RollingMember[], primary: undefined, partition: 0 })).toEqual(
      {
        action: "wait",
        why: "postgres-2 (replaced) is not Ready yet",
      },
    );
  });

  it("in an upgrade's canary step replaces only the highest ordinal, switching over first when it is the primary", () => {
    const members = [member(0), member(1), member(2, { streaming: false })];
    expect(decideRolling({ members, primary: "postgres-2", partition: 2 })).toMatchObject({
      action: "switchover",
      from: "postgres-2",
      to: "postgres-1",
    });
    const after = [member(0), member(1), member(2, { updated: true })];
    expect(decideRolling({ members: after, primary: "postgres-1", partition: 2 })).toEqual({
      action: "done",
    });
  });

  it("keeps the primary when no standby streams to hand over to", () => {
    const d = decideRolling({
      members: [member(0, { streaming: false }), member(1, { updated: true, streaming: true, ready: false })],
      primary: "postgres-0",
      partition: 0,
    });
    expect(d).toEqual({ action: "wait", why: "postgres-1 (replaced) is not Ready yet" });
  });

  it("never deletes a pod without a uid to hold the delete to", () => {
    const d = decideRolling({
      members: [member(0, { streaming: false }), member(1, { uid: undefined })],
      primary: "postgres-0",
      partition: 0,
    });
    expect(d).toEqual({ action: "wait", why: "postgres-1 has no uid yet" });
  });
});
