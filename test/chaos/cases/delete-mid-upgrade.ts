// The platform is deleted in the middle of an upgrade (its first canary running): what it owns
// must go (garbage collection through owner references), the operator must not bring anything
// back, the data volumes must stay (retentionPolicy.persistentVolumeClaims: Retain, the default),
// and the operator must keep running. Generated Secrets under retentionPolicy.secrets: Retain are
// reported (kept or not), not judged: that rule has its own test.
import type { KubeClient } from "../../../src/kube/index.js";
import { createTestNamespace, eventually } from "../../support/cluster.js";
import { PLATFORM_REF } from "../../../src/api/index.js";
import { readPlatform } from "../../support/platform.js";
import { auditLines, setVersion, upgradeSample } from "../../cluster/upgrade-support.js";
import { operatorSlot } from "../operator.js";
import { sleep, type CaseResult } from "../support.js";

const NAME = "onto-minimal";
const OWNED = [
  ["apps/v1", "Deployment"],
  ["apps/v1", "StatefulSet"],
  ["v1", "Service"],
  ["v1", "ConfigMap"],
] as const;

export async function deleteMidUpgrade(client: KubeClient): Promise<CaseResult> {
  const namespace = await createTestNamespace("chaos-delete");
  const slot = await operatorSlot(client, namespace);
  let found = "";
  let ok = false;
  const figures: Record<string, string | number> = {};
  try {
    await slot.start();
    await client.apply(upgradeSample("minimal.yaml", namespace, { soakSeconds: 30 }));
    await eventually(
      "the platform to run 1.5.0",
      async () =>
        (await readPlatform(client, namespace, NAME)).status?.version === "1.5.0" ? true : undefined,
      300_000,
      500,
    );
    const pvcsBefore = (await client.list("v1", "PersistentVolumeClaim", { namespace })).items.length;
    await setVersion(client, namespace, NAME, "1.6.0");
    await eventually(
      "an upgrade step in flight (a canary Deployment or a StatefulSet partition)",
      async () => {
        const p = await readPlatform(client, namespace, NAME);
        return p.status?.upgrade?.phase === "InProgress" && p.status.upgrade.step ? true : undefined;
      },
      300_000,
      200,
    );
    const step = (await readPlatform(client, namespace, NAME)).status?.upgrade;
    const deletedAt = new Date().toISOString();
    const started = performance.now();
    await client.delete({ ...PLATFORM_REF, namespace, name: NAME });
    const left = async (): Promise<string[]> => {
      const names: string[] = [];
      for (const [apiVersion, kind] of OWNED)
        for (const o of (await client.list(apiVersion, kind, { namespace })).items)
          if (o.metadata?.ownerReferences?.some((r) => r.kind === "OntoPlatform"))
            names.push(`${kind}/${o.metadata.name}`);
      return names;
    };
    await eventually(
      "the owned objects to be collected",
      async () => ((await left()).length === 0 ? true : undefined),
      180_000,
      500,
    );
    figures["collected in ms"] = Math.round(performance.now() - started);
    const collectedAt = new Date().toISOString();
    // Long enough for several reconciles, had the operator any reason to write.
    await sleep(10_000);
    // Writes between the delete and the collection are the pass that was applying when the delete
    // came (stopped at its next action); counted, not judged. Any write after the collection would
    // bring something back.
    const writes = auditLines(slot.auditLog).filter((l) => l.verb === "create" || l.verb === "update");
    const inFlight = writes.filter((l) => l.time > deletedAt && l.time <= collectedAt);
    const recreated = writes.filter((l) => l.time > collectedAt);
    figures["writes between deletion and collection"] = inFlight.length;
    const remaining = await left();
    const pvcsAfter = (await client.list("v1", "PersistentVolumeClaim", { namespace })).items.length;
    const secrets = (await client.list("v1", "Secret", { namespace })).items.filter(
      (s) => s.metadata?.labels?.["app.kubernetes.io/managed-by"] === "onto-operator",
    ).length;
    const alive = slot.child?.alive() ?? false;
    figures["writes after collection"] = recreated.length;
    figures["PVCs kept"] = `${pvcsAfter}/${pvcsBefore}`;
    figures["generated Secrets kept"] = secrets;
    ok = remaining.length === 0 && recreated.length === 0 && pvcsAfter === pvcsBefore && alive;
    found = ok
      ? `deleted during ${step?.component} ${step?.step}: everything owned collected, nothing recreated, ${pvcsAfter} PVCs kept, operator running; ${secrets} generated Secrets kept`
      : `left ${remaining.join(", ") || "nothing"}; operator writes after collection ${recreated.map((l) => `${l.verb} ${l.object.kind}/${l.object.name}`).join(", ") || "none"}; PVCs ${pvcsAfter}/${pvcsBefore}; operator ${alive ? "running" : "gone"}`;
  } finally {
    await slot.kill();
    await slot.revoke().catch(() => undefined);
  }
  return {
    name: "platform deleted mid-upgrade",
    did: "deleted the OntoPlatform while an upgrade step was in flight",
    found,
    figures,
    ok,
  };
}
