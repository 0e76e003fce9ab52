// Builds the `helm` command from its Go module (tools/helm) into the same cache as the local
// control plane, keyed by Helm's version and a hash of the module files; skips when present.
import { join } from "node:path";
import { ensureGoBinary, moduleHash } from "./build.js";
import { cacheRoot } from "./versions.js";
import { PACKAGE_ROOT } from "./package-root.js";

/** Must match the helm.sh/helm/v3 requirement in tools/helm/go.mod. */
export const HELM_VERSION = "v3.22.0";
/** Kubernetes version Helm reports by default (its client-go is v0.37), as Helm's Makefile stamps it. */
const HELM_KUBE_MAJOR = "1";
const HELM_KUBE_MINOR = "37";

const moduleDir = join(PACKAGE_ROOT, "tools", "helm");

/** Returns the path of the `helm` binary, building it first when the cache does not hold it. */
export function ensureHelm(progress: (line: string) => void = () => undefined): Promise<string> {
  return ensureGoBinary(
    {
      name: "helm",
      moduleDir,
      version: HELM_VERSION,
      pkg: "helm.sh/helm/v3/cmd/helm",
      output: join(cacheRoot(), `helm-${HELM_VERSION}-${moduleHash(moduleDir)}`, "helm"),
      ldflags: [
        "-s -w",
        `-X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}`,
        "-X helm.sh/helm/v3/internal/version.gitTreeState=clean",
        `-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=${HELM_KUBE_MAJOR}`,
        `-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=${HELM_KUBE_MINOR}`,
        `-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=${HELM_KUBE_MAJOR}`,
        `-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=${HELM_KUBE_MINOR}`,
      ].join(" "),
    },
    progress,
  );
}
