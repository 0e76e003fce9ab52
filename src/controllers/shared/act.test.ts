// act() records every action once, as done or as failed (with the failure's own words), never
// throws, and counts what took effect; the records go to the audit sink as the operator writes them.
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { KubeClient } from "../../kube/index.js";
import { EventRecorder, type EventObject } from "../../runtime/index.js";
import { WAVE_CONCURRENCY, act, actAll, type ActionContext, type ClusterAction } from "./act.js";
import { ActionRecorder } from "./actions.js";

function context(events?: EventRecorder): { ctx: ActionContext; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const recorder = new ActionRecorder(
    events,
    { write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) },
    new Registry(),
  );
  const platform = {
    apiVersion: "onto.paas/v1alpha1",
    kind: "OntoPlatform",
    metadata: { name: "p", namespace: "ns", uid: "u" },
  };
  // act passes the client to run() only; these actions do not use it.
  const client = {} as KubeClient;
  return { ctx: { client, recorder, actor: "reconciler", platform, reconcileId: "p-1-x" }, lines };
}

function action(name: string, run: () => Promise<boolean>): ClusterAction {
  return {
    verb: "delete",
    target: { apiVersion: "v1", kind: "Pod", namespace: "ns", name },
    reason: "Pruned",
    message: `pruned Pod/${name}`,
    failure: { reason: "PruneFailed", message: `could not prune Pod/${name}` },
    label: `prune Pod/${name}`,
    run,
  };
}

describe("act", () => {
  it("records a done action, records a failed one with its failure words and the error, and never throws", async () => {
    const { ctx, lines } = context();
    expect(
      await act(
        ctx,
        action("a", () => Promise.resolve(true)),
      ),
    ).toEqual({ ok: true, took: true });
    expect(
      await act(
        ctx,
        action("b", () => Promise.reject(new Error("forbidden"))),
      ),
    ).toMatchObject({ ok: false, error: "forbidden" });
    expect(lines.map((l) => [l.reason, l.message, l.outcome, l.error, l.reconcileId, l.actor])).toEqual([
      ["Pruned", "pruned Pod/a", "ok", undefined, "p-1-x", "reconciler"],
      ["PruneFailed", "could not prune Pod/b", "error", "forbidden", "p-1-x", "reconciler"],
    ]);
  });

  it("does not record an action that found nothing to do, and counts only what took effect", async () => {
    const { ctx, lines } = context();
    const results = await actAll(ctx, [
      action("a", () => Promise.resolve(false)),
      action("b", () => Promise.resolve(true)),
      action("c", () => Promise.reject(new Error("conflict"))),
      action("d", () => Promise.resolve(true)),
    ]);
    expect(results).toMatchObject({ changed: 2, errors: ["prune Pod/c: conflict"] });
    expect(results.causes.map((c) => (c as Error).message)).toEqual(["conflict"]);
    expect(lines.map((l) => (l.object as { name: string }).name)).toEqual(["b", "c", "d"]);
  });
});

