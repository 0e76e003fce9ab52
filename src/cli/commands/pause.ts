// `onto pause NAME` / `onto resume NAME`: sets spec.paused, which makes the operator change
// nothing on the platform (it still reports status, with Progressing=False reason Paused).
import { Command } from "commander";
import { summaryOf } from "./catalog.js";
import { PLATFORM_REF, type OntoPlatform } from "../../api/index.js";
import type { KubeClient } from "../../kube/index.js";
import { connect, getPlatform, withConnectionFlags, type ConnectionFlags } from "../kube.js";
import { paletteFor } from "../output.js";

/** Merge-patches spec.paused; returns the platform as the API server wrote it. */
export async function setPaused(
  client: KubeClient,
  namespace: string,
  name: string,
  paused: boolean,
): Promise<OntoPlatform> {
  await getPlatform(client, namespace, name);
  return client.mergePatch<OntoPlatform & { apiVersion: string; kind: string }>(
    { ...PLATFORM_REF, namespace, name },
    { spec: { paused } },
  );
}

function pauseLike(verb: "pause" | "resume"): Command {
  const paused = verb === "pause";
  const command = new Command(verb)
    .description(summaryOf(verb))
    .argument("<name>", "name of the OntoPlatform");
  return withConnectionFlags(command).action(async (name: string, flags: ConnectionFlags) => {
    const { client, namespace } = connect(flags);
    const colors = paletteFor(process.stdout);
    try {
      const before = await getPlatform(client, namespace, name);
      if ((before.spec.paused ?? false) === paused) {
        console.log(`${namespace}/${name} is already ${paused ? "paused" : "not paused"}`);
        return;
      }
      await setPaused(client, namespace, name, paused);
      console.log(
        paused
          ? `${colors.yellow("paused")} ${namespace}/${name}: the operator changes nothing until 'onto resume ${name}'`
          : `${colors.green("resumed")} ${namespace}/${name}: the operator reconciles it again`,
      );
    } finally {
      await client.close();
    }
  });
}

export function pauseCommand(): Command {
  return pauseLike("pause");
}

export function resumeCommand(): Command {
  return pauseLike("resume");
}
