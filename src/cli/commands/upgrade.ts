// `onto upgrade NAME --to VERSION [--force] [--watch]`: sets spec.version (the operator runs the
// ordered, canaried upgrade) and with --watch prints the upgrade's restart plan (the one `onto
// diff` prints: which workloads restart, why, in what order), then shows a progress bar until the
// platform runs VERSION (exit 0) or the upgrade fails (exit 1, with the failure).
import { Command } from "commander";
import { summaryOf } from "./catalog.js";
import { CONDITION, INSTANCE_LABEL, PLATFORM_REF, type OntoPlatform } from "../../api/index.js";
import type { KubeClient } from "../../kube/index.js";
import {
  FORCE_ANNOTATION,
  RETRY_ANNOTATION,
  coveredBy,
  formatPlan,
  isWorkload,
  pathRefusal,
  refusedRollback,
  restartPlan,
  type RestartEntry,
  type WorkloadObject,
} from "../../controllers/index.js";
import { renderForCluster } from "../cluster-render.js";
import { resolveSpec, enabledComponents } from "../../api/index.js";
import { KNOWN_VERSIONS } from "../../release/index.js";
import { clusterCatalog } from "../releases.js";
import {
  EnvironmentError,
  connect,
  getPlatform,
  withConnectionFlags,
  type ConnectionFlags,
} from "../kube.js";
import { paletteFor, type Palette } from "../output.js";
import { progressBar, upgradeTotal } from "../status-view.js";
import { interruptSignal } from "./status.js";

/** The orchestrator's one-change override of spec.upgradeStrategy.force (value "true"). */
export const FORCE_UPGRADE_ANNOTATION = FORCE_ANNOTATION;

export interface UpgradeProgress {
  done: number;
  total: number;
  /** Where the upgrade is: "group/component step", when the operator reports it. */
  current?: string;
  rollingBack: boolean;
  finished: boolean;
  /** The upgrade failed (and was rolled back) or the operator refuses it. */
  failure?: string;
  /** The upgrade failed past a point of no return: not rolled back, it waits for a forward fix. */
  forwardFix?: string;
}

/** The Upgrading condition the orchestrator wrote for the platform's current generation. */
function upgradingCondition(platform: OntoPlatform) {
  return platform.status?.conditions?.find(
    (c) =>
      c.type === CONDITION.Upgrading &&
      (c.observedGeneration === undefined || c.observedGeneration === platform.metadata.generation),
  );
}

/**
 * How far `platform` is on its way to `target`. From status.upgrade when the operator reports
 * an upgrade to `target`; otherwise from the components' versions (components Ready at `target`
 * over the components the version change touches). A refusal (downgrade, skipped minor without
 * force) is a failure: the operator will not start until the spec or an annotation changes.
 */
