// `onto demo` (`npm run demo`): the local cluster, the CRD, the operator as a background process,
// the production sample, and its status live until Running; then what to try next. Idempotent:
// a second run reuses the cluster, the operator and the platform as they are.
import { readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { Command, Option } from "commander";
import { parse } from "yaml";
import { PLATFORM_REF, type OntoPlatform } from "../../api/index.js";
import { pathRefusal } from "../../controllers/index.js";
import { KubeClient, loadKubeConfig, type KubeObject } from "../../kube/index.js";
import { clusterUp } from "../../localcluster/launcher.js";
import { ensureOperatorProcess } from "../../localcluster/operator-process.js";
import { defaultStateDir } from "../../localcluster/versions.js";
import { KNOWN_VERSIONS, PRODUCT_CATALOG } from "../../release/index.js";
import { paletteFor } from "../output.js";
import { interruptSignal, runStatus } from "./status.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const CRD_FILE = join(ROOT, "deploy", "crds", "onto.paas_ontoplatforms.yaml");
const SAMPLE_FILE = join(ROOT, "samples", "production.yaml");
const DEMO_FIELD_MANAGER = "onto-demo";

type Crd = KubeObject & { status?: { conditions?: { type: string; status: string }[] } };

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function installCrd(client: KubeClient): Promise<void> {
  const crd = parse(readFileSync(CRD_FILE, "utf8")) as Crd;
  await client.apply(crd, { force: true });
  const ref = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    name: crd.metadata?.name ?? "",
  };
  for (let i = 0; i < 120; i++) {
    const live = await client.get<Crd>(ref);
    if (live.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")) {
      client.discovery.invalidate();
      return;
    }
    await sleep(250);
  }
  throw new Error(`the CRD ${ref.name} did not become Established`);
}

/** The next version the catalog can upgrade `running` to without force (1.5.0 -> 1.6.0). */
export function nextVersion(running: string): string {
  const later = KNOWN_VERSIONS.filter(
    (v) => v !== running && !pathRefusal(PRODUCT_CATALOG, running, v, false),
  );
  return later[0] ?? KNOWN_VERSIONS.at(-1) ?? running;
}

interface DemoFlags {
  stateDir: string;
  timeout: number;
}

export async function runDemo(flags: DemoFlags): Promise<number> {
  const started = Date.now();
  const err = paletteFor(process.stderr);
  const step = (line: string): void => {
    process.stderr.write(
      `${err.dim(`[${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s]`)} ${line}\n`,
    );
  };

  const info = await clusterUp({ stateDir: flags.stateDir, progress: step });
  const kubeconfig = info.kubeconfigPath;
  const client = new KubeClient(loadKubeConfig({ path: kubeconfig }), {
    fieldManager: DEMO_FIELD_MANAGER,
    userAgent: "onto-demo",
  });
  try {
    step(`installing the OntoPlatform CRD (${relative(process.cwd(), CRD_FILE) || CRD_FILE})`);
    await installCrd(client);

    const operator = await ensureOperatorProcess({ stateDir: flags.stateDir, kubeconfig });
    step(
      `${operator.started ? "started" : "reusing"} the operator (pid ${operator.record.pid}); log ${operator.logFile}, audit ${operator.auditLog}`,
    );

    const sample = parse(readFileSync(SAMPLE_FILE, "utf8")) as OntoPlatform & KubeObject;
    const { name, namespace } = sample.metadata;
    await client.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
    // The sample's TLS Secret (onto-tls) is not created here: the operator issues it from the
    // platform's own CA.
    const existing = await client.getIfExists({ ...PLATFORM_REF, namespace, name });
    if (existing) {
      step(`OntoPlatform ${namespace}/${name} exists: leaving it as it is`);
    } else {
      await client.apply(sample, { force: true });
      step(
        `applied ${relative(process.cwd(), SAMPLE_FILE) || SAMPLE_FILE}: OntoPlatform ${namespace}/${name}`,
      );
    }

    const watchStarted = Date.now();
    const code = await runStatus({
      client,
      namespace,
      name,
      output: "text",
      watch: true,
      until: "Running",
      timeoutMs: flags.timeout * 1000,
      signal: interruptSignal(),
    });
    if (code !== 0) {
      process.stderr.write(`the operator's log: ${operator.logFile}\n`);
      return code;
    }
    const out = paletteFor(process.stdout);
    const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
    console.log(
      existing
        ? `\n${out.green(`${namespace}/${name} is Running`)} (found as it was, ${seconds(Date.now() - started)})\n`
        : `\n${out.green(`${namespace}/${name} is Running`)}: ${seconds(Date.now() - started)} in all, ${seconds(Date.now() - watchStarted)} from apply to Running\n`,
    );
    const running = (
      await client.getIfExists<OntoPlatform & KubeObject>({ ...PLATFORM_REF, namespace, name })
    )?.status?.version;
    const target = nextVersion(running ?? sample.spec.version);
    console.log("Next, try:");
    console.log(`  kubectl --kubeconfig ${kubeconfig} get onto -A`);
    console.log(`  node bin/onto.js status ${name} -n ${namespace} --kubeconfig ${kubeconfig}`);
    console.log(
      `  KUBECONFIG=${kubeconfig} node bin/onto.js upgrade ${name} -n ${namespace} --to ${target} --watch`,
    );
    console.log(
      `      (several minutes: component by component, each first as a canary that must stay Ready for ${sample.spec.upgradeStrategy?.soakSeconds ?? 30} s)`,
    );
    const stateFlag = flags.stateDir === defaultStateDir() ? "" : ` --state-dir ${flags.stateDir}`;
    console.log(`  node bin/onto.js cluster down${stateFlag}     # stops the cluster and the operator`);
    return 0;
  } finally {
    await client.close();
  }
}

export function demoCommand(): Command {
  return new Command("demo")
    .description(
      "Local cluster + operator + the production sample, with its status live until Running (npm run demo)",
    )
    .addOption(
      new Option("--state-dir <dir>", "folder of the local cluster")
        .env("ONTO_CLUSTER_DIR")
        .default(defaultStateDir()),
    )
    .option("--timeout <seconds>", "how long to wait for Running", (v) => Number.parseInt(v, 10), 600)
    .action(async (flags: DemoFlags) => {
      process.exitCode = await runDemo(flags);
    });
}
