// The objects the operator would apply for a platform, rendered on this machine from what the
// cluster holds, through the reconciler's own renderFor: the optional APIs the cluster serves, the
// memory overrides healing stored in status, and the generated Secrets' stored values (taken from
// the cluster, never generated again; a Secret that does not exist yet gets a placeholder, which
// is never printed).
import { INSTANCE_LABEL, resolveSpec, type OntoPlatform } from "../api/index.js";
import {
  decodeGeneratedSecrets,
  discoverCapabilities,
  renderFor,
  withAppliedHash,
} from "../controllers/index.js";
import type { KubeClient } from "../kube/index.js";
import { clusterCatalog } from "./releases.js";
import {
  GENERATED_SECRET_LABEL,
  type Capabilities,
  type ExistingSecrets,
  type RenderedObject,
} from "../render/index.js";

/** Value of a generated Secret key that does not exist in the cluster yet. */
export const NEW_SECRET_PLACEHOLDER = "generated-in-cluster";

/** Decoded values of the platform's generated Secrets in the cluster. */
export async function storedSecrets(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<ExistingSecrets> {
  const list = await client.list("v1", "Secret", {
    namespace,
    labelSelector: `${GENERATED_SECRET_LABEL}=true,${INSTANCE_LABEL}=${name}`,
  });
  return decodeGeneratedSecrets(list.items, name);
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
  const objects = renderFor(
    { ...platform, metadata: { ...platform.metadata, uid: live?.metadata.uid ?? "" }, status: live?.status },
    spec,
    {
      capabilities,
      releases: await clusterCatalog(client),
      existingSecrets: live ? await storedSecrets(client, namespace, name) : {},
      generateSecret: () => NEW_SECRET_PLACEHOLDER,
    },
  ).map(withAppliedHash);
  return { capabilities, objects };
}
