// How a controller writes platform status (the platform reconciler, Postgres HA): through the
// shared optimistic-lock writer (platform-status.ts), remembering its own last write per platform.
// The informer cache learns of a write only when the watch event arrives; until then a decision
// taken from the cache (an upgrade step, a failover) would be taken from stale state. So until the
// cache holds the resourceVersion the write produced (or a later one), the controller reads the
// platform with the status it wrote.
import type { OntoPlatform, OntoPlatformStatus } from "../../api/index.js";
import type { KubeClient } from "../../kube/index.js";
import { writePlatformStatus } from "./platform-status.js";

/**
 * Whether the cache's resourceVersion is older than one this process wrote. Resource versions are
 * opaque to clients in general; the API server's etcd storage makes them increasing integers, and
 * anything else is taken as caught up (the cache is then trusted as it is).
 */
export function olderThan(cached: string | undefined, written: string): boolean {
  if (cached === undefined) return true;
  if (!/^\d+$/.test(cached) || !/^\d+$/.test(written)) return false;
  return BigInt(cached) < BigInt(written);
}

export class StatusWriter {
  private readonly written = new Map<string, { after: string; status: OntoPlatformStatus }>();

  /** The cached platform, with the status (and resourceVersion) last written if the cache has not seen it. */
  latest(platform: OntoPlatform): OntoPlatform {
    const uid = platform.metadata.uid ?? "";
    const own = this.written.get(uid);
    if (!own) return platform;
    if (!olderThan(platform.metadata.resourceVersion, own.after)) {
      this.written.delete(uid);
      return platform;
    }
    return {
      ...platform,
      metadata: { ...platform.metadata, resourceVersion: own.after },
      status: own.status,
    };
  }

  /**
   * Writes `update(status)` when it changes anything; resolves to the status computed, the
   * platform to go on with (as written, or as computed when nothing was sent) and whether a write
   * was sent.
   */
  async write(
    client: KubeClient,
    platform: OntoPlatform,
    update: (current: OntoPlatformStatus) => OntoPlatformStatus,
  ): Promise<{ status: OntoPlatformStatus; platform: OntoPlatform; sent: boolean }> {
    let status: OntoPlatformStatus = platform.status ?? {};
    const written = await writePlatformStatus(client, platform, (current) => (status = update(current)));
    return { status, platform: this.remember(platform, written, status), sent: written !== undefined };
  }

  /** Notes a write (the platform as the API server returned it); the platform to go on with. */
  remember(
    platform: OntoPlatform,
    written: OntoPlatform | undefined,
    status: OntoPlatformStatus,
  ): OntoPlatform {
    const after = written?.metadata.resourceVersion;
    if (!written || !after) return { ...platform, status };
    const latest = written.status ?? status;
    this.written.set(platform.metadata.uid ?? "", { after, status: latest });
    return { ...platform, metadata: { ...platform.metadata, resourceVersion: after }, status: latest };
  }
}
