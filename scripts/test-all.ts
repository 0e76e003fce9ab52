// `npm test`'s runner. One vitest process runs every project one file at a time per project, and
// vitest puts all single-worker projects into one sequential queue, so the KWOK suites and the
// real-node suite would wait on each other although they use different nodes. This runner starts
// the shared test cluster once, then runs three vitest processes side by side on it:
//   - the KWOK suite (`cluster`), one file at a time;
//   - the real-node suite (`real`), the real programs on loopback (`programs`) and `unit`, which
//     together take about as long (one CI run: cluster 1532 s; real + programs + autoscaling +
//     unit 1769 s);
//   - the files that mostly wait (`autoscaling` on the HPA controller's and the VPA recommender's
//     periods, `cluster-waits` on a node's grace period and upgrade soaks: about 10 minutes of
//     little CPU), so that they do not lengthen either of the other two;
//   - once the KWOK suite and the waits are done, `real-two-nodes` on a cluster of its own with two
//     real nodes (a second control plane, two containerds and kubelets: started beside the busy
//     KWOK suite, its load got the real-node suite's pods killed by their own probes);
// and after all three, the files that disturb everyone on the cluster (`cluster-alone`: an API-server
// restart, timing-sensitive leader failover), by themselves. It prints each run's output (the
// others' when they end, not interleaved), then the failed tests of all runs and one total
// line, and stops the cluster unless ONTO_KEEP_CLUSTER=1.
//
// Arguments are handed to a single `vitest run` unchanged (`npm test -- test/cluster/smoke.test.ts`).
import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync } from "node:fs";
import { join } from "node:path";
import { clusterDown, clusterUp } from "../src/localcluster/launcher.js";
import { testRealNodes, testStateDir, twoNodesStateDir } from "../test/support/state-dir.js";
import { ERROR_PREFIX, FAILED_PREFIX } from "../test/support/summary-reporter.js";

interface Run {
  name: string;
  projects: string[];
  /** Print the output as it comes (one run at a time may), or keep it until the run ends. */
  live: boolean;
}

interface Outcome {
  name: string;
  code: number;
  output: string;
  seconds: number;
}

const VITEST = join("node_modules", ".bin", "vitest");
const SUMMARY = /^tests: (\d+) passed, (\d+) failed, (\d+) skipped$/m;

function vitest(args: string[], env: NodeJS.ProcessEnv, live: boolean, log: string): Promise<Outcome> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(VITEST, ["run", ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    const file = createWriteStream(log);
    const chunks: Buffer[] = [];
    const take = (chunk: Buffer): void => {
      chunks.push(chunk);
      file.write(chunk);
      if (live) process.stdout.write(chunk);
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.on("close", (code, signal) => {
      file.end();
      resolve({
        name: args.join(" "),
        code: code ?? (signal ? 1 : 0),
        output: Buffer.concat(chunks).toString("utf8"),
        seconds: (Date.now() - started) / 1000,
      });
    });
  });
}

async function runAll(): Promise<number> {
  const stateDir = testStateDir();
  const logs = join(stateDir, "test-logs");
  mkdirSync(logs, { recursive: true });
  const started = Date.now();
  await clusterUp({
    stateDir,
    realNodes: testRealNodes(),
    progress: (line) => console.log(`[cluster] ${line}`),
  });
  // The children reuse the running cluster and leave it running; this runner stops it.
  const env = { ...process.env, ONTO_KEEP_CLUSTER: "1" };
  const start = (run: Run): Promise<Outcome> =>
    vitest(
      run.projects.flatMap((p) => ["--project", p]),
      env,
      run.live,
      join(logs, `${run.name}.log`),
    ).then((o) => ({ ...o, name: run.name }));

  const outcomes: Outcome[] = [];
  try {
    const real = start({ name: "real-programs-unit", projects: ["real", "programs", "unit"], live: false });
    const waits = start({ name: "waits", projects: ["autoscaling", "cluster-waits"], live: false });
    outcomes.push(await start({ name: "kwok", projects: ["cluster"], live: true }));
    // The KWOK suite ends a few minutes before the real-node suite: the two-real-node cluster
    // starts then, beside only the real-node suite's last files.
    const waitsDone = await waits;
    const twoNodes = start({ name: "two-nodes", projects: ["real-two-nodes"], live: false });
    for (const done of [await real, waitsDone, await twoNodes]) {
      console.log(`\n======== ${done.name} (ran beside the run above) ========\n${done.output}`);
      outcomes.push(done);
    }
    console.log(
      "\n======== cluster-alone (files that disturb the whole cluster, run by themselves) ========",
    );
    outcomes.push(await start({ name: "cluster-alone", projects: ["cluster-alone"], live: true }));
  } finally {
    if (process.env.ONTO_KEEP_CLUSTER !== "1") {
      await clusterDown({ stateDir });
      await clusterDown({ stateDir: twoNodesStateDir() });
    }
  }

  let passed = 0;
  let failed = 0;
  let skipped = 0;
  console.log("\n======== all runs ========");
  for (const o of outcomes) {
    const m = SUMMARY.exec(o.output);
    if (m) {
      passed += Number(m[1]);
      failed += Number(m[2]);
      skipped += Number(m[3]);
    } else if (o.code !== 0) failed++; // a run that ended before its summary (a crash) counts as a failure
    console.log(
      `${o.name}: exit ${o.code} in ${o.seconds.toFixed(0)} s${m ? `, ${m[0]}` : ", no summary line"}`,
    );
    // Each failure line and the lines of its error that follow it (summary-reporter.ts).
    let inFailure = false;
    for (const line of o.output.split("\n")) {
      if (line.startsWith(FAILED_PREFIX)) inFailure = true;
      else if (!line.startsWith(ERROR_PREFIX)) inFailure = false;
      if (inFailure) console.log(`  ${line}`);
    }
  }
  console.log(`logs: ${logs}`);
  console.log(`all runs in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
  return outcomes.every((o) => o.code === 0) && failed === 0 ? 0 : 1;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args.length === 0) return runAll();
  const child = spawn(VITEST, ["run", ...args], { stdio: "inherit" });
  return new Promise((resolve) => child.on("close", (code) => resolve(code ?? 1)));
}

process.exitCode = await main();
