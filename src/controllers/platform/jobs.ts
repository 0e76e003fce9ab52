// Applying a Job: its pod template is immutable, so a Job whose template changed is replaced
// (deleted, then created again), which is what re-running it means.
import { InvalidError, type KubeClient, type KubeObject } from "../../kube/index.js";
import type { RenderedObject } from "../../render/index.js";

/** Server-side apply of `obj`; a changed Job that already exists is replaced instead. */
export async function applyOrReplace(
  client: KubeClient,
  obj: RenderedObject,
  live: KubeObject | undefined,
): Promise<KubeObject> {
  try {
    return await client.apply<KubeObject>(obj, { force: true });
  } catch (err) {
    if (!(obj.kind === "Job" && live && err instanceof InvalidError)) throw err;
    const ref = {
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      namespace: obj.metadata.namespace,
      name: obj.metadata.name,
    };
    await client.delete(ref, { propagationPolicy: "Background" });
    return await client.create<KubeObject>(obj);
  }
}
