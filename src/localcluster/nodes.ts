// The simulated nodes of the local cluster: general workers spread over three zones, and GPU
// nodes with `nvidia.com/gpu` capacity and the matching taint, all played by KWOK.
export interface SimulatedNode {
  name: string;
  zone: string;
  gpus: number;
}

export const ZONES = ["zone-a", "zone-b", "zone-c"] as const;

export function simulatedNodes(workers = 6, gpuNodes = 2): SimulatedNode[] {
  const nodes: SimulatedNode[] = [];
  for (let i = 0; i < workers; i++)
    nodes.push({ name: `worker-${i + 1}`, zone: ZONES[i % ZONES.length] ?? "zone-a", gpus: 0 });
  for (let i = 0; i < gpuNodes; i++)
    nodes.push({ name: `gpu-${i + 1}`, zone: ZONES[i % ZONES.length] ?? "zone-a", gpus: 8 });
  return nodes;
}

/** The Node object KWOK will manage (it picks nodes by the `kwok.x-k8s.io/node: fake` annotation). */
export function nodeManifest(node: SimulatedNode): Record<string, unknown> {
  const capacity: Record<string, string> = {
    cpu: "32",
    memory: "128Gi",
    pods: "110",
    "ephemeral-storage": "500Gi",
  };
  if (node.gpus > 0) capacity["nvidia.com/gpu"] = String(node.gpus);
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: node.name,
      annotations: { "kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0" },
      labels: {
        "kubernetes.io/hostname": node.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "topology.kubernetes.io/region": "local",
        "topology.kubernetes.io/zone": node.zone,
        "node.kubernetes.io/instance-type": node.gpus > 0 ? "kwok-gpu" : "kwok-standard",
        type: "kwok",
        ...(node.gpus > 0 ? { "nvidia.com/gpu.present": "true" } : {}),
      },
    },
    spec:
      node.gpus > 0 ? { taints: [{ key: "nvidia.com/gpu", value: "present", effect: "NoSchedule" }] } : {},
    status: { capacity, allocatable: capacity },
  };
}

/**
 * StorageClasses served by the controller-manager's host-path provisioner, so PVCs bind:
 * `standard` (the default) and `fast-ssd` (the class the seed's production sample names).
 */
export function storageClasses(): Record<string, unknown>[] {
  return ["standard", "fast-ssd"].map((name) => ({
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: {
      name,
      annotations: name === "standard" ? { "storageclass.kubernetes.io/is-default-class": "true" } : {},
    },
    provisioner: "kubernetes.io/host-path",
    reclaimPolicy: "Delete",
    volumeBindingMode: "Immediate",
    allowVolumeExpansion: true,
  }));
}
