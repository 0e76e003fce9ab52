// The release catalog as the CLI sees it: the operator's built-in releases plus the cluster's
// OntoRelease objects, resolved by the operator's own rule (catalogFrom). A cluster without the
// OntoRelease CRD has the built-in releases only.
import { API_VERSION, RELEASE_KIND, type OntoRelease } from "../api/index.js";
import type { KubeClient, KubeObject } from "../kube/index.js";
import { BUILT_IN_RELEASES, catalogFrom, type ReleaseCatalog } from "../release/index.js";

export async function clusterReleases(client: KubeClient): Promise<OntoRelease[]> {
  if (!(await client.discovery.hasResource(API_VERSION, RELEASE_KIND))) return [];
  const list = await client.list<KubeObject & OntoRelease>(API_VERSION, RELEASE_KIND);
  return list.items;
}

export async function clusterCatalog(client: KubeClient): Promise<ReleaseCatalog> {
  return catalogFrom(BUILT_IN_RELEASES, await clusterReleases(client)).catalog;
}
