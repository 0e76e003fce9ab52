// `npm run bench`: every scenario on the bench's own local cluster, a table of figures, `--json`
// for one JSON object as the last line, `--compare <older.json>` for a side-by-side view that
// exits 1 on a regression. Scenarios are described in bench/README.md.
import { execFileSync } from "node:child_process";
import { CommanderError } from "commander";
import { readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, homedir, loadavg } from "node:os";
import { join } from "node:path";
import { clusterDown, clusterUp } from "../src/localcluster/launcher.js";
import { compareResults, formatComparison, parseResult } from "./lib/compare.js";
import { FigureSet, formatTable, type BenchResult } from "./lib/figures.js";
import { adminClientOf, deleteNamespace, installCrds, startBenchOperator, type BenchEnv } from "./lib/env.js";
import { parseBenchOptions } from "./lib/options.js";
import { cliStart } from "./scenarios/cli.js";
import { ceiling } from "./scenarios/ceiling.js";
import { converge } from "./scenarios/converge.js";
import { repair } from "./scenarios/repair.js";
import { noopAndIdle } from "./scenarios/requests.js";
import { scale } from "./scenarios/scale.js";

const log = (line: string): void => void process.stderr.write(`[bench] ${line}\n`);

function commit(): string {
  try {
    return execFileSync("git", ["rev-parse", "--short=12", "HEAD"], { encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
}

async function main(): Promise<number> {
  const opts = parseBenchOptions(
    process.argv.slice(2),
    join(homedir(), ".cache", "onto-operator", "cluster-bench"),
  );
  const version = (JSON.parse(readFileSync("package.json", "utf8")) as { version: string }).version;
  const figs = new FigureSet();
  const notes: string[] = [];
  const startLoad = loadavg()[0] ?? 0;
  const startedAt = new Date().toISOString();
  log(`load average ${startLoad.toFixed(1)} on ${availableParallelism()} cores; cluster in ${opts.stateDir}`);
  const cluster = await clusterUp({
    stateDir: opts.stateDir,
    workers: opts.workers,
    realNodes: 0,
    progress: log,
  });
  const admin = adminClientOf(cluster);
  await installCrds(admin);
  // Namespaces an interrupted earlier run left behind would add to every figure.
  const leftovers = await admin.list("v1", "Namespace", { labelSelector: "onto.paas/bench=true" });
  await Promise.all(leftovers.items.map((n) => deleteNamespace(admin, n.metadata?.name ?? "")));
  const { operator, requests, logDir } = await startBenchOperator(cluster.kubeconfigPath);
  log(`operator logs in ${logDir}`);
  const env: BenchEnv = {
    cluster,
    admin,
    operator,
    requests,
    quick: opts.quick,
    idleSeconds: opts.idleSeconds ?? (opts.quick ? 30 : 120),
    log,
  };
  const want = new Set(opts.scenarios);
  try {
    let kept = "";
    let writesPerSecond = Number.NaN;
    if (want.has("converge") || want.has("noop") || want.has("repair") || want.has("ceiling")) {
      const out = await converge(env, figs);
      kept = out.keptNamespace;
      writesPerSecond = out.operatorWritesPerSecond;
    }
    if (want.has("noop")) await noopAndIdle(env, figs, kept);
    if (want.has("repair")) await repair(env, figs, kept);
    if (want.has("ceiling")) await ceiling(env, figs, writesPerSecond);
    if (want.has("cli")) await cliStart(env, figs);
    if (want.has("scale")) for (const n of opts.platforms) await scale(env, figs, n);
    notes.push("upgrade overhead (healthy -> next step p50/p99) is not measured yet");
    notes.push("peakRss and cpu are of the bench process, which runs the operator in-process");
  } finally {
    await operator.stop();
    await admin.close();
    if (!opts.keepCluster && cluster.started) await clusterDown({ stateDir: opts.stateDir });
  }
  const result: BenchResult = {
    version,
    commit: commit(),
    cores: availableParallelism(),
    load: { start: startLoad, end: loadavg()[0] ?? 0 },
    quick: opts.quick,
    startedAt,
    scenarios: opts.scenarios,
    figures: figs.figures,
    notes,
  };
  console.log(formatTable(result.figures));
  console.log(
    `load average ${result.load.start.toFixed(1)} -> ${result.load.end.toFixed(1)} on ${result.cores} cores, commit ${result.commit}`,
  );
  for (const n of notes) console.log(`note: ${n}`);
  if (opts.output) writeFileSync(opts.output, `${JSON.stringify(result, null, 2)}\n`);
  let code = 0;
  if (opts.compare) {
    const rows = compareResults(parseResult(readFileSync(opts.compare, "utf8")), result, opts.tolerance);
    console.log(formatComparison(rows, opts.tolerance));
    if (rows.some((r) => r.regressed)) code = 1;
  }
  if (opts.json) console.log(JSON.stringify(result));
  return code;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    // --help, --version and bad options: commander has printed what to say.
    if (err instanceof CommanderError) process.exit(err.exitCode);
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(2);
  },
);
