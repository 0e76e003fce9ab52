// Another field manager writes to what the operator manages: a field the operator owns (the
// gateway Deployment's replicas), an item of a list the operator owns (an env var added to the
// gateway container, which server-side apply by the operator cannot remove), and a field the
// operator does not own (an annotation of the Deployment). For each, the operator's writes to that
// Deployment are counted over a window (its audit log has one line per write) and the outcome
// stated: reverted, reported, or left alone. Writing again and again at the other manager is a
// fight, and counts as a failure of the case.
import type { KubeClient, KubeObject } from "../../../src/kube/index.js";
import { createTestNamespace, eventually } from "../../support/cluster.js";
import { loadSample, readPlatform } from "../../support/platform.js";
import { auditLines, type Workload } from "../../cluster/upgrade-support.js";
import { operatorSlot, type OperatorSlot } from "../operator.js";
import { sleep, type CaseResult } from "../support.js";

const NAME = "onto-minimal";
const OTHER = "chaos-other-manager";

function deploymentRef(namespace: string) {
  return { apiVersion: "apps/v1", kind: "Deployment", namespace, name: "gateway" };
}

/** An apply by another field manager (server-side apply, force: it takes the fields it sets). */
async function otherApply(client: KubeClient, body: KubeObject): Promise<void> {
  const path = await client.objectPath(deploymentRef(body.metadata!.namespace!));
  await client.requestJson("PATCH", path, {
    body,
    contentType: "application/apply-patch+yaml",
    query: { fieldManager: OTHER, force: true },
  });
}

function operatorWrites(slot: OperatorSlot, since: string): number {
  return auditLines(slot.auditLog).filter(
    (l) =>
      l.time >= since && l.object.kind === "Deployment" && l.object.name === "gateway" && l.verb !== "status",
  ).length;
}

interface Outcome {
  name: string;
  otherWrites: number;
  operatorWrites: number;
  outcome: string;
  fight: boolean;
}

export async function fieldManagers(client: KubeClient, opts: { windowMs: number }): Promise<CaseResult> {
  const namespace = await createTestNamespace("chaos-managers");
  const slot = await operatorSlot(client, namespace);
  const outcomes: Outcome[] = [];
  const perMinute = (writes: number): number => Math.round((writes * 60_000) / opts.windowMs);
  try {
    await slot.start();
    await client.apply(loadSample("minimal.yaml", namespace));
    await eventually(
      "the platform to be Running",
      async () =>
        (await readPlatform(client, namespace, NAME)).status?.phase === "Running" ? true : undefined,
      300_000,
      500,
    );
    const base = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "gateway", namespace } };

    // 1. A field the operator owns: replicas (no autoscaling). Three writes, then quiet.
    let since = new Date().toISOString();
    for (const replicas of [5, 4, 5]) {
      await otherApply(client, { ...base, spec: { replicas } } as KubeObject);
      await sleep(opts.windowMs / 6);
    }
    await sleep(opts.windowMs / 2);
    const owned = await client.get<Workload>(deploymentRef(namespace));
    const ownedWrites = operatorWrites(slot, since);
    outcomes.push({
      name: "owned field (spec.replicas)",
      otherWrites: 3,
      operatorWrites: ownedWrites,
      outcome: owned.spec?.replicas === 2 ? "reverted to the spec (2)" : `left at ${owned.spec?.replicas}`,
      fight: ownedWrites > 3 + 1,
    });

    // 2. An item of a list the operator owns: an env var in the gateway container.
    since = new Date().toISOString();
    await otherApply(client, {
      ...base,
      spec: {
        template: {
          spec: { containers: [{ name: "gateway", env: [{ name: "INJECTED_BY_OTHER", value: "1" }] }] },
        },
      },
    } as KubeObject);
    await sleep(opts.windowMs);
    const listWrites = operatorWrites(slot, since);
    const platform = await readPlatform(client, namespace, NAME);
    const reported = (platform.status?.conditions ?? []).find((c) =>
      /INJECTED_BY_OTHER|chaos-other-manager/.test(c.message),
    );
    const live = await client.get<
      KubeObject & { spec: { template: { spec: { containers: { env?: { name: string }[] }[] } } } }
    >(deploymentRef(namespace));
    const stillThere = live.spec.template.spec.containers.some((c) =>
      c.env?.some((e) => e.name === "INJECTED_BY_OTHER"),
    );
    outcomes.push({
      name: "item of an owned list (an env var in the pod template)",
      otherWrites: 1,
      operatorWrites: listWrites,
      outcome: stillThere
        ? reported
          ? `left, reported in ${reported.type}: ${reported.message.slice(0, 120)}`
          : "left, not reported"
        : "taken back",
      fight: listWrites > 2,
    });

    // 3. A field the operator does not own: an annotation of the Deployment.
    since = new Date().toISOString();
    await otherApply(client, {
      ...base,
      metadata: { ...base.metadata, annotations: { "example.com/owner": "team-a" } },
    });
    await sleep(opts.windowMs);
    const unownedWrites = operatorWrites(slot, since);
    const annotated = await client.get(deploymentRef(namespace));
    outcomes.push({
      name: "unowned field (an annotation)",
      otherWrites: 1,
      operatorWrites: unownedWrites,
      outcome: annotated.metadata?.annotations?.["example.com/owner"] === "team-a" ? "left alone" : "removed",
      fight: unownedWrites > 0,
    });
  } finally {
    await slot.kill();
    await slot.revoke().catch(() => undefined);
  }
  for (const o of outcomes)
    console.log(
      `[chaos] another manager, ${o.name}: ${o.otherWrites} writes by ${OTHER}, ${o.operatorWrites} by the operator in ${opts.windowMs / 1000} s (${perMinute(o.operatorWrites)}/min): ${o.outcome}`,
    );
  const fights = outcomes.filter((o) => o.fight);
  return {
    name: "another field manager (owned field, owned list, unowned field)",
    did: outcomes.map((o) => `${o.name}: ${o.otherWrites} foreign write(s)`).join("; "),
    found: outcomes.map((o) => `${o.name}: ${o.operatorWrites} operator write(s), ${o.outcome}`).join("; "),
    figures: Object.fromEntries(
      outcomes.map((o) => [`${o.name} operator writes/min`, perMinute(o.operatorWrites)]),
    ),
    ok: fights.length === 0,
  };
}
