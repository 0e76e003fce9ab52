// The versions the local control plane is built from, and where builds are cached.
// Bumping a version here (and in the matching go.mod) changes the cache key, so the next
// `onto cluster up` rebuilds instead of reusing a binary of another release.
import { homedir } from "node:os";
import { join } from "node:path";

export const KUBERNETES_VERSION = "v1.36.3";
/** etcd server as required by Kubernetes' own go.mod for this release (built into the same binary). */
export const ETCD_VERSION = "v3.6.8";
export const KWOK_VERSION = "v0.8.0";
/** Container runtime of the real nodes (tools/localcluster/containerd/go.mod). */
export const CONTAINERD_VERSION = "v2.4.2";
/** CNI plugins of the real nodes: bridge, host-local, loopback, portmap (tools/localcluster/cni/go.mod). */
export const CNI_PLUGINS_VERSION = "v1.10.0";

export function cacheRoot(): string {
  return process.env.ONTO_CACHE_DIR ?? join(homedir(), ".cache", "onto-operator");
}

/** Default state folder of the demo cluster (`onto cluster up` without --state-dir). */
export function defaultStateDir(): string {
  return join(cacheRoot(), "cluster");
}
