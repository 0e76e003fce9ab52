// cert-manager on the local cluster, as a user would have it: its controller built from its Go
// module (tools/cert-manager: cert-manager's own certificate, CertificateRequest and issuer
// controllers; no webhook, no ACME) and its CRDs read from the same module. The controller issues
// into Secrets through the API server, so it needs no node. Started and stopped by whoever needs it
// (the certificate tests); `onto cluster build` builds it up front.
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ensureGoBinary, goModuleDir, moduleHash, type GoTarget } from "./build.js";
import { PACKAGE_ROOT } from "./package-root.js";
import { logTail, startProcess, stopProcess, type ProcessRecord } from "./processes.js";
import { cacheRoot } from "./versions.js";

/** Must match the requirement in tools/cert-manager/go.mod. */
export const CERT_MANAGER_VERSION = "v1.21.2";
const CERT_MANAGER_MODULE = "github.com/cert-manager/cert-manager";
/** The cert-manager.io kinds (no ACME Orders and Challenges: the controller runs no ACME). */
const CERT_MANAGER_CRDS = ["certificates", "certificaterequests", "issuers", "clusterissuers"];

const moduleDir = join(PACKAGE_ROOT, "tools", "cert-manager");

export const CERT_MANAGER_TARGET: GoTarget = {
  name: "cert-manager",
  moduleDir,
  version: CERT_MANAGER_VERSION,
  pkg: ".",
  output: join(
    cacheRoot(),
    `cert-manager-${CERT_MANAGER_VERSION}-${moduleHash(moduleDir)}`,
    "cert-manager-controller",
  ),
  ldflags: "-s -w",
};

export function ensureCertManager(progress: (line: string) => void = () => undefined): Promise<string> {
  return ensureGoBinary(CERT_MANAGER_TARGET, progress);
}

/** cert-manager's CRD manifests, copied once out of its Go module into the cache. Returns the files. */
export function ensureCertManagerCrds(): string[] {
  const dir = join(cacheRoot(), `cert-manager-crds-${CERT_MANAGER_VERSION}`);
  if (!existsSync(dir)) {
    const source = goModuleDir(CERT_MANAGER_MODULE, CERT_MANAGER_VERSION, moduleDir);
    const partial = `${dir}.partial-${process.pid}`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    for (const plural of CERT_MANAGER_CRDS) {
      const file = `cert-manager.io_${plural}.yaml`;
      copyFileSync(join(source, "deploy", "crds", file), join(partial, file));
    }
    renameSync(partial, dir);
  }
  return readdirSync(dir)
    .sort()
    .map((f) => join(dir, f));
}

/** A running cert-manager controller; `stop` ends it. */
export interface CertManagerProcess {
  record: ProcessRecord;
  stop(): Promise<void>;
  /** The last lines of its log (for a failed test's message). */
  logTail(): string;
}

/**
 * Starts the controller against the cluster `kubeconfig` names, recorded in `stateDir` under
 * `name`. ClusterIssuers read their Secrets from `clusterResourceNamespace`.
 */
export async function startCertManager(opts: {
  stateDir: string;
  kubeconfig: string;
  name?: string;
  clusterResourceNamespace?: string;
  progress?: (line: string) => void;
}): Promise<CertManagerProcess> {
  const binary = await ensureCertManager(opts.progress);
  const record = startProcess(opts.stateDir, opts.name ?? "cert-manager", binary, [
    `--kubeconfig=${opts.kubeconfig}`,
    `--cluster-resource-namespace=${opts.clusterResourceNamespace ?? "cert-manager"}`,
  ]);
  return {
    record,
    stop: () => stopProcess(opts.stateDir, record),
    logTail: () => logTail(record, 40),
  };
}
