// The objects the operator would apply for a platform, rendered on this machine from what the
// cluster holds, the way PlatformReconciler.render builds its RenderInput: the optional APIs the
// cluster serves, the memory overrides healing stored in status, and the generated Secrets'
// stored values (taken from the cluster, never generated again; a Secret that does not exist
// yet gets a placeholder, which is never printed).
import { resolveSpec, type OntoPlatform } from "../api/index.js";
import { discoverCapabilities } from "../controllers/operator.js";
import { withAppliedHash } from "../controllers/platform/drift.js";
import type { KubeClient, KubeObject } from "../kube/index.js";
import { releaseFor } from "../release/index.js";
import {
  GENERATED_SECRET_LABEL,
  MANAGED_KINDS,
  renderPlatform,
  type Capabilities,
  type ExistingSecrets,
  type ManagedKind,
  type RenderedObject,
} from "../render/index.js";

const INSTANCE_LABEL = "app.kubernetes.io/instance";
/** Value of a generated Secret key that does not exist in the cluster yet. */
export const NEW_SECRET_PLACEHOLDER = "generated-in-cluster";

export function apiVersionOf(kind: ManagedKind): string {
  return kind.group ? `${kind.group}/${kind.version}` : kind.version;
}

/** The managed kinds the cluster serves (optional ones only when discovered), as the operator. */
export function servedKinds(capabilities: Capabilities): ManagedKind[] {
  return MANAGED_KINDS.filter(
    (k) =>
      !k.optional ||
      (k.kind === "ServiceMonitor" && capabilities.serviceMonitor) ||
      (k.kind === "VerticalPodAutoscaler" && capabilities.verticalPodAutoscaler),
  );
}

/** Decoded values of the platform's generated Secrets in the cluster. */
export async function storedSecrets(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<ExistingSecrets> {
  const list = await client.list<KubeObject & { data?: Record<string, string> }>("v1", "Secret", {
    namespace,
    labelSelector: `${GENERATED_SECRET_LABEL}=true,${INSTANCE_LABEL}=${name}`,
  });
  return Object.fromEntries(
    list.items.map((s) => [
      s.metadata?.name ?? "",
      Object.fromEntries(
        Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]),
      ),
    ]),
  );
}

export interface ClusterRender {
  capabilities: Capabilities;
  /** In apply order, each with the applied-hash annotation the operator adds. */
  objects: RenderedObject[];
}

/**
 * Renders `platform` (its spec as the API server would store it) for the cluster behind
 * `client`. `live` is the platform in the cluster, if any: its uid, healing overrides and
 * Secrets are used. Without an upgrade step: the objects as they are once an upgrade completes.
 */
export async function renderForCluster(
  client: KubeClient,
  platform: OntoPlatform,
  live: OntoPlatform | undefined,
): Promise<ClusterRender> {
  const capabilities = await discoverCapabilities(client);
  const spec = resolveSpec(platform.spec);
  const { name, namespace } = platform.metadata;
  const objects = renderPlatform({
    platform: { name, namespace, uid: live?.metadata.uid ?? "" },
    spec,
    release: releaseFor(spec.version),
    capabilities,
    overrides: live?.status?.healing?.memoryOverrides ?? {},
    existingSecrets: live ? await storedSecrets(client, namespace, name) : {},
    generateSecret: () => NEW_SECRET_PLACEHOLDER,
  }).map(withAppliedHash);
  return { capabilities, objects };
}