export function upgradeProgress(platform: OntoPlatform, target: string): UpgradeProgress {
  const status = platform.status ?? {};
  const statuses = status.componentStatuses ?? {};
  const enabled = Object.keys(statuses);
  const finished =
    status.version === target && status.observedGeneration === (platform.metadata.generation ?? 0);
  const condition = upgradingCondition(platform);
  const refused =
    condition?.reason === "UpgradeRefused" ||
    condition?.reason === "UpgradeFailed" ||
    condition?.reason === "RollbackRefused"
      ? `${condition.reason}: ${condition.message}`
      : undefined;
  const upgrade = status.upgrade;
  if (upgrade && upgrade.to === target) {
    const total = upgradeTotal(upgrade, enabled);
    const done = upgrade.completedComponents.filter((c) => total.includes(c)).length;
    const where = [upgrade.group, upgrade.component].filter(Boolean).join("/");
    const failure =
      upgrade.phase === "Failed"
        ? upgrade.failure
          ? `${upgrade.failure.component}: ${upgrade.failure.reason}: ${upgrade.failure.message}`
          : (refused ?? "the upgrade failed")
        : undefined;
    const point = upgrade.pointOfNoReturn;
    const forwardFix =
      upgrade.phase === "ForwardFix"
        ? condition?.reason === "ForwardFixRequired"
          ? condition.message
          : `${upgrade.failure ? `${upgrade.failure.component}: ${upgrade.failure.reason}: ${upgrade.failure.message}; ` : ""}not rolled back: ${point ? `${point.component} ${point.step} of ${point.version} cannot be undone` : "a point of no return was passed"}`
        : undefined;
    return {
      done: finished ? total.length : done,
      total: total.length,
      ...(where ? { current: `${where}${upgrade.step ? ` ${upgrade.step}` : ""}` } : {}),
      rollingBack: upgrade.phase === "RollingBack",
      finished,
      ...(failure ? { failure } : {}),
      ...(forwardFix ? { forwardFix } : {}),
    };
  }
  const from = status.version ?? target;
  const total = upgradeTotal(
    { from, to: target, phase: "InProgress", startedAt: "", completedComponents: [] },
    enabled,
  );
  const done = total.filter((c) => statuses[c]?.version === target && statuses[c]?.phase === "Ready");
  const rolling = total.find((c) => !done.includes(c) && statuses[c]?.phase !== "Ready");
  const blocked = condition?.reason === "UpgradeBlocked" ? condition.message : undefined;
  return {
    done: finished ? total.length : done.length,
    total: total.length,
    ...(blocked
      ? { current: `blocked: ${blocked}` }
      : rolling
        ? { current: `${rolling} ${statuses[rolling]?.phase ?? ""}`.trim() }
        : {}),
    rollingBack: false,
    finished,
    ...(refused &&
    !finished &&
    (condition?.reason === "UpgradeRefused" || condition?.reason === "RollbackRefused")
      ? { failure: refused }
      : {}),
  };
}

export function progressLine(progress: UpgradeProgress, target: string, colors: Palette): string {
  const state = progress.forwardFix
    ? colors.red("forward fix needed")
    : progress.failure
      ? colors.red("failed")
      : progress.finished
        ? colors.green("done")
        : progress.rollingBack
          ? colors.red("rolling back")
          : colors.yellow("upgrading");
  return `${state} to ${target} ${progressBar(progress.done, progress.total)}${
    progress.current && !progress.finished ? `  ${progress.current}` : ""
  }`;
}

/**
 * The restart plan of an upgrade of `platform` to `to`: the objects the operator renders once the
 * upgrade completes, against the live workloads (compared as the reconciler compares them: the
 * fields it sets, the API server's defaults aside).
 */
export async function upgradeRestartPlan(
  client: KubeClient,
  platform: OntoPlatform,
  to: string,
): Promise<RestartEntry[]> {
  const { name, namespace } = platform.metadata;
  const { objects } = await renderForCluster(
    client,
    { ...platform, spec: { ...platform.spec, version: to } },
    platform,
  );
  const live = new Map<string, WorkloadObject>();
  for (const kind of ["Deployment", "StatefulSet"]) {
    const list = await client.list("apps/v1", kind, {
      namespace,
      labelSelector: `${INSTANCE_LABEL}=${name}`,
    });
    for (const item of list.items) live.set(`${kind}/${item.metadata?.name ?? ""}`, item as WorkloadObject);
  }
  return restartPlan({
    desired: objects.filter((o) => isWorkload(o) || o.kind === "PodDisruptionBudget"),
    live: (o) => live.get(`${o.kind}/${o.metadata.name}`),
    same: coveredBy,
  });
}

