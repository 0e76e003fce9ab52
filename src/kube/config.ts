// Where the operator finds its API server: an explicit kubeconfig path, else $KUBECONFIG, else
// ~/.kube/config, else the in-cluster service account. client-node does the parsing and auth; this
// file only fixes the order and refuses client-node's silent fallback to http://localhost:8080.
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";

const SERVICE_ACCOUNT_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";

export interface LoadKubeConfigOptions {
  /** Explicit kubeconfig file; wins over everything else. */
  path?: string;
  /** Context to use instead of the file's current-context. */
  context?: string;
}

export function loadKubeConfig(opts: LoadKubeConfigOptions = {}): KubeConfig {
  const kc = new KubeConfig();
  if (opts.path !== undefined) {
    if (!existsSync(opts.path)) throw new Error(`kubeconfig: file ${opts.path} does not exist`);
    kc.loadFromFile(opts.path);
  } else if (process.env.KUBECONFIG) {
    kc.loadFromDefault();
  } else if (existsSync(join(homedir(), ".kube", "config"))) {
    kc.loadFromFile(join(homedir(), ".kube", "config"));
  } else if (existsSync(SERVICE_ACCOUNT_TOKEN) && process.env.KUBERNETES_SERVICE_HOST) {
    kc.loadFromCluster();
  } else {
    throw new Error(
      "kubeconfig: none found (tried --kubeconfig, $KUBECONFIG, ~/.kube/config and the in-cluster service account)",
    );
  }
  if (opts.context !== undefined) {
    if (!kc.getContextObject(opts.context)) throw new Error(`kubeconfig: context ${opts.context} not found`);
    kc.setCurrentContext(opts.context);
  }
  if (!kc.getCurrentCluster()) throw new Error("kubeconfig: the current context names no cluster");
  return kc;
}
