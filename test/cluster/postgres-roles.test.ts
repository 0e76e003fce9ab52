// Postgres roles as state on simulated pods (KWOK runs no Postgres, so no member answers SQL):
// the operator records the members in status.postgres, labels every pod with its role, the
// Services select by role, no primary is named (nor failed over from) until a member answers as
// one, a pod template change replaces the members one at a time (in ordinal order, no role being
// known), a due failover with no standby answering is held back with the reason, and a switchover
// that cannot succeed is refused with the reason, by `onto switchover` from the status and by the
// operator from what the members answer. Failover itself
// is proven with the real program on the real node (test/real/postgres-ha.test.ts).
import { describe, expect, it } from "vitest";
import {
  PLATFORM_REF,
  POSTGRES_ROLE_LABEL,
  SWITCHOVER_REQUESTED_AT_ANNOTATION,
  SWITCHOVER_TO_ANNOTATION,
} from "../../src/api/index.js";
import { requestSwitchover } from "../../src/cli/commands/switchover.js";
import { ROLLING_UPDATE_REASON } from "../../src/controllers/postgres-ha/index.js";
import type { KubeObject } from "../../src/kube/index.js";
import { eventually } from "../support/cluster.js";
import { useOperator } from "../support/operator.js";
import { loadSample, readPlatform } from "../support/platform.js";

const NAME = "onto-minimal";
const { client, ns } = useOperator({
  namespaces: ["pg-roles"],
  platform: (namespace) => {
    const p = loadSample("minimal.yaml", namespace);
    p.spec.infrastructure = { ...p.spec.infrastructure, postgres: { replicas: 3, failoverDelaySeconds: 2 } };
    return p;
  },
});

type Labelled = KubeObject & { metadata: { labels?: Record<string, string> } };

