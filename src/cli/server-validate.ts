// `onto validate --server`: asks the API server whether it would accept a document, by a
// server-side dry run (create, or update when the platform already exists, so transition rules
// apply). Loaded only for --server, so offline validation never loads the API client.
import { API_VERSION, PLURAL, RELEASE_KIND, RELEASE_PLURAL, type ValidationIssue } from "../api/index.js";
import { KubeApiError, KubeClient, NotFoundError, loadKubeConfig } from "../kube/index.js";

export function serverClient(kubeconfig: string | undefined, context: string | undefined): KubeClient {
  return new KubeClient(loadKubeConfig({ path: kubeconfig, context }));
}

/**
 * Asks the API server whether it would accept `object`: a dry-run create, or a dry-run update
 * when an object of that name exists (so transition rules are checked against it), with
 * fieldValidation=Strict so unknown fields are refused as offline. Returns the refusal's causes.
 */
export async function serverValidate(
  client: KubeClient,
  object: unknown,
  defaultNamespace?: string,
): Promise<ValidationIssue[]> {
  if (typeof object !== "object" || object === null)
    return [{ path: "", message: "must be a YAML/JSON object" }];
  const doc = structuredClone(object) as {
    kind?: unknown;
    metadata?: { name?: unknown; namespace?: unknown; resourceVersion?: string };
  };
  const namespace =
    typeof doc.metadata?.namespace === "string"
      ? doc.metadata.namespace
      : (defaultNamespace ?? currentNamespace(client));
  // An OntoRelease is cluster-scoped; every other document is sent as an OntoPlatform.
  const collection =
    doc.kind === RELEASE_KIND
      ? `/apis/${API_VERSION}/${RELEASE_PLURAL}`
      : `/apis/${API_VERSION}/namespaces/${namespace}/${PLURAL}`;
  const query = { dryRun: "All", fieldValidation: "Strict" };
  try {
    const name = typeof doc.metadata?.name === "string" ? doc.metadata.name : undefined;
    const live = name
      ? await client.requestJson("GET", `${collection}/${name}`).catch((err: unknown) => {
          if (err instanceof NotFoundError) return undefined;
          throw err;
        })
      : undefined;
    if (live && doc.metadata) {
      doc.metadata.resourceVersion = (
        live as { metadata: { resourceVersion: string } }
      ).metadata.resourceVersion;
      await client.requestJson("PUT", `${collection}/${String(name)}`, { body: doc, query });
    } else {
      await client.requestJson("POST", collection, { body: doc, query });
    }
    return [];
  } catch (err) {
    if (!(err instanceof KubeApiError) || err.code >= 500 || err.code === 401 || err.code === 403) throw err;
    const causes = err.status?.details?.causes ?? [];
    if (causes.length === 0) return [{ path: "", message: err.status?.message ?? err.message }];
    return causes.map((cause) => ({
      path: cause.field === undefined || cause.field === "<nil>" ? "" : cause.field,
      message: cause.message ?? cause.reason ?? "",
    }));
  }
}

function currentNamespace(client: KubeClient): string {
  const kc = client.kubeConfig;
  return kc.getContextObject(kc.getCurrentContext())?.namespace ?? "default";
}
