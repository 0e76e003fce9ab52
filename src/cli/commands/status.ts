// `onto status NAME [-n NS] [--watch] [--until PHASE] [-o text|json|yaml]`: the platform as a tree
// (planes, components, ready/desired), the upgrade in flight, conditions and recent Events.
// --watch polls once a second: on a terminal it redraws in place, on a pipe it prints a new
// snapshot only when something changed. --until PHASE stops with 0 when the platform reaches
// PHASE for its current generation, with 1 when it fails (phase Error, upgrade Failed).
import { Command, Option } from "commander";
import { summaryOf } from "./catalog.js";
import type { OntoPlatform, PlatformPhase } from "../../api/index.js";
import { CONDITION, PLATFORM_PHASES, REASON } from "../../api/index.js";
import type { KubeClient, KubeObject } from "../../kube/index.js";
import { connect, getPlatform, withConnectionFlags, type ConnectionFlags } from "../kube.js";
import { outputOption, paletteFor, structured, type OutputFormat, type Palette } from "../output.js";
import { formatStatus, type EventView, type StatusSnapshot } from "../status-view.js";

const EVENTS = { apiVersion: "events.k8s.io/v1", kind: "Event" } as const;
const CLEAR_SCREEN = "\x1b[H\x1b[2J";

/** The platform and the Events regarding it (this incarnation: same uid). */
export async function fetchSnapshot(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<StatusSnapshot> {
  const platform = await getPlatform(client, namespace, name);
  const events = await client
    .list<KubeObject & EventView & { regarding?: { uid?: string } }>(EVENTS.apiVersion, EVENTS.kind, {
      namespace,
      fieldSelector: `regarding.kind=OntoPlatform,regarding.name=${name}`,
    })
    .then((list) => list.items.filter((e) => !e.regarding?.uid || e.regarding.uid === platform.metadata.uid))
    // Events are a courtesy: a user who may read the platform but not Events still gets the tree.
    .catch(() => []);
  return { platform, events };
}

/** What -o json|yaml prints: the platform (without managedFields) and its recent Events. */
export function statusDocument(snapshot: StatusSnapshot): unknown {
  const { managedFields: _managedFields, ...metadata } = snapshot.platform
    .metadata as OntoPlatform["metadata"] & {
    managedFields?: unknown;
  };
  return {
    platform: { ...snapshot.platform, metadata },
    events: snapshot.events.map((e) => ({
      type: e.type,
      reason: e.reason,
      action: e.action,
      note: e.note,
      time: e.series?.lastObservedTime ?? e.eventTime ?? e.metadata?.creationTimestamp,
      count: e.series?.count ?? 1,
    })),
  };
}

/** Why a watch --until stops: reached (0) or failed (1); undefined: keep watching. */
export function untilOutcome(
  platform: OntoPlatform,
  until: PlatformPhase,
): { code: 0 | 1; message: string } | undefined {
  const status = platform.status ?? {};
  const current = status.observedGeneration === (platform.metadata.generation ?? 0);
  if (!current) return undefined;
  const upgrade = status.upgrade;
  if (upgrade?.phase === "Failed" && upgrade.to === platform.spec.version) {
    const f = upgrade.failure;
    return {
      code: 1,
      message: `upgrade ${upgrade.from} -> ${upgrade.to} failed${f ? ` at ${f.component}: ${f.reason}: ${f.message}` : ""}`,
    };
  }
  const failedCondition = status.conditions?.find(
    (c) =>
      c.type === CONDITION.Upgrading &&
      c.reason === REASON.UpgradeFailed &&
      (c.observedGeneration === undefined || c.observedGeneration === platform.metadata.generation),
  );
  if (failedCondition) return { code: 1, message: `UpgradeFailed: ${failedCondition.message}` };
  if (status.phase === until) return { code: 0, message: `phase ${until}` };
  if (status.phase === "Error") {
    const degraded = status.conditions?.find((c) => c.type === CONDITION.Degraded && c.status === "True");
    return {
      code: 1,
      message: `phase Error${degraded ? `: ${degraded.reason}: ${degraded.message}` : ""}`,
    };
  }
  return undefined;
}

export interface StatusRun {
  client: KubeClient;
  namespace: string;
  name: string;
  output: OutputFormat;
  watch: boolean;
  until?: PlatformPhase | undefined;
  timeoutMs?: number | undefined;
  intervalMs?: number;
  out?: NodeJS.WriteStream;
  colors?: Palette;
  /** Stops the watch early (tests, Ctrl-C). */
  signal?: AbortSignal;
}

/** Prints the status once, or watches it; resolves with the exit code. */
export async function runStatus(run: StatusRun): Promise<number> {
  const out = run.out ?? process.stdout;
  const colors = run.colors ?? paletteFor(out);
  const redraw = run.watch && out.isTTY === true && run.output === "text";
  const render = (snapshot: StatusSnapshot): string =>
    run.output === "text"
      ? formatStatus(snapshot, { now: new Date(), colors })
      : run.output === "json"
        ? // Watching: one JSON document per line (JSON Lines), so a reader can split them.
          run.watch || run.until
          ? `${JSON.stringify(statusDocument(snapshot))}\n`
          : structured(statusDocument(snapshot), "json")
        : `---\n${structured(statusDocument(snapshot), "yaml")}`;

  if (!run.watch && !run.until) {
    out.write(render(await fetchSnapshot(run.client, run.namespace, run.name)));
    return 0;
  }

  const deadline = run.timeoutMs ? Date.now() + run.timeoutMs : Infinity;
  let lastKey = "";
  let lastError = "";
  for (;;) {
    if (run.signal?.aborted) return run.until ? 130 : 0;
    let snapshot: StatusSnapshot | undefined;
    try {
      snapshot = await fetchSnapshot(run.client, run.namespace, run.name);
      lastError = "";
    } catch (err) {
      // A watch outlives a restarting API server; it reports the error once and keeps trying.
      const message = err instanceof Error ? err.message : String(err);
      if (message !== lastError) process.stderr.write(`${colors.yellow("retrying")}: ${message}\n`);
      lastError = message;
    }
    if (snapshot) {
      const key = changeKey(snapshot);
      if (redraw) out.write(CLEAR_SCREEN + render(snapshot));
      else if (key !== lastKey) out.write((lastKey && run.output === "text" ? "\n" : "") + render(snapshot));
      lastKey = key;
      const outcome = run.until ? untilOutcome(snapshot.platform, run.until) : undefined;
      if (outcome) {
        const say = outcome.code === 0 ? colors.green("reached") : colors.red("failed");
        process.stderr.write(`${say}: ${run.namespace}/${run.name} ${outcome.message}\n`);
        return outcome.code;
      }
    }
    if (Date.now() > deadline) {
      process.stderr.write(
        `${colors.red("timed out")} after ${(run.timeoutMs ?? 0) / 1000} s waiting for phase ${run.until ?? "?"}\n`,
      );
      return 1;
    }
    await sleep(run.intervalMs ?? 1000, run.signal);
  }
}

/** Changes worth a new snapshot on a pipe: the status, the spec's generation, the Events seen. */
function changeKey(snapshot: StatusSnapshot): string {
  const { platform, events } = snapshot;
  return JSON.stringify([
    platform.metadata.generation,
    platform.spec.paused,
    platform.status,
    events.map((e) => [e.reason, e.note, e.series?.count]),
  ]);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** An AbortSignal that fires on Ctrl-C (and SIGTERM), so a watch ends cleanly. */
export function interruptSignal(): AbortSignal {
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return controller.signal;
}

interface StatusFlags extends ConnectionFlags {
  output: OutputFormat;
  watch?: boolean;
  until?: PlatformPhase;
  timeout?: number;
}

export function statusCommand(): Command {
  const command = new Command("status")
    .description(summaryOf("status"))
    .argument("<name>", "name of the OntoPlatform")
    .addOption(outputOption())
    .option("-w, --watch", "keep refreshing until Ctrl-C (a new snapshot on change when not a terminal)")
    .addOption(
      new Option(
        "--until <phase>",
        "watch until this phase (exit 0), or until the platform fails (phase Error, upgrade Failed: exit 1)",
      ).choices(PLATFORM_PHASES),
    )
    .option("--timeout <seconds>", "with --until: give up (exit 1) after this long", (v) => {
      const n = Number(v);
      if (!Number.isFinite(n) || n <= 0) throw new Error(`--timeout: not a positive number of seconds: ${v}`);
      return n;
    });
  return withConnectionFlags(command).action(async (name: string, flags: StatusFlags) => {
    const { client, namespace } = connect(flags);
    try {
      process.exitCode = await runStatus({
        client,
        namespace,
        name,
        output: flags.output,
        watch: flags.watch === true,
        until: flags.until,
        timeoutMs: flags.timeout ? flags.timeout * 1000 : undefined,
        signal: interruptSignal(),
      });
    } finally {
      await client.close();
    }
  });
}
