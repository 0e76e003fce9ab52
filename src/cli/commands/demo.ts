// `onto demo` (`npm run demo`): the local cluster, the CRD, the operator as a background process,
// the production sample, and its status live until Running; then what to try next. Idempotent:
// a second run reuses the cluster, the operator and the platform as they are.
// `onto demo --real` (`npm run demo -- --real`): the same with a real node, the images built here
// loaded into it, the test releases applied, local volumes, and samples/real.yaml (Postgres,
// Redis, MinIO and two platform services running for real).
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { Command, Option } from "commander";
import { summaryOf } from "./catalog.js";
import { parse, parseAllDocuments } from "yaml";
import {
  PLATFORM_REF,
  resolveSpec,
  validateOntoRelease,
  type OntoPlatform,
  type OntoRelease,
} from "../../api/index.js";
import { pathRefusal } from "../../controllers/index.js";
import { KubeClient, loadKubeConfig, type KubeObject } from "../../kube/index.js";
import { clusterUp } from "../../localcluster/launcher.js";
import { ensureImages, TEST_RELEASE_IMAGES } from "../../localcluster/images/index.js";
import { claimsOfRendered, ensureLocalVolumes } from "../../localcluster/local-volumes.js";
import { REAL_NODE_SELECTOR } from "../../localcluster/node-kind.js";
import { catalogFrom, BUILT_IN_RELEASES } from "../../release/index.js";
import { renderPlatform } from "../../render/index.js";
import { ensureOperatorProcess } from "../../localcluster/operator-process.js";
import { defaultStateDir } from "../../localcluster/versions.js";
import { KNOWN_VERSIONS, PRODUCT_CATALOG } from "../../release/index.js";
import { paletteFor } from "../output.js";
import { interruptSignal, runStatus } from "./status.js";
import { PACKAGE_ROOT } from "../../localcluster/package-root.js";

const ROOT = PACKAGE_ROOT;
const CRD_FILES = [
  join(ROOT, "deploy", "crds", "onto.paas_ontoplatforms.yaml"),
  join(ROOT, "deploy", "crds", "onto.paas_ontoreleases.yaml"),
];
const SAMPLE_FILE = join(ROOT, "samples", "production.yaml");
const REAL_SAMPLE_FILE = join(ROOT, "samples", "real.yaml");
const LOCAL_RELEASES_FILE = join(ROOT, "samples", "releases", "local.yaml");
const DEMO_FIELD_MANAGER = "onto-demo";

type Crd = KubeObject & { status?: { conditions?: { type: string; status: string }[] } };

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function installCrd(client: KubeClient, file: string): Promise<void> {
  const crd = parse(readFileSync(file, "utf8")) as Crd;
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
  real?: boolean;
}

/** The test releases (OntoRelease objects naming the images built here), applied like a user's. */
function localReleases(): OntoRelease[] {
  return parseAllDocuments(readFileSync(LOCAL_RELEASES_FILE, "utf8"))
    .map((d) => d.toJS() as unknown)
    .filter((d) => d !== null)
    .map((doc, i) => {
      const issues = validateOntoRelease(doc);
      if (issues.length > 0)
        throw new Error(
          `${LOCAL_RELEASES_FILE} document ${i + 1}: ${issues.map((x) => x.message).join("; ")}`,
        );
      return doc as OntoRelease;
    });
}

/**
 * What the real-node sample needs before it is applied: its images in the real node, the test
 * releases, and a local volume for each claim of its StatefulSets.
 */
