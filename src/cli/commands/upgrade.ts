// `onto upgrade NAME --to VERSION [--force] [--watch]`: sets spec.version (the operator runs the
// ordered, canaried upgrade) and with --watch shows a progress bar until the platform runs
// VERSION (exit 0) or the upgrade fails (exit 1, with the failure).
import { Command } from "commander";
import type { OntoPlatform } from "../../api/index.js";
import type { KubeClient } from "../../kube/index.js";
import { KNOWN_VERSIONS, isDowngrade, releaseFor, skipsMinor } from "../../release/index.js";
import {
  EnvironmentError,
  PLATFORM_REF,
  connect,
  getPlatform,
  withConnectionFlags,
  type ConnectionFlags,
} from "../kube.js";
import { paletteFor, type Palette } from "../output.js";
import { progressBar, upgradeTotal } from "../status-view.js";
import { interruptSignal } from "./status.js";

/**
 * Annotation that lets one upgrade take a path the release catalog calls unsafe (downgrade,
 * skipped minor), like spec.upgradeStrategy.force but for this change only. No constant for it
 * existed in src/controllers when this was written; the upgrade orchestrator is to honour it.
 */
export const FORCE_UPGRADE_ANNOTATION = "onto.paas/force-upgrade";

export interface UpgradeProgress {
  done: number;
  total: number;
  /** Where the upgrade is: "group/component step", when the operator reports it. */
  current?: string;
  finished: boolean;
  failure?: string;
}

/**
 * How far `platform` is on its way to `target`. From status.upgrade when the operator reports
 * an upgrade to `target`; otherwise from the components' versions (components Ready at `target`
 * over the components the version change touches).
 */
export function upgradeProgress(platform: OntoPlatform, target: string): UpgradeProgress {
  const status = platform.status ?? {};
  const statuses = status.componentStatuses ?? {};
  const enabled = Object.keys(statuses);
  const finished =
    status.version === target && status.observedGeneration === (platform.metadata.generation ?? 0);
  const upgrade = status.upgrade;
  if (upgrade && upgrade.to === target) {
    const total = upgradeTotal(upgrade, enabled);
    const done = upgrade.completedComponents.filter((c) => total.includes(c)).length;
    const where = [upgrade.group, upgrade.component].filter(Boolean).join("/");
    const failure =
      upgrade.phase === "Failed"
        ? upgrade.failure
          ? `${upgrade.failure.component}: ${upgrade.failure.reason}: ${upgrade.failure.message}`
          : "the upgrade failed"
        : undefined;
    return {
      done: finished ? total.length : done,
      total: total.length,
      ...(where ? { current: `${where}${upgrade.step ? ` ${upgrade.step}` : ""}` } : {}),
      finished,
      ...(failure ? { failure } : {}),
    };
  }
  const from = status.version ?? target;
  const total = upgradeTotal(
    { from, to: target, phase: "InProgress", startedAt: "", completedComponents: [] },
    enabled,
  );
  const done = total.filter((c) => statuses[c]?.version === target && statuses[c]?.phase === "Ready");
  const rolling = total.find((c) => !done.includes(c) && statuses[c]?.phase !== "Ready");
  const failed = status.conditions?.find((c) => c.reason === "UpgradeFailed" && c.status === "True");
  return {
    done: finished ? total.length : done.length,
    total: total.length,
    ...(rolling ? { current: `${rolling} ${statuses[rolling]?.phase ?? ""}`.trim() } : {}),
    finished,
    ...(failed ? { failure: failed.message } : {}),
  };
}

export function progressLine(progress: UpgradeProgress, target: string, colors: Palette): string {
  const state = progress.failure
    ? colors.red("failed")
    : progress.finished
      ? colors.green("done")
      : colors.yellow("upgrading");
  return `${state} to ${target} ${progressBar(progress.done, progress.total)}${
    progress.current && !progress.finished ? `  ${progress.current}` : ""
  }`;
}

export interface UpgradeRun {
  client: KubeClient;
  namespace: string;
  name: string;
  to: string;
  force: boolean;
  watch: boolean;
  timeoutMs?: number | undefined;
  intervalMs?: number;
  out?: NodeJS.WriteStream;
  signal?: AbortSignal;
}

