// act() records every action once, as done or as failed (with the failure's own words), never
// throws, and counts what took effect; the records go to the audit sink as the operator writes them.
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { KubeClient } from "../../kube/index.js";
import { EventRecorder, type EventObject } from "../../runtime/index.js";
import { act, actAll, type ActionContext, type ClusterAction } from "./act.js";
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
