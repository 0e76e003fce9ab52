// The rendered Redis Sentinel StatefulSet run with Debian's redis-server and redis-sentinel 7.0 as
// processes on loopback (one address per pod, the StatefulSet's order kept: a pod starts when the
// one before it is Ready). Proves that the Sentinels agree, a failover keeps the data, and a cold
// restart (every pod stopped, then started again) loses no write a replica acknowledged (WAIT).
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveSpec } from "../../src/api/index.js";
import { releaseFor } from "../../src/release/index.js";
import { REDIS } from "../../src/render/endpoints.js";
import { renderPlatform, type RenderedObject } from "../../src/render/index.js";
import { WriteLoop } from "../support/write-loop.js";
import { PodProcess, secretValue, systemUser, until } from "./pod-process.js";

const NS = "onto-programs";
const ORDINALS = [0, 1, 2];
const ip = (ordinal: number): string => `127.0.3.${10 + ordinal}`;
const host = (ordinal: number): string => `redis-${ordinal}.redis-headless.${NS}.svc`;
let root = "";
let objects: RenderedObject[] = [];

interface Pod {
  ordinal: number;
  redis: PodProcess;
  sentinel: PodProcess;
}
const pods: Pod[] = [];
const all = (): PodProcess[] => pods.flatMap((p) => [p.redis, p.sentinel]);

function renderObjects(): RenderedObject[] {
  const spec = resolveSpec({
    version: "1.5.0",
    infrastructure: { redis: { replicas: 3, mode: "sentinel" } },
  });
  return renderPlatform({
    platform: { name: "onto-programs", namespace: NS, uid: "00000000-0000-0000-0000-000000000002" },
    spec,
    release: releaseFor(spec.version),
    capabilities: { serviceMonitor: false, verticalPodAutoscaler: false },
    generateSecret: ({ key, length }) => `${key}0123456789abcdefghijklmnopqrstuvwxyz`.slice(0, length),
  });
}

function pod(ordinal: number): Pod {
  const make = (container: string): PodProcess =>
    new PodProcess({
      objects,
      workload: "redis",
      container,
      ordinal,
      dir: join(root, `redis-${ordinal}`),
      user: systemUser("redis"),
      translations: [
        ...ORDINALS.map((o): [string, string] => [host(o), ip(o)]),
        ["bind * -::*", `bind ${ip(ordinal)}`],
        ["127.0.0.1", ip(ordinal)],
      ],
    });
  return { ordinal, redis: make("redis"), sentinel: make("sentinel") };
}

function cli(through: PodProcess, address: string, port: number, ...args: string[]): string {
  return through.exec(["redis-cli", "-h", address, "-p", String(port), "--raw", ...args]).trim();
}
const redisCli = (o: number, ...args: string[]): string => cli(at(o).redis, ip(o), 6379, ...args);
const sentinelCli = (o: number, ...args: string[]): string => cli(at(o).redis, ip(o), 26379, ...args);

function at(ordinal: number): Pod {
  const found = pods[ordinal];
  if (!found) throw new Error(`no pod ${ordinal}`);
  return found;
}

/** The ordinal every Sentinel names as primary, when they agree and it says it is one. */
function agreedPrimary(): number | undefined {
  const answers = ORDINALS.map(
    (o) => sentinelCli(o, "sentinel", "get-master-addr-by-name", "onto-primary").split("\n")[0],
  );
  const first = answers[0];
  if (!first || answers.some((a) => a !== first)) return undefined;
  const ordinal = ORDINALS.find((o) => ip(o) === first);
  if (ordinal === undefined) return undefined;
  return redisCli(ordinal, "role").split("\n")[0] === "master" ? ordinal : undefined;
}

async function waitAgreed(what: string, accept: (o: number) => boolean = () => true): Promise<number> {
  let found: number | undefined;
  await until(
    what,
    () => {
      found = agreedPrimary();
      return found !== undefined && accept(found);
    },
    90_000,
    all(),
  );
  return found as number;
}

/** Starts the pods in the StatefulSet's order: each once the one before it is Ready. */
async function startInOrder(): Promise<void> {
  for (const p of pods) {
    p.redis.start();
    p.sentinel.start();
    await until(`redis-${p.ordinal} Ready`, () => p.redis.probe("readinessProbe"), 60_000, all());
  }
}

