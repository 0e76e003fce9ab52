// `onto switchover NAME [--to postgres-N]`: asks the operator for a planned change of Postgres
// primary (the onto.paas/switchover-* annotations) and waits for its answer in
// status.postgres.switchover. What the status already shows is checked here first, so a request
// that cannot succeed (no such member, not streaming, already the primary) is refused at once
// with the reason; the operator checks again against what the members answer now.
import { summaryOf } from "./catalog.js";
import { Command } from "commander";
import {
  PLATFORM_REF,
  POSTGRES_ROLES,
  SWITCHOVER_REQUESTED_AT_ANNOTATION,
  SWITCHOVER_TO_ANNOTATION,
  type OntoPlatform,
  type PostgresStatus,
} from "../../api/index.js";
import type { KubeClient } from "../../kube/index.js";
import { connect, getPlatform, withConnectionFlags, type ConnectionFlags } from "../kube.js";
import { paletteFor } from "../output.js";

/** Why a switchover to `to` cannot be asked for, from status.postgres; undefined when it can. */
export function switchoverRefusal(
  state: PostgresStatus | undefined,
  to: string | undefined,
): string | undefined {
  const members = state?.members ?? [];
  if (!state || members.length === 0)
    return "the operator has not reported the Postgres members yet (status.postgres)";
  if (!state.currentPrimary) return "no Postgres member answers as the primary yet";
  if (members.length < 2) return "Postgres runs one member: there is no standby to switch over to";
  if (to === undefined) {
    return members.some((m) => m.role === POSTGRES_ROLES.standby)
      ? undefined
      : "no standby is streaming from the primary";
  }
  const member = members.find((m) => m.name === to);
  const names = members.map((m) => m.name).join(", ");
  if (!member) return `${to} is not a Postgres member (members: ${names})`;
  if (to === state.currentPrimary) return `${to} is already the primary`;
  if (member.role !== POSTGRES_ROLES.standby)
    return `${to} is not streaming from the primary within the lag limit (role ${member.role})`;
  return undefined;
}

/** Annotates the platform with a switchover request; resolves to the request's time stamp. */
export async function requestSwitchover(
  client: KubeClient,
  namespace: string,
  name: string,
  to: string | undefined,
  now: Date = new Date(),
): Promise<string> {
  const platform = await getPlatform(client, namespace, name);
  const refusal = switchoverRefusal(platform.status?.postgres, to);
  if (refusal) throw new SwitchoverRefused(refusal);
  const requestedAt = now.toISOString();
  await client.mergePatch<OntoPlatform & { apiVersion: string; kind: string }>(
    { ...PLATFORM_REF, namespace, name },
    {
      metadata: {
        annotations: {
          [SWITCHOVER_TO_ANNOTATION]: to ?? null,
          [SWITCHOVER_REQUESTED_AT_ANNOTATION]: requestedAt,
        },
      },
    },
  );
  return requestedAt;
}

export class SwitchoverRefused extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "SwitchoverRefused";
  }
}

/** Waits for the operator's answer to the request made at `requestedAt`. */
export async function awaitSwitchover(
  client: KubeClient,
  namespace: string,
  name: string,
  requestedAt: string,
  timeoutMs: number,
): Promise<NonNullable<PostgresStatus["switchover"]>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = (await getPlatform(client, namespace, name)).status?.postgres?.switchover;
    if (answer?.requestedAt === requestedAt && answer.outcome !== "InProgress") return answer;
    if (Date.now() > deadline)
      throw new Error(
        `no answer from the operator within ${timeoutMs / 1000}s (${answer?.message ?? "not seen yet"})`,
      );
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export function switchoverCommand(): Command {
  const command = new Command("switchover")
    .description(summaryOf("switchover"))
    .argument("<name>", "name of the OntoPlatform")
    .option("--to <pod>", "the standby to promote, e.g. postgres-1")
    .option("--timeout <seconds>", "how long to wait for the operator's answer", "60");
  return withConnectionFlags(command).action(
    async (name: string, flags: ConnectionFlags & { to?: string; timeout: string }) => {
      const { client, namespace } = connect(flags);
      const colors = paletteFor(process.stdout);
      try {
        const requestedAt = await requestSwitchover(client, namespace, name, flags.to);
        const answer = await awaitSwitchover(
          client,
          namespace,
          name,
          requestedAt,
          Number(flags.timeout) * 1000,
        );
        if (answer.outcome === "Done")
          console.log(`${colors.green("switched over")} ${namespace}/${name}: ${answer.message}`);
        else {
          console.error(`${colors.red("refused")} ${namespace}/${name}: ${answer.message}`);
          process.exitCode = 1;
        }
      } catch (err) {
        if (!(err instanceof SwitchoverRefused)) throw err;
        console.error(`${colors.red("refused")} ${namespace}/${name}: ${err.message}`);
        process.exitCode = 1;
      } finally {
        await client.close();
      }
    },
  );
}
