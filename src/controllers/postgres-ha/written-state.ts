// What the Postgres HA controller last wrote to each platform's status.postgres, so that a pass
// can tell when the informer's copy of the platform does not show it yet. The controller is the
// only writer of status.postgres and decides every pass from it (who is the primary, whether a
// promotion is in flight, when the last one was): a pass that starts right after a promotion,
// woken by the promoted pod's new label before the status write has come back through the watch,
// would otherwise decide from the status before the promotion. It then wrote that old state back
// (lastFailover lost, and with it the failover cooldown), and from the status before the write-ahead
// it would fail over a second time from the primary it had just replaced. No I/O: the effect layer
// (ha.ts) reads the platform from the API server when behind() says so.
import { isDeepStrictEqual } from "node:util";
import type { OntoPlatform } from "../../api/index.js";

interface Written {
  resourceVersion: string | undefined;
  /** status.postgres as plain JSON, only compared. */
  postgres: unknown;
}

/** JSON as the API server stores it: no undefined fields. */
const plain = (value: unknown): unknown =>
  value === undefined ? undefined : JSON.parse(JSON.stringify(value));

export class WrittenState {
  private readonly byUid = new Map<string, Written>();

  /** Records the platform as the API server answered a status write. */
  remember(platform: OntoPlatform): void {
    const uid = platform.metadata.uid;
    if (!uid) return;
    this.byUid.set(uid, {
      resourceVersion: platform.metadata.resourceVersion,
      postgres: plain(platform.status?.postgres) ?? {},
    });
  }

  /** Whether `platform` (a cached copy) does not show the status.postgres last written to it. */
  behind(platform: OntoPlatform): boolean {
    const last = platform.metadata.uid ? this.byUid.get(platform.metadata.uid) : undefined;
    if (!last) return false;
    if (last.resourceVersion !== undefined && platform.metadata.resourceVersion === last.resourceVersion)
      return false;
    return !isDeepStrictEqual(plain(platform.status?.postgres) ?? {}, last.postgres);
  }

  forget(uid: string): void {
    this.byUid.delete(uid);
  }
}
