// Clients that write to Redis and MinIO in a loop from the test process while something disrupts
// them (an upgrade, a killed member), keeping the record of what was acknowledged, so the check
// afterwards reads back exactly those writes. A Redis write counts when WAIT says a replica holds
// it (what the platform's services are told to rely on); a MinIO write counts when the put returns.
// Postgres's loop runs in a pod on the node, through the read-write Service (postgres-ha-support.ts).
//
// Every request has its own deadline: a member killed mid-request leaves a connection that answers
// nothing (its address is gone), and an unbounded wait would stop the loop until TCP gives up.
import type * as Minio from "minio";
import type { Redis } from "ioredis";
import { REDIS } from "../../src/render/endpoints.js";
import { WriteLoop } from "../support/write-loop.js";
import {
  isReady,
  minioClient,
  podsOf,
  readObject,
  redisAddresses,
  sentinelClient,
  uniqueValue,
  withMember,
} from "./platform-support.js";

const REQUEST_DEADLINE_MS = 5_000;

function within<T>(what: string, work: Promise<T>, ms = REQUEST_DEADLINE_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms);
  });
  work.catch(() => undefined); // a request that loses the race may still fail later: not unhandled
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/**
 * SET then WAIT 1 through the Sentinels' primary. Pods come back under new addresses during a
 * roll, so after three failures in a row the client is made again from the Sentinels' current
 * addresses.
 */
export class RedisWriteLoop extends WriteLoop {
  private client: Redis | undefined;
  private addresses = new Map<string, string>();
  private failuresInARow = 0;

  constructor(
    private readonly namespace: string,
    private readonly password: string,
    intervalMs = 100,
  ) {
    super(intervalMs);
  }

  protected async writeOnce(): Promise<boolean> {
    try {
      if (!this.client) {
        this.addresses = await redisAddresses(this.namespace);
        this.client = sentinelClient(this.namespace, this.password, () => this.addresses);
      }
      const client = this.client;
      const key = uniqueValue("during-upgrade");
      const value = uniqueValue("v");
      await within("SET", client.set(key, value));
      const replicas = Number(await within("WAIT", client.call("WAIT", "1", "2000")));
      if (replicas < 1) return false;
      this.acked.set(key, value);
      this.failuresInARow = 0;
      return true;
    } catch (err) {
      if (++this.failuresInARow >= 3) {
        this.client?.disconnect();
        this.client = undefined;
        this.failuresInARow = 0;
      }
      throw err;
    }
  }

  protected override async close(): Promise<void> {
    this.client?.disconnect();
    this.client = undefined;
  }

  /** The acknowledged keys that `host` does not hold with the value written. */
  async missingOn(host: string): Promise<string[]> {
    const keys = [...this.acked.keys()];
    const missing: string[] = [];
    await withMember(host, REDIS.port, this.password, async (c) => {
      for (let i = 0; i < keys.length; i += 500) {
        const chunk = keys.slice(i, i + 500);
        const values = await c.mget(...chunk);
        chunk.forEach((key, j) => {
          if (values[j] !== this.acked.get(key)) missing.push(key);
        });
      }
    });
    return missing;
  }
}

/** Puts a small object through the Ready MinIO members in turn. */
export class MinioWriteLoop extends WriteLoop {
  private readonly clients = new Map<string, Minio.Client>();
  private turn = 0;

  constructor(
    private readonly namespace: string,
    private readonly bucket: string,
    intervalMs = 500,
  ) {
    super(intervalMs);
  }

  private async clientFor(ip: string): Promise<Minio.Client> {
    const known = this.clients.get(ip);
    if (known) return known;
    const made = await minioClient(this.namespace, ip);
    this.clients.set(ip, made);
    return made;
  }

  protected async writeOnce(): Promise<boolean> {
    const ips = (await podsOf(this.namespace, "minio"))
      .filter(isReady)
      .map((pod) => pod.status?.podIP)
      .filter((ip): ip is string => ip !== undefined);
    const ip = ips[this.turn++ % Math.max(1, ips.length)];
    if (!ip) return false;
    const key = `during-upgrade/${uniqueValue("object")}`;
    const value = uniqueValue("content");
    const client = await this.clientFor(ip);
    await within("put", client.putObject(this.bucket, key, Buffer.from(value)));
    this.acked.set(key, value);
    return true;
  }

  /** The acknowledged objects that cannot be read back, with their content, through `ip`. */
  async missingThrough(ip: string): Promise<string[]> {
    const client = await this.clientFor(ip);
    const missing: string[] = [];
    for (const [key, value] of this.acked) {
      const read = await within("get", readObject(client, this.bucket, key)).catch((err: unknown) =>
        String(err),
      );
      if (read !== value) missing.push(`${key} (${read.slice(0, 80)})`);
    }
    return missing;
  }
}
