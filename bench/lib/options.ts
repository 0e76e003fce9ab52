// The bench's command line, parsed with commander: which scenarios, how big, and the output and
// comparison modes.
import { Command, InvalidArgumentError, Option } from "commander";
import { DEFAULT_TOLERANCE } from "./compare.js";

export const SCENARIOS = ["converge", "noop", "repair", "ceiling", "cli", "scale"] as const;
export type Scenario = (typeof SCENARIOS)[number];

export interface BenchOptions {
  quick: boolean;
  json: boolean;
  compare?: string;
  tolerance: number;
  scenarios: Scenario[];
  platforms: number[];
  stateDir: string;
  workers: number;
  keepCluster: boolean;
  output?: string;
  /** The idle window of the noop scenario, seconds (default 30 with --quick, else 120). */
  idleSeconds?: number;
}

function positiveInts(value: string): number[] {
  const list = value.split(",").map((v) => Number(v.trim()));
  if (list.some((n) => !Number.isInteger(n) || n <= 0))
    throw new InvalidArgumentError(`expected positive integers separated by commas, got "${value}"`);
  return list;
}

function scenarioList(value: string): Scenario[] {
  const list = value.split(",").map((v) => v.trim());
  const unknown = list.filter((s) => !(SCENARIOS as readonly string[]).includes(s));
  if (unknown.length > 0)
    throw new InvalidArgumentError(`unknown scenario ${unknown.join(", ")} (known: ${SCENARIOS.join(", ")})`);
  return list as Scenario[];
}

function fraction(value: string): number {
  const n = Number(value);
  if (!(n > 0 && n < 10))
    throw new InvalidArgumentError(`expected a relative tolerance such as 0.3, got "${value}"`);
  return n;
}

export function parseBenchOptions(argv: string[], defaultStateDir: string): BenchOptions {
  const cmd = new Command("bench")
    .description("Measure the operator against kubectl and Helm on a local cluster of its own")
    .option("--quick", "a small version of every scenario (a few minutes)", false)
    .option("--json", "print one JSON object with every figure as the last line", false)
    .option(
      "--compare <older.json>",
      "compare with an older result; exit 1 on a regression beyond the tolerance",
    )
    .addOption(
      new Option("--tolerance <fraction>", "relative worsening that counts as a regression")
        .argParser(fraction)
        .default(DEFAULT_TOLERANCE),
    )
    .addOption(
      new Option("--scenarios <list>", `scenarios to run (${SCENARIOS.join(",")})`).argParser(scenarioList),
    )
    .addOption(
      new Option("--platforms <list>", "platform counts of the scale scenario (e.g. 100,250,500)").argParser(
        positiveInts,
      ),
    )
    .option("--state-dir <dir>", "the bench cluster's state folder", defaultStateDir)
    .addOption(
      new Option(
        "--workers <n>",
        "simulated worker nodes (scale runs need about one per 5 platforms)",
      ).argParser((v) => positiveInts(v)[0] ?? 0),
    )
    .option("--keep-cluster", "leave the cluster running afterwards", false)
    .addOption(
      new Option(
        "--idle-seconds <n>",
        "idle window of the noop scenario (default 30 quick, else 120)",
      ).argParser((v) => positiveInts(v)[0] ?? 0),
    )
    .option("-o, --output <file>", "also write the JSON result to this file")
    .exitOverride();
  cmd.parse(argv, { from: "user" });
  const o = cmd.opts<{
    quick: boolean;
    json: boolean;
    compare?: string;
    tolerance: number;
    scenarios?: Scenario[];
    platforms?: number[];
    stateDir: string;
    workers?: number;
    keepCluster: boolean;
    output?: string;
    idleSeconds?: number;
  }>();
  const platforms = o.platforms ?? (o.quick ? [10] : [100, 250, 500]);
  return {
    quick: o.quick,
    json: o.json,
    ...(o.compare !== undefined ? { compare: o.compare } : {}),
    ...(o.output !== undefined ? { output: o.output } : {}),
    ...(o.idleSeconds !== undefined ? { idleSeconds: o.idleSeconds } : {}),
    tolerance: o.tolerance,
    scenarios: o.scenarios ?? [...SCENARIOS],
    platforms,
    stateDir: o.stateDir,
    workers: o.workers ?? Math.max(6, Math.ceil(Math.max(...platforms) / 5)),
    keepCluster: o.keepCluster,
  };
}
