// The kube layer: a thin API client over @kubernetes/client-node. Imports nothing of ours.
export { loadKubeConfig, type LoadKubeConfigOptions } from "./config.js";
export {
  FIELD_MANAGER,
  KubeClient,
  type ApplyOptions,
  type DeleteOptions,
  type KubeClientOptions,
  type ListOptions,
  type ListResult,
  type RequestObserver,
  type WatchOptions,
  type WriteGate,
} from "./client.js";
export { Discovery, apiVersionPath, type ApiResource } from "./discovery.js";
export * from "./errors.js";
export * from "./types.js";