/** Both replicas linked to the primary and acknowledging its writes (WAIT 2). */
async function waitReplicasInSync(primary: number): Promise<void> {
  await until(
    "replicas in sync",
    () => {
      const info = redisCli(primary, "info", "replication");
      const online = [...info.matchAll(/slave\d+:[^\n]*state=online/g)].length;
      return online === 2 && redisCli(primary, "wait", "2", "1000") === "2";
    },
    60_000,
    all(),
  );
}

/** SET then WAIT 1 through the Sentinels (as the platform's services write), every 10 ms. */
class SentinelWriteLoop extends WriteLoop {
  private readonly client: Redis;
  private count = 0;

  constructor(
    password: string,
    private readonly prefix: string,
  ) {
    super(10);
    this.client = new Redis({
      sentinels: ORDINALS.map((o) => ({ host: ip(o), port: 26379 })),
      name: "onto-primary",
      password,
      connectTimeout: 1_000,
      maxRetriesPerRequest: 1,
      sentinelRetryStrategy: () => 200,
    });
    this.client.on("error", () => undefined);
  }

  protected async writeOnce(): Promise<boolean> {
    const key = `${this.prefix}-${this.count++}`;
    await this.client.set(key, key);
    if (Number(await this.client.call("WAIT", "1", "1000")) < 1) return false;
    this.acked.set(key, key);
    return true;
  }

  protected override async close(): Promise<void> {
    this.client.disconnect();
  }
}

/**
 * Synced replicas become eligible for promotion, and every Sentinel sees it (its view of a replica
 * is refreshed every 10 s; a replica it has not seen yet is neither promoted nor reconfigured).
 */
async function waitReplicasEligible(): Promise<void> {
  await until(
    "both replicas eligible in every Sentinel's view",
    () =>
      ORDINALS.every(
        (o) =>
          sentinelCli(o, "sentinel", "replicas", "onto-primary").match(/slave-priority\n100/g)?.length === 2,
      ),
    60_000,
    all(),
  );
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "onto-redis-"));
  chmodSync(root, 0o755);
  objects = renderObjects();
  for (const o of ORDINALS) pods.push(pod(o));
  await startInOrder();
}, 240_000);

afterAll(async () => {
  await Promise.all(all().map((p) => p.stop(10_000)));
  if (root && !process.env.ONTO_KEEP_PROGRAMS) rmSync(root, { recursive: true, force: true });
});

