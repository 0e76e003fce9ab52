// The connections the HA controller keeps open to the Postgres members it looks at every second.
// A look over a kept connection costs a member one query; a new connection costs it a backend
// process, a TLS handshake and a SCRAM exchange, which on a loaded node took longer than a look
// waits and made a live primary look down (failovers of a healthy primary under the full test
// load). Only looks use them; a promotion, a stop of writes or a reload opens its own.
import { createHash } from "node:crypto";
import { Socket } from "node:net";
import type pg from "pg";

interface Kept {
  client: pg.Client;
  /** What the connection was opened with (address, credentials, TLS), as a digest. */
  key: string;
  openedAt: number;
  usedAt: number;
}

/** A digest of what a connection is opened with: a kept one serves only the same. */
export function connectionKey(parts: readonly (string | boolean | undefined)[]): string {
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex");
}

export class KeptConnections {
  private readonly byHost = new Map<string, Kept>();

  /**
   * @param maxAgeMs a connection is opened again after this long, so what it was opened with
   *   (a renewed certificate the member now serves) is looked at again now and then
   * @param idleMs a connection not used for this long is closed (a member gone, a platform deleted)
   */
  constructor(
    private readonly maxAgeMs = 60_000,
    private readonly idleMs = 30_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The connection kept for `host` and opened with `key`, if there is one young enough. */
  take(host: string, key: string): pg.Client | undefined {
    this.sweep();
    const kept = this.byHost.get(host);
    if (!kept) return undefined;
    if (kept.key !== key) {
      this.drop(host);
      return undefined;
    }
    kept.usedAt = this.now();
    return kept.client;
  }

  /** Keeps `client` for `host`; it does not hold the process open. */
  keep(host: string, key: string, client: pg.Client): void {
    if (this.byHost.get(host)?.client !== client) this.drop(host);
    const stream: unknown = client.connection.stream;
    if (stream instanceof Socket) stream.unref();
    const at = this.now();
    this.byHost.set(host, { client, key, openedAt: at, usedAt: at });
  }

  /** Closes the connection kept for `host` (it failed, or the member is to be looked at afresh). */
  drop(host: string): void {
    const kept = this.byHost.get(host);
    if (!kept) return;
    this.byHost.delete(host);
    close(kept.client);
  }

  get size(): number {
    return this.byHost.size;
  }

  closeAll(): void {
    for (const host of [...this.byHost.keys()]) this.drop(host);
  }

  private sweep(): void {
    const at = this.now();
    for (const [host, kept] of this.byHost)
      if (at - kept.openedAt >= this.maxAgeMs || at - kept.usedAt >= this.idleMs) this.drop(host);
  }
}

/** Ends a client without waiting: on a dead peer a polite end would wait for an answer. */
function close(client: pg.Client): void {
  client.end().catch(() => undefined);
  const stream: unknown = client.connection.stream;
  if (stream instanceof Socket) setTimeout(() => stream.destroy(), 1_000).unref();
}
