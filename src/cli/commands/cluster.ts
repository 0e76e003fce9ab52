// `onto cluster up|down|status|kubeconfig`: the embedded local control plane for demos and
// tests (real Kubernetes built from Go modules, nodes simulated by KWOK, and real nodes running
// the kubelet, containerd and kube-proxy).
import { Command, Option } from "commander";
import { summaryOf } from "./catalog.js";
import pc from "picocolors";
import { ensureBinaries, ensureNodeBinaries } from "../../localcluster/build.js";
import { ensureHelm } from "../../localcluster/helm.js";
import { buildImage, ensureImages, RECIPES, type ImageName } from "../../localcluster/images/index.js";
import { clusterDown, clusterStatus, clusterUp, realNodeRuntimes } from "../../localcluster/launcher.js";
import { ensureCertManager, ensureCertManagerCrds } from "../../localcluster/cert-manager.js";
import { ensureMonitoringBinaries, ensureMonitoringCrds } from "../../localcluster/monitoring-build.js";
import { defaultStateDir } from "../../localcluster/versions.js";

function stateDirOption(): Option {
  return new Option("--state-dir <dir>", "folder holding the cluster's data, logs and credentials")
    .env("ONTO_CLUSTER_DIR")
    .default(defaultStateDir());
}

interface StateOpts {
  stateDir: string;
}

