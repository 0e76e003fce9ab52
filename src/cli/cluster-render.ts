// The objects the operator would apply for a platform, rendered on this machine from what the
// cluster holds, through the reconciler's own renderFor: the optional APIs the cluster serves, the
// memory overrides healing stored in status, and the generated Secrets' stored values (taken from
// the cluster, never generated again; a Secret that does not exist yet gets a placeholder, which
// is never printed).
import { INSTANCE_LABEL, resolveSpec, type OntoPlatform } from "../api/index.js";
import {
  CERTIFICATE_REF,
  decodeGeneratedSecrets,
  discoverCapabilities,
  planCertificates,
  platformCertificateName,
  renderFor,
  withAppliedHash,
  withPlatformCertificate,
} from "../controllers/index.js";
import type { KubeClient, KubeObject } from "../kube/index.js";
import { Store } from "../runtime/index.js";
import { clusterCatalog } from "./releases.js";
import {
  GENERATED_SECRET_LABEL,
  caSecretName,
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
  const uid = live?.metadata.uid ?? "";
  const rendered = renderFor(
    { ...platform, metadata: { ...platform.metadata, uid }, status: live?.status },
    spec,
    {
      capabilities,
      releases: await clusterCatalog(client),
      existingSecrets: live ? await storedSecrets(client, namespace, name) : {},
      generateSecret: () => NEW_SECRET_PLACEHOLDER,
    },
  );
  // The platform certificate as the reconciler decides it now: kept, renewed, or issued (new key
  // material for a certificate that is due shows as a changed Secret; its values are never printed).
  const secrets = new Store<KubeObject>();
  const tlsName = platformCertificateName(spec);
  for (const secretName of tlsName ? [tlsName, caSecretName(name)] : []) {
    const found = await client.getIfExists({ apiVersion: "v1", kind: "Secret", namespace, name: secretName });
    if (found) secrets.upsert(found);
  }
  const plan = await planCertificates({
    platform: { name, namespace, uid },
    spec,
    desired: rendered,
    secrets,
    now: new Date(),
    // With issuerRef, the Certificate cert-manager is asked for (no issuer read: diff shows objects).
    certManager: {
      served: capabilities.certManager === true,
      certificate:
        tlsName && spec.global.tls.issuerRef && capabilities.certManager
          ? await client.getIfExists({ ...CERTIFICATE_REF, namespace, name: tlsName })
          : undefined,
      issuer: undefined,
    },
  });
  return { capabilities, objects: withPlatformCertificate(rendered, spec, plan).map(withAppliedHash) };
}