async function prepareReal(
  client: KubeClient,
  stateDir: string,
  realNode: string,
  sample: OntoPlatform & KubeObject,
  step: (line: string) => void,
): Promise<void> {
  step(
    `building (first time only) and loading the images into ${realNode}: ${TEST_RELEASE_IMAGES.join(", ")}`,
  );
  await ensureImages(TEST_RELEASE_IMAGES, { stateDir, progress: step });
  const releases = localReleases();
  for (const release of releases) await client.apply(release, { force: true });
  step(
    `applied the test releases ${releases.map((r) => r.spec.version).join(", ")} (${relative(process.cwd(), LOCAL_RELEASES_FILE)})`,
  );
  const { catalog } = catalogFrom(BUILT_IN_RELEASES, releases);
  const spec = resolveSpec(sample.spec);
  const { name, namespace } = sample.metadata;
  const objects = renderPlatform({
    platform: { name, namespace, uid: "00000000-0000-0000-0000-000000000000" },
    spec,
    release: catalog.releaseFor(spec.version),
    releaseOf: (v) => catalog.releaseFor(v),
    capabilities: { serviceMonitor: false, verticalPodAutoscaler: false },
    generateSecret: ({ length }) => "x".repeat(length),
  });
  const claims = claimsOfRendered(objects, namespace, REAL_NODE_SELECTOR, realNode);
  await ensureLocalVolumes(client, stateDir, claims);
  step(
    `${claims.length} local volumes for the sample's claims (${claims.filter((c) => c.realNode).length} on ${realNode})`,
  );
}

export async function runDemo(flags: DemoFlags): Promise<number> {
  const started = Date.now();
  const err = paletteFor(process.stderr);
  const step = (line: string): void => {
    process.stderr.write(
      `${err.dim(`[${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s]`)} ${line}\n`,
    );
  };

  const info = await clusterUp({
    stateDir: flags.stateDir,
    progress: step,
    ...(flags.real ? { realNodes: 1 } : {}),
  });
  const sampleFile = flags.real ? REAL_SAMPLE_FILE : SAMPLE_FILE;
  const kubeconfig = info.kubeconfigPath;
  const client = new KubeClient(loadKubeConfig({ path: kubeconfig }), {
    fieldManager: DEMO_FIELD_MANAGER,
    userAgent: "onto-demo",
  });
  try {
    step("installing the OntoPlatform and OntoRelease CRDs (deploy/crds)");
    for (const file of CRD_FILES) await installCrd(client, file);

    const operator = await ensureOperatorProcess({ stateDir: flags.stateDir, kubeconfig });
    step(
      `${operator.started ? "started" : "reusing"} the operator (pid ${operator.record.pid}); log ${operator.logFile}, audit ${operator.auditLog}`,
    );

    const sample = parse(readFileSync(sampleFile, "utf8")) as OntoPlatform & KubeObject;
    const { name, namespace } = sample.metadata;
    await client.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
    if (flags.real) {
      const realNode = info.realNodes[0];
      if (!realNode) throw new Error(`the cluster in ${flags.stateDir} has no real node`);
      await prepareReal(client, flags.stateDir, realNode, sample, step);
    }
    // The sample's TLS Secret (onto-tls) is not created here: the operator issues it from the
    // platform's own CA.
    const existing = await client.getIfExists({ ...PLATFORM_REF, namespace, name });
    if (existing) {
      step(`OntoPlatform ${namespace}/${name} exists: leaving it as it is`);
    } else {
      await client.apply(sample, { force: true });
      step(`applied ${relative(process.cwd(), sampleFile) || sampleFile}: OntoPlatform ${namespace}/${name}`);
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
    // The real-node sample upgrades to the second test release (every real member rolls).
    const target = flags.real
      ? (localReleases().find((r) => r.spec.version !== (running ?? sample.spec.version))?.spec.version ??
        sample.spec.version)
      : nextVersion(running ?? sample.spec.version);
    console.log("Next, try:");
    console.log(`  kubectl --kubeconfig ${kubeconfig} get onto -A`);
    if (flags.real) console.log(`  kubectl --kubeconfig ${kubeconfig} get pods -o wide -n ${namespace}`);
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
    .description(summaryOf("demo"))
    .addOption(
      new Option("--state-dir <dir>", "folder of the local cluster")
        .env("ONTO_CLUSTER_DIR")
        .default(defaultStateDir()),
    )
    .option("--timeout <seconds>", "how long to wait for Running", (v) => Number.parseInt(v, 10), 600)
    .option(
      "--real",
      "a real node, the images built here, the test releases and samples/real.yaml (Postgres, Redis, MinIO running for real)",
    )
    .action(async (flags: DemoFlags) => {
      process.exitCode = await runDemo(flags);
    });
}