export function clusterCommand(): Command {
  const cluster = new Command("cluster").description(summaryOf("cluster"));

  cluster
    .command("up")
    .description("build (first time only) and start the local cluster; reuses it when already running")
    .addOption(stateDirOption())
    .option(
      "--workers <n>",
      "general-purpose simulated nodes, spread over 3 zones",
      (v) => Number.parseInt(v, 10),
      6,
    )
    .option(
      "--gpu-nodes <n>",
      "simulated GPU nodes (nvidia.com/gpu capacity and taint)",
      (v) => Number.parseInt(v, 10),
      2,
    )
    .option(
      "--real-nodes <n>",
      "real nodes (kubelet, containerd, kube-proxy; tainted onto.paas/node-kind=real) with CoreDNS; 0 skips them",
      (v) => Number.parseInt(v, 10),
      1,
    )
    .action(async (opts: StateOpts & { workers: number; gpuNodes: number; realNodes: number }) => {
      const started = Date.now();
      const info = await clusterUp({
        stateDir: opts.stateDir,
        workers: opts.workers,
        gpuNodes: opts.gpuNodes,
        realNodes: opts.realNodes,
        progress: (line) =>
          console.error(`${pc.dim(`[${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s]`)} ${line}`),
      });
      const real =
        info.realNodes.length > 0 ? ` (${info.realNodes.length} real: ${info.realNodes.join(", ")})` : "";
      console.error(
        `${pc.green("ready")}: ${info.server}, ${info.nodes.length} nodes${real} (Kubernetes ${info.kubernetesVersion}, etcd ${info.etcdVersion}, KWOK ${info.kwokVersion})`,
      );
      console.error(`try: kubectl --kubeconfig "$(onto cluster kubeconfig)" get nodes`);
    });

  cluster
    .command("build")
    .description(
      "build the control-plane binaries, helm, metrics-server, the VPA recommender, promtool and cert-manager's controller from Go modules into the cache (skipped when present)",
    )
    .action(async () => {
      const binaries = await ensureBinaries((line) => console.error(line));
      console.log(binaries.k8s);
      console.log(binaries.kwok);
      const node = await ensureNodeBinaries((line) => console.error(line));
      console.log(node.containerdDir);
      console.log(node.cniDir);
      // helm is for the install tests (helm lint/template); built here so CI builds it up front.
      console.log(await ensureHelm((line) => console.error(line)));
      // The metrics pipeline, the VPA recommender and promtool (tools/monitoring), and the CRDs.
      const monitoring = await ensureMonitoringBinaries((line) => console.error(line));
      for (const path of Object.values(monitoring)) console.log(path);
      for (const path of ensureMonitoringCrds()) console.log(path);
      // cert-manager's controller and CRDs, for the tests of spec.global.tls.issuerRef.
      console.log(await ensureCertManager((line) => console.error(line)));
      for (const path of ensureCertManagerCrds()) console.log(path);
    });

  cluster
    .command("images")
    .description(
      "build the local images (no registry, no container engine) into the cache and load them into the real nodes of the cluster, if it runs",
    )
    .argument("[names...]", `images to build: ${Object.keys(RECIPES).join(", ")} (default: all)`)
    .addOption(stateDirOption())
    .option("--no-load", "only build, do not load into the cluster's real nodes")
    .action(async (names: string[], opts: StateOpts & { load: boolean }) => {
      const known = Object.keys(RECIPES);
      const unknown = names.filter((n) => !known.includes(n));
      if (unknown.length > 0) {
        console.error(`unknown image ${unknown.join(", ")} (known: ${known.join(", ")})`);
        process.exitCode = 2;
        return;
      }
      const wanted = (names.length > 0 ? names : known) as ImageName[];
      const progress = (line: string): void => console.error(line);
      const load = opts.load && realNodeRuntimes(opts.stateDir).length > 0;
      if (load) {
        const built = await ensureImages(wanted, { stateDir: opts.stateDir, progress });
        for (const image of Object.values(built))
          console.log(`${image.ref}\t${image.digest}\t${image.archive}`);
        return;
      }
      for (const name of wanted) {
        const image = await buildImage(RECIPES[name], progress);
        console.log(`${image.ref}\t${image.digest}\t${image.archive}`);
      }
    });

  cluster
    .command("down")
    .description("stop every process of the local cluster and delete its data")
    .addOption(stateDirOption())
    .action(async (opts: StateOpts) => {
      await clusterDown({ stateDir: opts.stateDir });
      console.error("cluster stopped");
    });

  cluster
    .command("status")
    .description("show the local cluster's processes and nodes; exit 1 when it is not ready")
    .addOption(stateDirOption())
    .option("-o, --output <format>", "text or json", "text")
    .action(async (opts: StateOpts & { output: string }) => {
      const status = await clusterStatus({ stateDir: opts.stateDir });
      if (opts.output === "json") {
        console.log(JSON.stringify(status, null, 2));
      } else if (!status.exists) {
        console.log("no cluster (run: onto cluster up)");
      } else {
        console.log(
          `${status.ready ? pc.green("ready") : pc.red("not ready")}  ${status.server ?? ""}  nodes ${status.readyNodes}/${status.nodes} Ready`,
        );
        for (const c of status.components) {
          console.log(
            `  ${c.running ? pc.green("running") : pc.red("stopped")}  ${c.name.padEnd(24)} ${c.pid ? `pid ${c.pid}` : ""}  ${c.logFile ?? ""}`,
          );
        }
        for (const node of status.realNodes) {
          console.log(
            `  real node ${node.name}: ${node.ready ? pc.green("Ready") : pc.red("not Ready")}  ${node.address}  pods ${node.podCidr}  netns ${node.netns}`,
          );
          for (const c of node.components) {
            console.log(
              `    ${c.running ? pc.green("running") : pc.red("stopped")}  ${c.name.padEnd(22)} ${c.pid ? `pid ${c.pid}` : ""}  ${c.logFile ?? ""}`,
            );
          }
        }
      }
      if (!status.ready) process.exitCode = 1;
    });

  cluster
    .command("kubeconfig")
    .description("print the path of the admin kubeconfig")
    .addOption(stateDirOption())
    .action(async (opts: StateOpts) => {
      const status = await clusterStatus({ stateDir: opts.stateDir });
      if (!status.kubeconfigPath) {
        console.error("no cluster (run: onto cluster up)");
        process.exitCode = 1;
        return;
      }
      console.log(status.kubeconfigPath);
    });

  return cluster;
}
