// Placeholder signatures; the implementation lands with the local control plane.
export interface ClusterUpOptions {
  stateDir: string;
  progress?: (line: string) => void;
}
export interface ClusterInfo {
  stateDir: string;
  kubeconfigPath: string;
  server: string;
}
export async function clusterUp(_opts: ClusterUpOptions): Promise<ClusterInfo> {
  throw new Error("not implemented yet");
}
export async function clusterDown(_opts: { stateDir: string }): Promise<void> {
  throw new Error("not implemented yet");
}
