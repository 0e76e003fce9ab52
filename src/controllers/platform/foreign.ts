// Items another field manager added to lists of the operator's objects (an env var or a volume
// in a pod template, a container): server-side apply keeps them however often the operator
// applies, so they are not drift (drift.ts) and the operator leaves them. It reports them instead,
// in the ForeignChanges condition, naming the object, the item and the manager that holds it.
// The manager is read from the object's managedFields, which the informer cache drops: one GET per
// object version that has such items, remembered, so a steady platform sends no request for it.
import { FIELD_MANAGER, type KubeClient, type KubeObject } from "../../kube/index.js";
import type { RenderedObject } from "../../render/index.js";
import { objectId } from "./apply.js";
import { foreignItems, managerOf } from "./drift.js";

/** An item another manager holds in an object the operator applies. */
export interface ForeignField {
  object: string;
  path: string;
  /** The field manager holding it. */
  manager: string;
}

/** Remembers who holds what, per object version (uid and resourceVersion). */
export class ForeignFieldReader {
  private readonly seen = new Map<string, ForeignField[]>();

  async read(
    client: KubeClient,
    desired: readonly RenderedObject[],
    live: (obj: RenderedObject) => KubeObject | undefined,
  ): Promise<ForeignField[]> {
    const found: ForeignField[] = [];
    for (const obj of desired) {
      const current = live(obj);
      if (!current) continue;
      const items = foreignItems(obj, current);
      if (items.length === 0) continue;
      const version = `${current.metadata?.uid}@${current.metadata?.resourceVersion}`;
      let fields = this.seen.get(version);
      if (!fields) {
        const full = await client
          .get({
            apiVersion: obj.apiVersion,
            kind: obj.kind,
            namespace: obj.metadata.namespace,
            name: obj.metadata.name,
          })
          .catch(() => undefined);
        const id = objectId(obj.kind, obj.metadata.name);
        // An item no other manager holds is one of ours the cache has not seen go yet: not foreign.
        fields = items.flatMap((item) => {
          const manager = managerOf(full?.metadata?.managedFields, item, FIELD_MANAGER);
          return manager === undefined ? [] : [{ object: id, path: item.path, manager }];
        });
        // Bounded: object versions come and go; what is current is read again at most once.
        if (this.seen.size >= 1024) this.seen.clear();
        this.seen.set(version, fields);
      }
      found.push(...fields);
    }
    return found;
  }
}
