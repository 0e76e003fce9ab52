// Re-creating a StatefulSet keeping its pods, against the real API server, controller-manager
// (StatefulSet controller, garbage collector) and KWOK nodes: a change of an immutable field (the
// claim template's storage) re-creates the StatefulSet with orphan propagation, and the new one
// adopts the same pods (uids unchanged) and the same ControllerRevision; the claims are the same
// objects (same uids; volume-growth.ts grows their requested size in the same pass). An operator
// stopped after the delete and before the create (the state a SIGKILL leaves) creates it on its
// next pass, again without touching a pod. The test prints what it measured.
import { describe, expect, it } from "vitest";
import { PLATFORM_REF } from "../../src/api/index.js";
import type { KubeObject } from "../../src/kube/index.js";
import { auditLines } from "../support/audit.js";
import { eventually } from "../support/cluster.js";
import { useOperator } from "../support/operator.js";
import { loadSample } from "../support/platform.js";

const NAME = "onto-minimal";
const COMPONENT = "redis";
const fx = useOperator({
  namespaces: ["recreate"],
  waitMs: 300_000,
  platform: (namespace) => loadSample("minimal.yaml", namespace),
});
const { client, ns } = fx;
const stsRef = () => ({ apiVersion: "apps/v1", kind: "StatefulSet", namespace: ns, name: COMPONENT });
const selector = () => `app.kubernetes.io/name=${COMPONENT},app.kubernetes.io/instance=${NAME}`;

type Owned = KubeObject & {
  metadata: { uid?: string; ownerReferences?: { uid: string; controller?: boolean }[] };
};
type Sts = Owned & {
  spec: { volumeClaimTemplates?: { spec: { resources: { requests: { storage: string } } } }[] };
  status?: { currentRevision?: string; updateRevision?: string; readyReplicas?: number };
};
type Claim = Owned & { spec: { resources: { requests: { storage: string } } } };

interface Snapshot {
  sts: Sts;
  pods: Record<string, string>;
  /** ControllerRevision name -> uid. */
  revisions: Record<string, string>;
  /** PVC name -> uid and requested size. */
  claims: Record<string, { uid: string; storage: string }>;
  /** Owner uid of every pod and ControllerRevision. */
  owners: string[];
}

async function snapshot(): Promise<Snapshot> {
  const sts = await client.get<Sts>(stsRef());
  const pods = (await client.list<Owned>("v1", "Pod", { namespace: ns, labelSelector: selector() })).items;
  const revisions = (
    await client.list<Owned>("apps/v1", "ControllerRevision", { namespace: ns, labelSelector: selector() })
  ).items;
  const claims = (await client.list<Claim>("v1", "PersistentVolumeClaim", { namespace: ns })).items.filter(
    (c) => c.metadata.name?.includes(`-${COMPONENT}-`),
  );
  const controller = (o: Owned) => o.metadata.ownerReferences?.find((r) => r.controller)?.uid ?? "none";
  return {
    sts,
    pods: Object.fromEntries(pods.map((p) => [p.metadata.name ?? "", p.metadata.uid ?? ""])),
    revisions: Object.fromEntries(revisions.map((r) => [r.metadata.name ?? "", r.metadata.uid ?? ""])),
    claims: Object.fromEntries(
      claims.map((c) => [
        c.metadata.name ?? "",
        { uid: c.metadata.uid ?? "", storage: c.spec.resources.requests.storage },
      ]),
    ),
    owners: [...pods, ...revisions].map(controller),
  };
}

const claimStorage = (sts: Sts) => sts.spec.volumeClaimTemplates?.[0]?.spec.resources.requests.storage;

/** The StatefulSet once it is a new object (another uid) that owns every pod and revision again. */
async function adopted(oldUid: string | undefined, label: string): Promise<Snapshot> {
  return eventually(
    label,
    async () => {
      const now = await snapshot().catch(() => undefined);
      if (!now || now.sts.metadata.uid === oldUid) return undefined;
      return now.owners.every((o) => o === now.sts.metadata.uid) ? now : undefined;
    },
    120_000,
  );
}

describe("a StatefulSet re-created keeping its pods", () => {
  it("an immutable field changes: orphan delete, create, same pods, revisions and claims", async () => {
    const before = await snapshot();
    console.log(
      `before: sts ${before.sts.metadata.uid}, pods ${JSON.stringify(before.pods)}, claims ${JSON.stringify(before.claims)}`,
    );
    expect(Object.keys(before.pods).length).toBeGreaterThan(0);
    const size = claimStorage(before.sts) ?? "";
    const bigger = `${Number.parseInt(size, 10) + 1}${size.replace(/^\d+/, "")}`;
    const started = Date.now();
    await client.mergePatch(
      { ...PLATFORM_REF, namespace: ns, name: NAME },
      { spec: { infrastructure: { [COMPONENT]: { storage: bigger } } } },
    );
    const after = await adopted(before.sts.metadata.uid, "redis re-created and owning its pods");
    const took = Date.now() - started;
    console.log(
      `after ${took} ms: sts ${after.sts.metadata.uid} (claim template ${size} -> ${claimStorage(after.sts)}), pods ${JSON.stringify(after.pods)}, revisions ${JSON.stringify(after.revisions)}, claims ${JSON.stringify(after.claims)}`,
    );
    expect(claimStorage(after.sts)).toBe(bigger);
    expect(after.pods).toEqual(before.pods);
    expect(after.revisions).toEqual(before.revisions);
    for (const [name, claim] of Object.entries(before.claims))
      expect(after.claims[name]?.uid).toBe(claim.uid);
    const settled = await eventually("revisions settle", async () => {
      const s = await client.get<Sts>(stsRef());
      return s.status?.currentRevision && s.status.currentRevision === s.status.updateRevision
        ? s
        : undefined;
    });
    expect(Object.keys(before.revisions)).toContain(settled.status?.currentRevision);
    const lines = auditLines(fx.operator.auditLog).filter(
      (l) => l.reason === "Recreated" && l.object.name === COMPONENT,
    );
    console.log(`audit: ${JSON.stringify(lines.map((l) => l.message))}`);
    expect(lines[0]?.message).toContain("spec.volumeClaimTemplates");
    const events = (
      await client.list<KubeObject & { reason?: string; note?: string }>("events.k8s.io/v1", "Event", {
        namespace: ns,
      })
    ).items.filter((e) => e.reason === "Recreated");
    expect(events.length).toBeGreaterThan(0);
    // Nothing left over from the dry-run check.
    expect(await client.getIfExists({ ...stsRef(), name: `${COMPONENT}-recreate-check` })).toBeUndefined();
  });

  it("an operator stopped between the delete and the create creates it on its next pass", async () => {
    const before = await snapshot();
    const started = { t: 0 };
    await fx.restartOperator(async () => {
      // The state a SIGKILL after the orphan delete leaves: no StatefulSet, the pods and claims running.
      await client.delete(stsRef(), { propagationPolicy: "Orphan" });
      await eventually("redis gone", async () => ((await client.getIfExists(stsRef())) ? undefined : true));
      started.t = Date.now();
    });
    const after = await adopted(before.sts.metadata.uid, "redis created again by the restarted operator");
    console.log(
      `created again ${Date.now() - started.t} ms after the operator started: pods ${JSON.stringify(after.pods)}`,
    );
    expect(after.pods).toEqual(before.pods);
    expect(after.revisions).toEqual(before.revisions);
    for (const [name, claim] of Object.entries(before.claims))
      expect(after.claims[name]?.uid).toBe(claim.uid);
  });
});