/** Checks the target, patches spec.version, optionally watches; resolves with the exit code. */
export async function runUpgrade(run: UpgradeRun): Promise<number> {
  const out = run.out ?? process.stdout;
  const colors = paletteFor(out);
  try {
    releaseFor(run.to);
  } catch {
    throw new EnvironmentError(`unknown platform version ${run.to}; known: ${KNOWN_VERSIONS.join(", ")}`);
  }
  const platform = await getPlatform(run.client, run.namespace, run.name);
  const from = platform.status?.version ?? platform.spec.version;
  const unsafe = isDowngrade(from, run.to)
    ? `${from} -> ${run.to} is a downgrade`
    : skipsMinor(from, run.to)
      ? `${from} -> ${run.to} skips a minor version`
      : undefined;
  if (unsafe && !run.force && !platform.spec.upgradeStrategy?.force)
    throw new EnvironmentError(`${unsafe}; the operator refuses it unless forced (--force)`);

  if (platform.spec.version === run.to && !run.force) {
    out.write(`${run.namespace}/${run.name}: spec.version is already ${run.to}\n`);
  } else {
    await run.client.mergePatch(
      { ...PLATFORM_REF, namespace: run.namespace, name: run.name },
      {
        ...(run.force ? { metadata: { annotations: { [FORCE_UPGRADE_ANNOTATION]: "true" } } } : {}),
        spec: { version: run.to },
      },
    );
    out.write(
      `${run.namespace}/${run.name}: spec.version ${platform.spec.version} -> ${run.to}${run.force ? " (forced)" : ""}\n`,
    );
  }
  if (!run.watch) return 0;

  const tty = out.isTTY === true;
  const deadline = run.timeoutMs ? Date.now() + run.timeoutMs : Infinity;
  let lastLine = "";
  for (;;) {
    if (run.signal?.aborted) {
      if (tty) out.write("\n");
      return 130;
    }
    const live = await run.client
      .get<OntoPlatform & { apiVersion: string; kind: string }>({
        ...PLATFORM_REF,
        namespace: run.namespace,
        name: run.name,
      })
      .catch(() => undefined);
    if (live) {
      if (live.spec.version !== run.to) {
        if (tty) out.write("\n");
        out.write(
          `${colors.red("stopped")}: spec.version is now ${live.spec.version} (changed by someone else)\n`,
        );
        return 1;
      }
      const progress = upgradeProgress(live, run.to);
      const line = progressLine(progress, run.to, colors);
      if (tty) out.write(`\r\x1b[2K${line}`);
      else if (line !== lastLine) out.write(`${line}\n`);
      lastLine = line;
      if (progress.failure) {
        if (tty) out.write("\n");
        out.write(`${colors.red("upgrade failed")}: ${progress.failure}\n`);
        return 1;
      }
      if (progress.finished) {
        if (tty) out.write("\n");
        out.write(`${colors.green("upgraded")} ${run.namespace}/${run.name} to ${run.to}\n`);
        return 0;
      }
    }
    if (Date.now() > deadline) {
      if (tty) out.write("\n");
      out.write(`${colors.red("timed out")} waiting for ${run.to}\n`);
      return 1;
    }
    await new Promise((resolve) => setTimeout(resolve, run.intervalMs ?? 1000));
  }
}

interface UpgradeFlags extends ConnectionFlags {
  to: string;
  force?: boolean;
  watch?: boolean;
  timeout?: number;
}

export function upgradeCommand(): Command {
  const command = new Command("upgrade")
    .description("Start an upgrade: set spec.version; --watch shows progress until done or failed")
    .argument("<name>", "name of the OntoPlatform")
    .requiredOption("--to <version>", `platform version (${KNOWN_VERSIONS.join(", ")})`)
    .option("--force", `allow a downgrade or a skipped minor (annotation ${FORCE_UPGRADE_ANNOTATION})`)
    .option("-w, --watch", "show progress until the platform runs the version (0) or the upgrade fails (1)")
    .option("--timeout <seconds>", "with --watch: give up (exit 1) after this long", (v) => {
      const n = Number(v);
      if (!Number.isFinite(n) || n <= 0) throw new Error(`--timeout: not a positive number of seconds: ${v}`);
      return n;
    });
  return withConnectionFlags(command).action(async (name: string, flags: UpgradeFlags) => {
    const { client, namespace } = connect(flags);
    try {
      process.exitCode = await runUpgrade({
        client,
        namespace,
        name,
        to: flags.to,
        force: flags.force === true,
        watch: flags.watch === true,
        timeoutMs: flags.timeout ? flags.timeout * 1000 : undefined,
        signal: interruptSignal(),
      });
    } finally {
      await client.close();
    }
  });
}
