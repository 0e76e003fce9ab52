// Objects this reconciler created that its caches do not show yet. A pass that starts before the
// watch delivers a create finds the object missing and would create it again: one more write, and a
// second "created" audit line and Event for one object (seen under load: a canary created twice in
// 311 ms). The server's answer to the create stands in for the cached copy until the cache shows the
// object, or for at most OWN_CREATE_TTL_MS: an object created and deleted by someone else before the
// cache showed either is then created again once that time is over.
import type { KubeObject } from "../../kube/index.js";

export const OWN_CREATE_TTL_MS = 30_000;

export class OwnCreates {
  private readonly created = new Map<string, { obj: KubeObject; at: number }>();

  /** Remembers an object the API server answered a create (or an apply of a missing object) with. */
  record(key: string, obj: KubeObject, now: number): void {
    // What is past its time tells nothing any more (a platform deleted meanwhile is never looked
    // up again): dropped here, so the map holds only the last OWN_CREATE_TTL_MS of creates.
    for (const [k, own] of this.created) if (now - own.at > OWN_CREATE_TTL_MS) this.created.delete(k);
    this.created.set(key, { obj, at: now });
  }

  /** The cached copy; else, while it is fresh, the object this reconciler created. */
  lookup(key: string, cached: KubeObject | undefined, now: number): KubeObject | undefined {
    const own = this.created.get(key);
    if (!own) return cached;
    if (cached !== undefined || now - own.at > OWN_CREATE_TTL_MS) {
      this.created.delete(key);
      return cached;
    }
    return own.obj;
  }
}