describe("waves", () => {
  /** An action of `wave` that stays in flight until released, logging when it starts and ends. */
  function held(name: string, wave: number | undefined, log: string[], fail = false) {
    let release = (): void => undefined;
    const done = new Promise<void>((resolve) => (release = resolve));
    const a: ClusterAction = {
      ...action(name, async () => {
        log.push(`start ${name}`);
        await done;
        log.push(`end ${name}`);
        if (fail) throw new Error(`${name} refused`);
        return true;
      }),
      wave,
    };
    return { action: a, release };
  }
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

  it("runs a wave's actions together, at most WAVE_CONCURRENCY at once, and the next wave only after it", async () => {
    const { ctx, lines } = context();
    const log: string[] = [];
    const first = Array.from({ length: WAVE_CONCURRENCY + 2 }, (_, i) => held(`a${i}`, 1, log, i === 3));
    const second = [held("b0", 2, log), held("b1", 2, log)];
    const alone = held("c", undefined, log);
    const running = actAll(
      ctx,
      [...first, ...second, alone].map((h) => h.action),
    );
    await settle();
    expect(log).toEqual(first.slice(0, WAVE_CONCURRENCY).map((h) => `start ${h.action.target.name}`));
    // The last answer of the wave comes first; a free slot takes the next action of the same wave.
    first[WAVE_CONCURRENCY - 1]!.release();
    await settle();
    expect(log.slice(-2)).toEqual([`end a${WAVE_CONCURRENCY - 1}`, `start a${WAVE_CONCURRENCY}`]);
    for (const h of first) h.release();
    await settle();
    expect(log.filter((l) => l.startsWith("start b"))).toEqual(["start b0", "start b1"]);
    expect(log.indexOf("start b0")).toBeGreaterThan(
      Math.max(...first.map((h) => log.indexOf(`end ${h.action.target.name}`))),
    );
    expect(log).not.toContain("start c");
    for (const h of second) h.release();
    await settle();
    expect(log.at(-1)).toBe("start c");
    alone.release();
    const results = await running;
    // Errors and counts in the actions' order, whatever order the answers came in.
    expect(results).toMatchObject({ changed: WAVE_CONCURRENCY + 4, errors: ["prune Pod/a3: a3 refused"] });
    expect(lines).toHaveLength(WAVE_CONCURRENCY + 5);
  });

  it("starts nothing more once stop says so, and finishes what is in flight", async () => {
    const { ctx } = context();
    const log: string[] = [];
    const wave = Array.from({ length: WAVE_CONCURRENCY + 4 }, (_, i) => held(`a${i}`, 1, log));
    let stopped = false;
    const running = actAll(ctx, [...wave.map((h) => h.action), held("later", 2, log).action], () => stopped);
    await settle();
    stopped = true;
    for (const h of wave) h.release();
    const results = await running;
    expect(results.changed).toBe(WAVE_CONCURRENCY);
    expect(log.filter((l) => l.startsWith("start"))).toHaveLength(WAVE_CONCURRENCY);
  });
});

describe("Events of a run", () => {
  /** The Events an EventRecorder hands to its sink. */
  function eventSink(): { events: EventRecorder; created: EventObject[] } {
    const created: EventObject[] = [];
    const events = new EventRecorder({
      controller: "onto.paas/onto-operator",
      instance: "test",
      sink: {
        create: (e) => Promise.resolve(void created.push(e)),
        updateSeries: () => Promise.resolve(),
      },
    });
    return { events, created };
  }

  function create(name: string, group: string, run: () => Promise<boolean>): ClusterAction {
    return {
      verb: "create",
      target: { apiVersion: "v1", kind: "ConfigMap", namespace: "ns", name },
      reason: "Missing",
      message: `created ConfigMap/${name}`,
      summary: { phrase: "created", group },
      failure: { reason: "ApplyFailed", message: `could not apply ConfigMap/${name}` },
      label: `ConfigMap/${name}`,
      run,
    };
  }

  it("summarises the creations of a run in one Event by component, keeps an audit line each, and reports failures and other actions on their own", async () => {
    const { events, created } = eventSink();
    const { ctx, lines } = context(events);
    const ok = () => Promise.resolve(true);
    await actAll(ctx, [
      create("postgres-config", "postgres", ok),
      create("postgres-init", "postgres", ok),
      create("redis-config", "redis", ok),
      create("broken", "redis", () => Promise.reject(new Error("forbidden"))),
      action("old", ok),
      create("postgres-extra", "postgres", ok),
    ]);
    await events.stop();
    expect(created.map((e) => [e.type, e.reason, e.note])).toEqual([
      ["Warning", "ApplyFailed", "could not apply ConfigMap/broken: forbidden"],
      ["Normal", "Pruned", "pruned Pod/old"],
      ["Normal", "Missing", "created 4 objects: postgres 3, redis 1"],
    ]);
    expect(lines.map((l) => (l.object as { name: string }).name)).toEqual([
      "postgres-config",
      "postgres-init",
      "redis-config",
      "broken",
      "old",
      "postgres-extra",
    ]);
  });

  it("gives a single creation its own words (a repaired object)", async () => {
    const { events, created } = eventSink();
    const { ctx } = context(events);
    await actAll(ctx, [create("postgres-config", "postgres", () => Promise.resolve(true))]);
    await events.stop();
    expect(created.map((e) => e.note)).toEqual(["created ConfigMap/postgres-config"]);
  });
});
