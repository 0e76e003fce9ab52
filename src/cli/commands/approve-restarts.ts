// `onto approve-restarts NAME [--revoke]`: the opt-in of disruption control as a command. It sets
// the platform's onto.paas/approve-restarts annotation to "true" (--revoke removes it), after
// printing what waits (status.disruption.waiting), so the user sees what the approval lets go.
// While it is set, nothing waits for a maintenance window or an operator-side change; the
// operator's fleet limit still applies.
import { Command } from "commander";
import { summaryOf } from "./catalog.js";
import { PLATFORM_REF, type OntoPlatform } from "../../api/index.js";
import { APPROVE_RESTARTS_ANNOTATION } from "../../controllers/index.js";
import type { KubeClient } from "../../kube/index.js";
import { connect, getPlatform, withConnectionFlags, type ConnectionFlags } from "../kube.js";
import { paletteFor, type Palette } from "../output.js";
import { disruptionLines } from "../status-view.js";

/** Whether the platform's held restarts are approved now. */
export const restartsApproved = (platform: OntoPlatform): boolean =>
  platform.metadata.annotations?.[APPROVE_RESTARTS_ANNOTATION] === "true";

/** Sets (or with `approve` false removes) the annotation; returns the platform as written. */
export async function setRestartsApproved(
  client: KubeClient,
  namespace: string,
  name: string,
  approve: boolean,
): Promise<OntoPlatform> {
  return client.mergePatch<OntoPlatform & { apiVersion: string; kind: string }>(
    { ...PLATFORM_REF, namespace, name },
    { metadata: { annotations: { [APPROVE_RESTARTS_ANNOTATION]: approve ? "true" : null } } },
  );
}

/** What waits, as `onto status` shows it, or a line saying nothing does. */
export function waitingLines(platform: OntoPlatform, now: Date, colors: Palette): string[] {
  const waiting = platform.status?.disruption?.waiting ?? [];
  const lines = disruptionLines(platform.status?.disruption, now, colors);
  return waiting.length > 0 ? lines : ["  no pod restart waits now", ...lines];
}

interface ApproveFlags extends ConnectionFlags {
  revoke?: boolean;
}

export function approveRestartsCommand(): Command {
  const command = new Command("approve-restarts")
    .description(summaryOf("approve-restarts"))
    .argument("<name>", "name of the OntoPlatform")
    .option(
      "--revoke",
      `remove the approval (annotation ${APPROVE_RESTARTS_ANNOTATION}): restarts wait again`,
    );
  return withConnectionFlags(command).action(async (name: string, flags: ApproveFlags) => {
    const { client, namespace } = connect(flags);
    const colors = paletteFor(process.stdout);
    const approve = flags.revoke !== true;
    const id = `${namespace}/${name}`;
    try {
      const platform = await getPlatform(client, namespace, name);
      console.log(`${colors.bold(`${id}: what waits`)}`);
      for (const line of waitingLines(platform, new Date(), colors)) console.log(line);
      if (restartsApproved(platform) === approve) {
        console.log(`${id}: restarts are already ${approve ? "approved" : "not approved"}`);
        return;
      }
      await setRestartsApproved(client, namespace, name, approve);
      console.log(
        approve
          ? `${colors.yellow("approved")} ${id}: held restarts go ahead now, outside any window (the operator's fleet limit still applies); 'onto approve-restarts ${name} --revoke' makes them wait again`
          : `${colors.green("revoked")} ${id}: restarts wait again for a maintenance window (and operator-side changes for an approval)`,
      );
    } finally {
      await client.close();
    }
  });
}
