// The late-CRD latch: releases start once, the first time discovery says the CRD is served, never
// while it is not, never twice (overlapping polls share one question), and never when they were
// watched from the start.
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../runtime/index.js";
import { lateCrd } from "./late-crd.js";

function latch(answers: (boolean | Error)[], watchingFromStart = false) {
  let asked = 0;
  let started = 0;
  const late = lateCrd({
    watchingFromStart,
    logger: silentLogger,
    served: async () => {
      const answer = answers[Math.min(asked++, answers.length - 1)];
      await Promise.resolve();
      if (answer instanceof Error) throw answer;
      return answer ?? false;
    },
    start: () => void started++,
  });
  return { late, asked: () => asked, started: () => started };
}

describe("lateCrd", () => {
  it("starts the releases at the first poll that finds the CRD, and only then", async () => {
    const t = latch([false, new Error("discovery failed"), true]);
    await t.late.recheck();
    await t.late.recheck();
    expect(t.started()).toBe(0);
    expect(t.late.watching).toBe(false);
    await t.late.recheck();
    expect(t.started()).toBe(1);
    expect(t.late.watching).toBe(true);
    await t.late.recheck();
    expect(t.asked()).toBe(3);
    expect(t.started()).toBe(1);
  });

  it("asks once for overlapping polls", async () => {
    const t = latch([true]);
    await Promise.all([t.late.recheck(), t.late.recheck(), t.late.recheck()]);
    expect(t.asked()).toBe(1);
    expect(t.started()).toBe(1);
  });

  it("never asks when the releases were watched from the start", async () => {
    const t = latch([true], true);
    await t.late.recheck();
    expect(t.asked()).toBe(0);
    expect(t.started()).toBe(0);
  });
});