export interface UpgradeRun {
  client: KubeClient;
  namespace: string;
  name: string;
  to: string;
  force: boolean;
  /** Try a failed upgrade to the same version again (the orchestrator's retry annotation). */
  retry?: boolean;
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
  const releases = await clusterCatalog(run.client);
  if (!releases.find(run.to))
    throw new EnvironmentError(
      `unknown platform version ${run.to}; known: ${releases.versions.join(", ")} (built in, or an accepted OntoRelease)`,
    );
  const platform = await getPlatform(run.client, run.namespace, run.name);
  const from = platform.status?.version ?? platform.spec.version;
  // The orchestrator's own rules, so the CLI refuses exactly what the operator would.
  const undo = refusedRollback(
    releases,
    from,
    run.to,
    platform.status?.upgrade,
    enabledComponents(resolveSpec(platform.spec)),
  );
  if (undo) throw new EnvironmentError(`${undo.message} (the operator refuses it)`);
  const forced = run.force || platform.spec.upgradeStrategy?.force === true;
  const unsafe = from === run.to ? undefined : pathRefusal(releases, from, run.to, forced);
  if (unsafe)
    throw new EnvironmentError(
      unsafe.forceHelps
        ? `${unsafe.message}: the operator refuses it unless forced (--force)`
        : `${unsafe.message}: the upgrade graph of ${run.to} refuses it, even forced`,
    );
  // Planned from the platform as it runs, before the version changes.
  const plan =
    run.watch && from !== run.to ? await upgradeRestartPlan(run.client, platform, run.to) : undefined;

  // A force left from an earlier upgrade would silently force this one too: --force is per upgrade.
  const staleForce = !run.force && platform.metadata.annotations?.[FORCE_UPGRADE_ANNOTATION] !== undefined;
  const annotations: Record<string, string | null> = {
    ...(run.force ? { [FORCE_UPGRADE_ANNOTATION]: "true" } : {}),
    ...(staleForce ? { [FORCE_UPGRADE_ANNOTATION]: null } : {}),
    ...(run.retry ? { [RETRY_ANNOTATION]: new Date().toISOString() } : {}),
  };
  if (platform.spec.version === run.to && Object.keys(annotations).length === 0) {
    out.write(`${run.namespace}/${run.name}: spec.version is already ${run.to}\n`);
  } else {
    await run.client.mergePatch(
      { ...PLATFORM_REF, namespace: run.namespace, name: run.name },
      {
        ...(Object.keys(annotations).length > 0 ? { metadata: { annotations } } : {}),
        spec: { version: run.to },
      },
    );
    const how = [run.force ? "forced" : "", run.retry ? "retry" : ""].filter(Boolean).join(", ");
    out.write(
      `${run.namespace}/${run.name}: spec.version ${platform.spec.version} -> ${run.to}${how ? ` (${how})` : ""}\n`,
    );
  }
  if (!run.watch) return 0;
  if (plan) {
    out.write(
      `${colors.bold(`restart plan of the upgrade to ${run.to}`)} (group by group, each first as a canary):\n`,
    );
    const lines = formatPlan(plan);
    for (const line of lines.length > 0 ? lines : ["no workload restarts"]) out.write(`  ${line}\n`);
  }

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
      if (progress.forwardFix) {
        if (tty) out.write("\n");
        out.write(`${colors.red("upgrade stopped, not rolled back")}: ${progress.forwardFix}\n`);
        return 1;
      }
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
  retry?: boolean;
  watch?: boolean;
  timeout?: number;
}

export function upgradeCommand(): Command {
  const command = new Command("upgrade")
    .description(summaryOf("upgrade"))
    .argument("<name>", "name of the OntoPlatform")
    .requiredOption("--to <version>", `platform version (${KNOWN_VERSIONS.join(", ")})`)
    .option(
      "--force",
      `allow a downgrade, a skipped minor, or a start while Degraded (annotation ${FORCE_UPGRADE_ANNOTATION}=true)`,
    )
    .option("--retry", `try a failed upgrade to the same version again (annotation ${RETRY_ANNOTATION})`)
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
        retry: flags.retry === true,
        watch: flags.watch === true,
        timeoutMs: flags.timeout ? flags.timeout * 1000 : undefined,
        signal: interruptSignal(),
      });
    } finally {
      await client.close();
    }
  });
}
