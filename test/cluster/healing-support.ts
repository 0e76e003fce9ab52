// Shared by the healing cluster tests: a client with its own field manager (so a fault label the
// test puts on a pod template is not owned by the operator's manager and survives its applies),
// Events, and pod lookups.
import { KubeClient, loadKubeConfig, type KubeObject } from "../../src/kube/index.js";
import { kubeconfigPath } from "../support/cluster.js";

export type Pod = KubeObject & {
  spec?: {
    nodeName?: string;
    containers?: { name: string; resources?: { limits?: Record<string, string> } }[];
  };
  status?: {
    phase?: string;
    reason?: string;
    conditions?: { type: string; status: string }[];
  };
};

export interface EventView {
  reason?: string;
  note?: string;
  type?: string;
  regarding?: { kind?: string; name?: string };
}

/** A client that writes as field manager `healing-test`, not as the operator. */
export function testerClient(): KubeClient {
  return new KubeClient(loadKubeConfig({ path: kubeconfigPath() }), { fieldManager: "healing-test" });
}

export async function events(client: KubeClient, namespace: string): Promise<EventView[]> {
  const list = await client.list<KubeObject & EventView>("events.k8s.io/v1", "Event", { namespace });
  return list.items;
}

export async function podsOf(client: KubeClient, namespace: string, component: string): Promise<Pod[]> {
  return (
    await client.list<Pod>("v1", "Pod", { namespace, labelSelector: `app.kubernetes.io/name=${component}` })
  ).items;
}

export function memoryLimit(pod: Pod, container: string): string | undefined {
  return pod.spec?.containers?.find((c) => c.name === container)?.resources?.limits?.memory;
}

export const seconds = (fromMs: number): string => ((Date.now() - fromMs) / 1000).toFixed(1);
