// act() records every action once, as done or as failed (with the failure's own words), never
// throws, and counts what took effect; the records go to the audit sink as the operator writes them.
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { KubeClient } from "../../kube/index.js";
import { act, actAll, type ActionContext, type ClusterAction } from "./act.js";
import { ActionRecorder } from "./actions.js";

function context(): { ctx: ActionContext; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const recorder = new ActionRecorder(
    undefined,
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