describe("Postgres roles on simulated pods", () => {
  it("records the members in status.postgres and labels every pod; the Services select by role", async () => {
    const state = await eventually(
      "status.postgres with three members",
      async () => {
        const s = (await readPlatform(client, ns, NAME)).status?.postgres;
        return s?.members?.length === 3 ? s : undefined;
      },
      60_000,
    );
    // No member has answered as the primary: none is named (a new or re-created platform waits
    // for its members to decide among themselves).
    expect(state.currentPrimary).toBeUndefined();
    expect(state.members?.map((m) => `${m.name}=${m.role}`)).toEqual([
      "postgres-0=unknown",
      "postgres-1=unknown",
      "postgres-2=unknown",
    ]);
    await eventually(
      "every Postgres pod labelled",
      async () => {
        const { items: pods } = await client.list<Labelled>("v1", "Pod", {
          namespace: ns,
          labelSelector: "app.kubernetes.io/name=postgres",
        });
        return pods.length === 3 && pods.every((p) => p.metadata.labels?.[POSTGRES_ROLE_LABEL] === "unknown")
          ? true
          : undefined;
      },
      60_000,
    );
    const rw = await client.get<KubeObject & { spec: { selector: Record<string, string> } }>({
      apiVersion: "v1",
      kind: "Service",
      namespace: ns,
      name: "postgres",
    });
    expect(rw.spec.selector[POSTGRES_ROLE_LABEL]).toBe("primary");
    const ro = await client.get<KubeObject & { spec: { selector: Record<string, string> } }>({
      apiVersion: "v1",
      kind: "Service",
      namespace: ns,
      name: "postgres-ro",
    });
    expect(ro.spec.selector[POSTGRES_ROLE_LABEL]).toBe("standby");
  });

  it("fails over from no one while no member has answered as the primary, and refuses a switchover then", async () => {
    await expect(requestSwitchover(client, ns, NAME, "postgres-1")).rejects.toThrow(
      "no Postgres member answers as the primary yet",
    );
    const state = (await readPlatform(client, ns, NAME)).status?.postgres;
    expect(state?.failoverWithheld).toBeUndefined();
    expect(state?.targetPrimary).toBeUndefined();
  });

  it("replaces the members itself (OnDelete), one at a time in ordinal order while no member has answered", async () => {
    type Pod = Labelled & {
      metadata: { uid?: string; deletionTimestamp?: string };
      status?: { conditions?: { type: string; status: string }[] };
    };
    const sts = await client.get<KubeObject & { spec: { updateStrategy: unknown } }>({
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      namespace: ns,
      name: "postgres",
    });
    expect(sts.spec.updateStrategy).toEqual({ type: "OnDelete" });
    const members = async () =>
      (
        await client.list<Pod>("v1", "Pod", {
          namespace: ns,
          labelSelector: "app.kubernetes.io/name=postgres",
        })
      ).items;
    const before = new Map((await members()).map((p) => [p.metadata.name ?? "", p.metadata.uid]));
    expect(before.size).toBe(3);
    const ready = (p: Pod) =>
      !p.metadata.deletionTimestamp &&
      p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
    // A pod template change of the user's: the members' resources.
    await client.mergePatch(
      { ...PLATFORM_REF, namespace: ns, name: NAME },
      {
        spec: { infrastructure: { postgres: { resources: { requests: { cpu: "120m", memory: "256Mi" } } } } },
      },
    );
    const replaced: string[] = [];
    let mostAway = 0;
    await eventually(
      "every member replaced",
      async () => {
        const pods = await members();
        const byName = new Map(
          pods.filter((p) => !p.metadata.deletionTimestamp).map((p) => [p.metadata.name, p]),
        );
        const away = ["postgres-0", "postgres-1", "postgres-2"].filter((n) => {
          const p = byName.get(n);
          return !p || !ready(p);
        });
        mostAway = Math.max(mostAway, away.length);
        for (const [name, uid] of before) {
          const now = byName.get(name)?.metadata.uid;
          if (now !== undefined && now !== uid && !replaced.includes(name)) replaced.push(name);
        }
        return replaced.length === 3 && away.length === 0 ? true : undefined;
      },
      120_000,
      100,
    );
    // Never two members down at once; the StatefulSet's own order while no role is known.
    expect(mostAway).toBeLessThanOrEqual(1);
    expect(replaced).toEqual(["postgres-2", "postgres-1", "postgres-0"]);
    const { items: events } = await client.list<KubeObject & { reason?: string; message?: string }>(
      "v1",
      "Event",
      { namespace: ns },
    );
    const rolled = events.filter((e) => e.reason === ROLLING_UPDATE_REASON).map((e) => e.message ?? "");
    for (const name of ["postgres-0", "postgres-1", "postgres-2"])
      expect(rolled.some((m) => m.includes(`${name} replaced`))).toBe(true);
  });

  it("holds a failover back when the recorded primary does not answer and no standby does, and says so", async () => {
    // A primary recorded in status (as after it once answered) that stops answering. Written
    // again while missing: a pass of the operator that read the status before may write over it.
    const ref = { ...PLATFORM_REF, namespace: ns, name: NAME };
    const withheld = await eventually(
      "status.postgres.failoverWithheld",
      async () => {
        const state = (await readPlatform(client, ns, NAME)).status?.postgres;
        if (!state?.currentPrimary)
          await client.patchStatus(ref, {
            postgres: { currentPrimary: "postgres-0", targetPrimary: "postgres-0" },
          });
        return state?.failoverWithheld;
      },
      60_000,
    );
    expect(withheld).toBe("the primary postgres-0 is lost (PrimaryNotAnswering) and no standby answers");
    expect((await readPlatform(client, ns, NAME)).status?.postgres?.currentPrimary).toBe("postgres-0");
  });

  it("refuses a switchover that cannot succeed, with the reason", async () => {
    await expect(requestSwitchover(client, ns, NAME, "postgres-7")).rejects.toThrow(
      "postgres-7 is not a Postgres member (members: postgres-0, postgres-1, postgres-2)",
    );
    await expect(requestSwitchover(client, ns, NAME, "postgres-1")).rejects.toThrow(
      "postgres-1 is not streaming from the primary within the lag limit (role unknown)",
    );
    // Asked for behind the command's back: the operator refuses from what the members answer.
    const requestedAt = new Date().toISOString();
    await client.mergePatch(
      { ...PLATFORM_REF, namespace: ns, name: NAME },
      {
        metadata: {
          annotations: {
            [SWITCHOVER_TO_ANNOTATION]: "postgres-1",
            [SWITCHOVER_REQUESTED_AT_ANNOTATION]: requestedAt,
          },
        },
      },
    );
    const answer = await eventually(
      "the operator's answer",
      async () => {
        const s = (await readPlatform(client, ns, NAME)).status?.postgres?.switchover;
        return s?.requestedAt === requestedAt ? s : undefined;
      },
      60_000,
    );
    expect(answer).toMatchObject({
      outcome: "Refused",
      message:
        "the primary postgres-0 is not healthy (PrimaryNotAnswering): a switchover needs a running primary",
    });
  });
});