describe("Redis Sentinel rendered for a pod, run with the real servers", () => {
  it("starts ordinal 0 as primary on first start and every Sentinel agrees", async () => {
    expect(await waitAgreed("the Sentinels agreeing")).toBe(0);
    await waitReplicasInSync(0);
    expect(sentinelCli(0, "sentinel", "master", "onto-primary")).toMatch(/num-other-sentinels\n2/);
    await waitReplicasEligible();
  });

  it("fails over when the primary dies, and the old primary rejoins as a replica", async () => {
    redisCli(0, "set", "before-failover", "1");
    expect(redisCli(0, "wait", "2", "5000")).toBe("2");
    await at(0).redis.kill();
    const promoted = await waitAgreed("a replica promoted", (o) => o !== 0);
    expect(redisCli(promoted, "get", "before-failover")).toBe("1");
    at(0).redis.start();
    await until(
      "redis-0 a replica again",
      () => redisCli(0, "role").split("\n")[0] === "slave",
      60_000,
      all(),
    );
    await waitReplicasInSync(promoted);
  });

  it("loses no acknowledged write when every pod stops and starts again (cold restart)", async () => {
    const primary = await waitAgreed("a primary before the restart");
    expect(primary).not.toBe(0); // the case that lost writes: the last primary is not ordinal 0
    await waitReplicasInSync(primary);
    const acknowledged: string[] = [];
    for (let i = 0; i < 50; i++) {
      redisCli(primary, "set", `key-${i}`, `value-${i}`);
      if (Number(redisCli(primary, "wait", "1", "2000")) >= 1) acknowledged.push(`key-${i}`);
    }
    expect(acknowledged.length).toBe(50);

    // Every pod deleted at once: SIGTERM to every container, as the kubelet does.
    await Promise.all(all().map((p) => p.stop()));
    await startInOrder();

    const after = await waitAgreed("a primary after the cold restart");
    expect(after).toBe(primary);
    await waitReplicasInSync(after);
    const lost = acknowledged.filter((k) => redisCli(after, "get", k) !== k.replace("key", "value"));
    expect(lost).toEqual([]);
    for (const o of ORDINALS) expect(redisCli(o, "dbsize")).toBe(redisCli(after, "dbsize"));
  });

  it("a pod whose saved Sentinel state names a replica under the newest epoch follows the server that answers as primary", async () => {
    const primary = await waitAgreed("a primary before the restart");
    await waitReplicasInSync(primary);
    const [restarted, stale] = ORDINALS.filter((o) => o !== primary) as [number, number];
    const epoch = Number(
      /config-epoch\n(\d+)/.exec(sentinelCli(primary, "sentinel", "master", "onto-primary"))?.[1],
    );
    await Promise.all([at(restarted).redis.stop(), at(restarted).sentinel.stop()]);
    // What a state saved in the middle of a failover can hold: an epoch newer than any peer's,
    // paired with a server that is a replica now.
    const state = join(at(restarted).sentinel.volume("data"), "sentinel", "sentinel.conf");
    writeFileSync(
      state,
      readFileSync(state, "utf8")
        .replace(/^sentinel monitor onto-primary \S+/m, `sentinel monitor onto-primary ${ip(stale)}`)
        .replace(
          /^sentinel config-epoch onto-primary \d+/m,
          `sentinel config-epoch onto-primary ${epoch + 5}`,
        ),
    );
    at(restarted).redis.start();
    at(restarted).sentinel.start();
    await until(`redis-${restarted} Ready`, () => at(restarted).redis.probe("readinessProbe"), 60_000, all());
    expect(await waitAgreed("every Sentinel naming the primary", (o) => o === primary)).toBe(primary);
    expect(redisCli(restarted, "info", "replication")).toMatch(
      new RegExp(`master_host:${ip(primary).replace(/\./g, "\\.")}`),
    );
    await waitReplicasInSync(primary);
  });

  it("a primary's pod deleted (or killed) and back before, during or after the Sentinels' failover hands over to a replica and loses no acknowledged write", async () => {
    const password = secretValue(objects, REDIS.secret, REDIS.passwordKey);
    const results: {
      how: string;
      downMs: number;
      primary: number;
      after: number;
      acknowledged: number;
      failed: number;
      lost: number;
      gapMs: number;
      stop: string;
    }[] = [];
    // The pod comes back before the Sentinels see it down, while they fail over, and after.
    // A kill (no grace) also drops what the append-only file had not written yet: the primary
    // comes back with less than its replicas acknowledged.
    const cases: [how: "deleted" | "killed", downMs: number][] = [
      ["deleted", 2_000],
      ["deleted", 5_500],
      ["deleted", 9_000],
      ["killed", 2_000],
      ["killed", 6_500],
    ];
    for (const [how, downMs] of cases) {
      const primary = await waitAgreed("a primary before the deletion");
      await waitReplicasInSync(primary);
      await waitReplicasEligible();
      const loop = new SentinelWriteLoop(password, `${how}-${downMs}`).start();
      await sleep(1_000);
      const gone = at(primary);
      const logFrom = readFileSync(gone.redis.logFile, "utf8").length;
      if (how === "killed") await Promise.all([gone.redis.kill(), gone.sentinel.kill()]);
      else await Promise.all([gone.redis.stop(), gone.sentinel.stop()]);
      await sleep(downMs);
      gone.redis.start();
      gone.sentinel.start();
      await until(`redis-${primary} Ready`, () => gone.redis.probe("readinessProbe"), 60_000, all());
      const after = await waitAgreed("a primary after the deletion");
      await waitReplicasInSync(after);
      await sleep(2_000);
      const { acknowledged, failed, longestGapMs } = await loop.stop();
      const lost = [...loop.acked].filter(([key, value]) => redisCli(after, "get", key) !== value).length;
      // What the preStop hook did, as the next start printed it (a kill runs no hook).
      const stop =
        readFileSync(gone.redis.logFile, "utf8")
          .slice(logFrom)
          .split("\n")
          .filter((l) => l.startsWith("before the last stop: "))
          .at(-1)
          ?.slice("before the last stop: ".length) ?? "";
      results.push({ how, downMs, primary, after, acknowledged, failed, lost, gapMs: longestGapMs, stop });
    }
    console.log(
      results
        .map(
          (r) =>
            `${r.how}, down ${r.downMs} ms: redis-${r.primary} -> redis-${r.after}, ${r.acknowledged} acknowledged, ${r.failed} failed, ${r.lost} lost, longest write gap ${r.gapMs} ms${r.stop ? `; its stop: ${r.stop}` : ""}`,
        )
        .join("\n"),
    );
    // Each time a replica took over (the restarted member follows it) and nothing acknowledged was lost.
    expect(results.filter((r) => r.after === r.primary || r.lost > 0)).toEqual([]);
    // A deleted primary (its preStop hook runs) handed over before it stopped; a killed one could not.
    expect(results.filter((r) => r.how === "deleted" && !r.stop.startsWith("handed over to"))).toEqual([]);
  }, 600_000);

  it("a replica the Sentinels had not seen when they failed over leaves the demoted primary for the promoted one", async () => {
    const primary = await waitAgreed("a primary before the case");
    await waitReplicasInSync(primary);
    await waitReplicasEligible();
    const [promotable, unseen] = ORDINALS.filter((o) => o !== primary) as [number, number];
    // `unseen` becomes a member the Sentinels do not know, as a new pod is: its server stops and
    // every Sentinel forgets the replicas, then learns again of the one its primary still has.
    await at(unseen).redis.stop();
    for (const o of ORDINALS) sentinelCli(o, "sentinel", "reset", "onto-primary");
    await until(
      `every Sentinel knowing redis-${promotable} (eligible), not redis-${unseen}, and its two peers`,
      () =>
        ORDINALS.every((o) => {
          const replicas = sentinelCli(o, "sentinel", "replicas", "onto-primary");
          return (
            replicas.includes(ip(promotable)) &&
            !replicas.includes(ip(unseen)) &&
            /slave-priority\n100/.test(replicas) &&
            /num-other-sentinels\n2/.test(sentinelCli(o, "sentinel", "master", "onto-primary"))
          );
        }),
      60_000,
      all(),
    );
    // The primary dies as the unseen member starts: it follows the primary the Sentinels still
    // name, and they promote the other replica without knowing of it.
    await at(primary).redis.kill();
    at(unseen).redis.start();
    expect(await waitAgreed("the known replica promoted", (o) => o !== primary)).toBe(promotable);
    const failedOverAt = Date.now();
    // The old primary comes back as a replica of the promoted one; the unseen member's link to it
    // comes up: the chain unseen -> old primary -> promoted, which only the unseen member can mend.
    at(primary).redis.start();
    await until(
      `redis-${unseen} replicating from the promoted redis-${promotable}`,
      () =>
        new RegExp(`^master_host:${ip(promotable).replace(/\./g, "\\.")}\r?$`, "m").test(
          redisCli(unseen, "info", "replication"),
        ),
      90_000,
      all(),
    );
    const movedMs = Date.now() - failedOverAt;
    await waitReplicasInSync(promotable);
    redisCli(promotable, "set", "after-chain", "1");
    expect(redisCli(promotable, "wait", "2", "5000")).toBe("2");
    expect(redisCli(unseen, "get", "after-chain")).toBe("1");
    const moved = at(unseen)
      .redis.logTail(200)
      .split("\n")
      .filter((l) => l.startsWith("following "));
    expect(moved.length, "the unseen member moved by itself").toBeGreaterThan(0);
    console.log(
      `[programs] unseen replica redis-${unseen}: moved to redis-${promotable} ${(movedMs / 1000).toFixed(1)} s after the failover (${moved.join(" | ")})`,
    );
  }, 300_000);
});
