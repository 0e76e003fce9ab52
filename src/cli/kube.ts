// How the commands that talk to a cluster find it, the way kubectl does: --kubeconfig, else
// $KUBECONFIG, else ~/.kube/config; --context, else the file's current context; the namespace
// from -n, else the context's namespace, else "default". So `kubectl onto status` and
// `kubectl get` agree on where they look.
import type { Command } from "commander";
import { PLATFORM_REF, type OntoPlatform } from "../api/index.js";
import { KubeClient, loadKubeConfig, type KubeObject } from "../kube/index.js";

/** Field manager of the CLI's own writes (pause, resume, upgrade), distinct from the operator's. */
export const CLI_FIELD_MANAGER = "onto-cli";

export interface ConnectionFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

export interface Connection {
  client: KubeClient;
  namespace: string;
}

/** Adds --kubeconfig, --context and -n/--namespace to a command. */
export function withConnectionFlags(command: Command): Command {
  return command
    .option("--kubeconfig <path>", "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
    .option("--context <name>", "kubeconfig context (default: the file's current context)")
    .option("-n, --namespace <ns>", "namespace (default: the context's namespace, else default)");
}

/** A client for the flags' cluster; throws an EnvironmentError naming what is missing. */
export function connect(flags: ConnectionFlags, fieldManager = CLI_FIELD_MANAGER): Connection {
  let kubeConfig;
  try {
    kubeConfig = loadKubeConfig({
      ...(flags.kubeconfig !== undefined ? { path: flags.kubeconfig } : {}),
      ...(flags.context !== undefined ? { context: flags.context } : {}),
    });
  } catch (err) {
    throw new EnvironmentError(err instanceof Error ? err.message : String(err));
  }
  const contextNamespace = kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace;
  return {
    client: new KubeClient(kubeConfig, { fieldManager, userAgent: "onto-cli", requestTimeoutMs: 15_000 }),
    namespace: flags.namespace ?? contextNamespace ?? "default",
  };
}

/** The named platform, or an EnvironmentError that says where it was looked for. */
export async function getPlatform(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<OntoPlatform> {
  const platform = await client.getIfExists<OntoPlatform & KubeObject>({ ...PLATFORM_REF, namespace, name });
  if (!platform) throw new EnvironmentError(`OntoPlatform ${namespace}/${name} not found`);
  return platform;
}

/**
 * The command cannot run (no kubeconfig, no such platform, API server unreachable): exit code 2,
 * as opposed to 1, which means the command ran and found a problem.
 */
export class EnvironmentError extends Error {}
