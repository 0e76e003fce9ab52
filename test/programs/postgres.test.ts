// The rendered Postgres StatefulSet run with Debian's PostgreSQL 15 as processes on loopback (one
// address per pod): the scripts need only the binaries and the env the pod sets, and they survive
// what a kubelet and a real cluster do to them (fsGroup passes, standbys down for a while, clones
// killed half-way). The real-node suite proves the same in pods.
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveSpec } from "../../src/api/index.js";
import { reloadsDue } from "../../src/controllers/postgres-ha/reloads.js";
import { KeptConnections } from "../../src/controllers/postgres-ha/kept-connections.js";
import { PgMemberSql } from "../../src/controllers/postgres-ha/sql.js";
import { releaseFor } from "../../src/release/index.js";
import { POSTGRES, renderPlatform, type RenderedObject } from "../../src/render/index.js";
import { PodProcess, find, secretValue, systemUser, until, type Translation } from "./pod-process.js";

const NS = "onto-programs";
const BIN = "/usr/lib/postgresql/15/bin";
const ip = (ordinal: number): string => `127.0.2.${10 + ordinal}`;
let root = "";
let objects: RenderedObject[] = [];
const members: PodProcess[] = [];

function renderObjects(storage?: string): RenderedObject[] {
  const spec = resolveSpec({
    version: "1.5.0",
    infrastructure: { postgres: { replicas: 3, ...(storage ? { storage } : {}) } },
  });
  return renderPlatform({
    platform: { name: "onto-programs", namespace: NS, uid: "00000000-0000-0000-0000-000000000001" },
    spec,
    release: releaseFor(spec.version),
    capabilities: { serviceMonitor: false, verticalPodAutoscaler: false },
    generateSecret: ({ key, length }) => `${key}-secret-value-0123456789abcdefghij`.slice(0, length),
  });
}

/**
 * Member `ordinal`, with the read-write Service reaching member `primary`; `faults` replace parts
 * of its scripts (a program that fails where the real one would, on a loaded node).
 */
function member(
  ordinal: number,
  primary = 0,
  faults: readonly Translation[] = [],
  apiServer?: { host: string; port: number },
): PodProcess {
  return new PodProcess({
    objects,
    workload: "postgres",
    container: "postgres",
    ordinal,
    dir: join(root, `postgres-${ordinal}`),
    user: systemUser("postgres"),
    binPath: BIN,
    ...(apiServer ? { apiServer } : {}),
    translations: [
      // The harness has no cluster DNS: the headless Service's answer is the members' addresses,
      // and the read-write Service is the member the operator would label primary.
      [
        `getent ahostsv4 postgres-headless.${NS}.svc | awk '{print $1}' | sort -u`,
        `printf '%s\\n' ${[0, 1, 2].map(ip).join(" ")}`,
      ],
      [`getent ahostsv4 "$HOSTNAME" | awk 'NR == 1 {print $1}'`, `echo ${ip(ordinal)}`],
      [`host=postgres.${NS}.svc`, `host=${ip(primary)}`],
      ["listen_addresses=*", `listen_addresses=${ip(ordinal)}`],
      ["127.0.0.1", ip(ordinal)],
      // The harness cannot write a gigabyte of WAL quickly: with no WAL kept for standbys beyond
      // what their slots hold, a standby that is down sees its segments recycled at once.
      ["wal_keep_size=1GB", "wal_keep_size=0"],
      ...faults,
    ],
  });
}

/** Runs SQL as the platform's user on `host` (a member's address); returns the trimmed output. */
function sql(through: PodProcess, host: string, query: string): string {
  return through
    .exec([
      "sh",
      "-c",
      'PGPASSWORD="$POSTGRES_PASSWORD" psql -v ON_ERROR_STOP=1 -h "$1" -U "$POSTGRES_USER" -d "$POSTGRES_DB" -tAc "$2"',
      "sql",
      host,
      query,
    ])
    .trim();
}

const isPrimary = (ordinal: number): boolean =>
  sql(m(ordinal), ip(ordinal), "SELECT pg_is_in_recovery()") === "f";

const m = (ordinal: number): PodProcess => {
  const found = members[ordinal];
  if (!found) throw new Error(`no member ${ordinal}`);
  return found;
};
const ready = (p: PodProcess): boolean => p.running && p.probe("readinessProbe");
/** What a member printed from its start on (its log file holds every start's output). */
const startOutput = (p: PodProcess, from: number): string => readFileSync(p.logFile, "utf8").slice(from);
const logLength = (p: PodProcess): number =>
  existsSync(p.logFile) ? readFileSync(p.logFile, "utf8").length : 0;
const waitReady = (p: PodProcess, timeoutMs = 60_000): Promise<void> =>
  until(`${p.podName} Ready`, () => ready(p), timeoutMs, members);

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "onto-postgres-"));
  chmodSync(root, 0o755);
  objects = renderObjects();
  for (const ordinal of [0, 1, 2]) members.push(member(ordinal));
  m(0).start();
  await waitReady(m(0));
  m(1).start();
  m(2).start();
  await waitReady(m(1), 90_000);
  await waitReady(m(2), 90_000);
}, 240_000);

afterAll(async () => {
  await Promise.all(members.map((p) => p.stop(10_000)));
  if (root && !process.env.ONTO_KEEP_PROGRAMS) rmSync(root, { recursive: true, force: true });
});

describe("Postgres rendered for a pod, run with the real server", () => {
  it("initialises the primary itself (no image entrypoint) and streams to each standby through its own slot", async () => {
    expect(
      sql(m(0), ip(0), "SELECT datname FROM pg_database WHERE datname IN ('onto', 'nessie') ORDER BY 1"),
    ).toBe("nessie\nonto");
    expect(sql(m(0), ip(0), "SELECT slot_name || ' ' || active FROM pg_replication_slots ORDER BY 1")).toBe(
      "standby_1 true\nstandby_2 true",
    );
    sql(
      m(0),
      ip(0),
      "CREATE TABLE notes (id int PRIMARY KEY, body text); INSERT INTO notes VALUES (1, 'first')",
    );
    for (const standby of [m(1), m(2)]) {
      await until(
        `row 1 on ${standby.podName}`,
        () => sql(standby, ip(members.indexOf(standby)), "SELECT count(*) FROM notes WHERE id = 1") === "1",
        30_000,
        members,
      );
    }
  });

  it("restarts a standby after the kubelet's fsGroup pass made its volume group-writable", async () => {
    await m(1).stop();
    m(1).fsGroupPass("data");
    m(1).start();
    await waitReady(m(1));
    sql(m(0), ip(0), "INSERT INTO notes VALUES (2, 'after the fsGroup pass')");
    await until(
      "row 2 on postgres-1",
      () => sql(m(1), ip(1), "SELECT count(*) FROM notes WHERE id = 2") === "1",
      30_000,
      members,
    );
    expect(m(1).logTail(200)).not.toContain("invalid permissions");
  });

  it("catches up a standby that was down while the primary recycled its WAL (the slot kept it)", async () => {
    await m(2).stop();
    sql(m(0), ip(0), "INSERT INTO notes SELECT g, repeat('x', 200) FROM generate_series(100, 200099) g");
    for (let i = 0; i < 3; i++) sql(m(0), ip(0), "SELECT pg_switch_wal(); CHECKPOINT");
    expect(
      sql(m(0), ip(0), "SELECT wal_status FROM pg_replication_slots WHERE slot_name = 'standby_2'"),
    ).toMatch(/^(reserved|extended)$/);
    m(2).start();
    await waitReady(m(2));
    await until(
      "the rows on postgres-2",
      () => sql(m(2), ip(2), "SELECT count(*) FROM notes") === "200002",
      60_000,
      members,
    );
    expect(m(2).logTail(200)).not.toContain("has already been removed");
  });

  it("keeps a standby that cannot stream out of Ready (postgres-ro), though it accepts connections", async () => {
    await m(0).stop();
    await until("postgres-1 not Ready without its primary", () => !ready(m(1)), 60_000, members);
    expect(m(1).probe("livenessProbe")).toBe(true);
    m(0).start();
    await waitReady(m(0));
    await waitReady(m(1));
  });

  it("recovers a standby whose clone was killed half-way", async () => {
    // Enough data that the clone takes a few seconds.
    sql(
      m(0),
      ip(0),
      "CREATE TABLE bulk AS SELECT g AS id, repeat('y', 500) AS body FROM generate_series(1, 400000) g",
    );
    await m(2).stop();
    rmSync(join(m(2).volume("data"), "pgdata"), { recursive: true, force: true });
    m(2).start();
    // Killed at the worst moment: the copy already holds PG_VERSION (it looks like a data
    // directory) but not yet the manifest pg_basebackup writes last.
    const copies = (file: string): string[] =>
      readdirSync(m(2).volume("data"))
        .map((d) => join(m(2).volume("data"), d, file))
        .filter((f) => existsSync(f));
    await until("a clone under way", () => copies("PG_VERSION").length > 0, 60_000, members, 10);
    await m(2).kill();
    expect(copies("backup_manifest")).toEqual([]);
    m(2).start();
    await waitReady(m(2));
    sql(m(0), ip(0), "INSERT INTO notes VALUES (3, 'after the killed clone')");
    await until(
      "row 3 on postgres-2",
      () => sql(m(2), ip(2), "SELECT count(*) FROM notes WHERE id = 3") === "1",
      30_000,
      members,
    );
  });

  it("after a failover to postgres-1, all members stopped and started at once (Parallel): postgres-1 goes on as the primary, the others follow it", async () => {
    // The failover as the operator carries it out: the old primary stopped, a standby promoted
    // and checkpointed, and from then on the read-write Service reaches it.
    await m(0).stop();
    sql(m(1), ip(1), "SELECT pg_promote(true, 30)");
    sql(m(1), ip(1), "CHECKPOINT");
    sql(m(1), ip(1), "INSERT INTO notes VALUES (4, 'on the new timeline')");
    await m(2).stop();
    for (const ordinal of [0, 2]) members[ordinal] = member(ordinal, 1);
    m(2).start();
    await waitReady(m(2), 90_000);
    // The new primary not answering for a while (a loaded node): the former primary sees a member
    // on a newer timeline and waits for the primary instead of going on as one.
    await m(1).stop();
    m(0).start();
    await until(
      "postgres-0 waiting: a member is on a newer timeline",
      () => m(0).logTail(50).includes("a member is on a newer timeline"),
      60_000,
      members,
    );
    expect(() => isPrimary(0)).toThrow(); // not accepting connections: it has not started a server
    members[1] = member(1, 1);
    m(1).start();
    await waitReady(m(0), 90_000); // found postgres-1, rewound onto it, streams
    await waitReady(m(2), 90_000);
    expect(isPrimary(1)).toBe(true);

    // The platform deleted and created again on the same volumes: every member stops, then all
    // start at the same moment.
    await Promise.all(members.map((p) => p.stop()));
    for (const p of members) p.start();
    let twoPrimaries = 0;
    let samples = 0;
    await until(
      "postgres-1 the primary and both others Ready (streaming from it)",
      () => {
        samples++;
        const writable = [0, 1, 2].filter((o) => {
          try {
            return isPrimary(o);
          } catch {
            return false; // not accepting connections yet
          }
        });
        if (writable.length > 1) twoPrimaries++;
        return writable.join() === "1" && ready(m(0)) && ready(m(2));
      },
      120_000,
      members,
    );
    console.log(
      `[programs] all members started at once: ${twoPrimaries} of ${samples} samples with two primaries`,
    );
    expect(twoPrimaries, `moments with two primaries in ${samples} samples`).toBe(0);
    for (const ordinal of [0, 2])
      await until(
        `row 4 on postgres-${ordinal}`,
        () => sql(m(ordinal), ip(ordinal), "SELECT count(*) FROM notes WHERE id = 4") === "1",
        30_000,
        members,
      );
  });

  it("a former primary whose peers are listed but do not answer keeps looking instead of starting as the primary", async () => {
    // The first seconds of a pod whose lookups or peers' replies do not get through look like this:
    // the headless Service lists the others, none answers. Starting as the primary then made a
    // second writable primary beside a standby promoted a moment before.
    await Promise.all(members.map((p) => p.stop()));
    m(1).start();
    await until(
      "postgres-1 looking again: other members listed, none answers",
      () => m(1).logTail(50).includes("none answers yet"),
      60_000,
      members,
    );
    const t = Date.now();
    while (Date.now() - t < 10_000) {
      expect(() => isPrimary(1), "postgres-1 serving while its peers do not answer").toThrow();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    // The standbys come back: they answer in recovery, none is the primary, so after its second
    // look postgres-1 goes on as the primary and they follow it.
    m(0).start();
    m(2).start();
    await waitReady(m(1), 90_000);
    expect(isPrimary(1)).toBe(true);
    await waitReady(m(0), 90_000);
    await waitReady(m(2), 90_000);
  }, 240_000);

  it("takes a larger volume's max_slot_wal_keep_size from the rewritten file when the operator reloads it, without a restart", async () => {
    const show = (o: number): string => sql(m(o), ip(o), "SHOW max_slot_wal_keep_size");
    const startedAt = (o: number): string => sql(m(o), ip(o), "SELECT pg_postmaster_start_time()");
    // Reloadable: a server re-reads it on SIGHUP (pg_reload_conf()), no restart needed.
    expect(sql(m(1), ip(1), "SELECT context FROM pg_settings WHERE name = 'max_slot_wal_keep_size'")).toBe(
      "sighup",
    );
    const before = [0, 1, 2].map((o) => ({ value: show(o), started: startedAt(o) }));
    expect(before.map((b) => b.value)).toEqual(["5GB", "5GB", "5GB"]); // a quarter of 20Gi

    // The spec's storage doubled: the kubelet swaps the mounted ConfigMap file for the new one.
    const grown = (
      find(renderObjects("40Gi"), "ConfigMap", "postgres-config") as { data?: Record<string, string> }
    ).data?.["reloadable.conf"];
    expect(grown).toContain("max_slot_wal_keep_size = '10240MB'");
    for (const p of members) {
      const file = join(p.volume("scripts"), "reloadable.conf");
      writeFileSync(`${file}.new`, grown ?? "");
      renameSync(`${file}.new`, file);
    }
    // The file alone changes nothing while the server runs.
    expect([0, 1, 2].map(show)).toEqual(["5GB", "5GB", "5GB"]);

    // What the operator does, with its own module: observe every member, decide, reload.
    const password = secretValue(objects, POSTGRES.secret, POSTGRES.passwordKey);
    const memberSql = new PgMemberSql(() => ({ user: POSTGRES.user, password }));
    const views = await Promise.all(
      [0, 1, 2].map(async (o) => ({
        name: `postgres-${o}`,
        pod: "present" as const,
        nodeReady: true,
        sql: await memberSql.observe(ip(o)),
      })),
    );
    for (const v of views)
      expect(v.sql?.fileSettings).toEqual([
        expect.objectContaining({
          name: "max_slot_wal_keep_size",
          file: "10240MB",
          running: "5120",
          unit: "MB",
        }),
      ]);
    const due = reloadsDue({ members: views, lastReloadAt: new Map(), now: new Date(), intervalMs: 60_000 });
    console.log(`[programs] reloads due: ${JSON.stringify(due)}`);
    expect(due.map((r) => r.member)).toEqual(["postgres-0", "postgres-1", "postgres-2"]);
    for (const r of due) await memberSql.reload(ip(Number(r.member.slice(-1))));

    for (const o of [0, 1, 2])
      await until(`postgres-${o} runs the new value`, () => show(o) === "10GB", 10_000, members);
    const after = [0, 1, 2].map((o) => ({ value: show(o), started: startedAt(o) }));
    console.log(`[programs] before ${JSON.stringify(before)}; after ${JSON.stringify(after)}`);
    expect(after.map((a) => a.started)).toEqual(before.map((b) => b.started));
    // Once taken, nothing is due any more.
    const again = await Promise.all(
      [0, 1, 2].map(async (o) => ({
        name: `postgres-${o}`,
        pod: "present" as const,
        nodeReady: true,
        sql: await memberSql.observe(ip(o)),
      })),
    );
    expect(
      reloadsDue({ members: again, lastReloadAt: new Map(), now: new Date(), intervalMs: 60_000 }),
    ).toEqual([]);
  });

  it("looks at a member over one kept connection, and connects afresh when the server ended it or after a reload", async () => {
    const password = secretValue(objects, POSTGRES.secret, POSTGRES.passwordKey);
    const looks = new KeptConnections();
    const memberSql = new PgMemberSql(() => ({ user: POSTGRES.user, password }), undefined, looks);
    const o = [0, 1, 2].find(isPrimary) ?? 0;
    const sessions = (): string[] =>
      sql(
        m(o),
        ip(o),
        "SELECT string_agg(pid::text, ',' ORDER BY pid) FROM pg_stat_activity WHERE application_name = 'onto-operator'",
      )
        .split(",")
        .filter(Boolean);
    try {
      for (let i = 0; i < 5; i++) expect((await memberSql.observe(ip(o)))?.inRecovery).toBe(false);
      const [kept, ...more] = sessions();
      expect(more, "five looks, one session").toEqual([]);
      expect(looks.size).toBe(1);
      // The server ends the session (as a switchover's stop of writes does): the next look still answers.
      sql(m(o), ip(o), `SELECT pg_terminate_backend(${kept})`);
      expect((await memberSql.observe(ip(o)))?.inRecovery).toBe(false);
      const [second] = sessions();
      expect(second).toBeDefined();
      expect(second).not.toBe(kept);
      // After a reload the next look connects afresh (it sees the certificate served now).
      await memberSql.reload(ip(o));
      expect(looks.size).toBe(0);
      expect((await memberSql.observe(ip(o)))?.inRecovery).toBe(false);
      const [third] = sessions();
      expect(third).not.toBe(second);
    } finally {
      looks.closeAll();
    }
  });

  it("shuts the primary down over SQL as the operator does on a lost node: it stops, its standbys hold its last write", async () => {
    const password = secretValue(objects, POSTGRES.secret, POSTGRES.passwordKey);
    const memberSql = new PgMemberSql(() => ({ user: POSTGRES.user, password }));
    const primary = [0, 1, 2].find(isPrimary) ?? -1;
    const standbys = [0, 1, 2].filter((o) => o !== primary);
    sql(m(primary), ip(primary), "INSERT INTO notes VALUES (5, 'the last write before the shutdown')");
    await memberSql.shutDown(ip(primary));
    // Sessions are refused from the start of the shutdown; the port closes once the server exited.
    await until(`postgres-${primary} exited (port closed)`, () => memberSql.exited(ip(primary)), 30_000, []);
    await until(`postgres-${primary} stopped`, () => !m(primary).running, 10_000, []);
    expect(await memberSql.observe(ip(primary))).toBeUndefined();
    expect(m(primary).logTail(30)).toContain("fast shutdown request");
    // A fast shutdown hands the connected standbys every WAL record before the server exits.
    for (const o of standbys)
      await until(
        `row 5 on postgres-${o}`,
        () => sql(m(o), ip(o), "SELECT count(*) FROM notes WHERE id = 5") === "1",
        10_000,
        members,
      );
    m(primary).start();
    await waitReady(m(primary), 90_000);
    expect(isPrimary(primary)).toBe(true);
    expect(await memberSql.exited(ip(primary))).toBe(false);
  });

  it("a standby killed with WAL past a promotion's fork point rewinds onto the new primary instead of cloning again", async () => {
    const primary = [0, 1, 2].find(isPrimary) ?? -1;
    const [behind, ahead] = [0, 1, 2].filter((o) => o !== primary) as [number, number];
    sql(m(primary), ip(primary), "CREATE TABLE forks (id int PRIMARY KEY)");
    for (const o of [behind, ahead])
      await until(
        `the table on postgres-${o}`,
        () => sql(m(o), ip(o), "SELECT count(*) FROM pg_tables WHERE tablename = 'forks'") === "1",
        30_000,
        members,
      );
    // `behind` stops; `ahead` receives a write it never gets, and dies without a clean shutdown.
    await m(behind).stop();
    sql(m(primary), ip(primary), "INSERT INTO forks VALUES (6)");
    await until(
      `row 6 on postgres-${ahead}`,
      () => sql(m(ahead), ip(ahead), "SELECT count(*) FROM forks WHERE id = 6") === "1",
      30_000,
      members,
    );
    await m(ahead).kill();
    await m(primary).stop();
    // `behind` comes back as a standby (no member answers as the primary) and is promoted, as
    // the operator does when it is the only standby that answers.
    members[behind] = member(behind, behind);
    m(behind).start();
    await until(
      `postgres-${behind} accepting connections`,
      () => {
        try {
          return sql(m(behind), ip(behind), "SELECT pg_is_in_recovery()") === "t";
        } catch {
          return false;
        }
      },
      90_000,
      members,
    );
    sql(m(behind), ip(behind), "SELECT pg_promote(true, 30)");
    sql(m(behind), ip(behind), "CHECKPOINT");
    sql(m(behind), ip(behind), "INSERT INTO forks VALUES (7)");
    // `ahead` starts as the operator's restart makes it start: its data directory was not shut
    // down cleanly and holds row 6 past the fork point.
    members[ahead] = member(ahead, behind);
    m(ahead).start();
    await waitReady(m(ahead), 120_000);
    const start = m(ahead).logTail(200);
    expect(start, start).toContain("pg_rewind: Done!");
    expect(start, start).not.toContain("cloning again");
    expect(sql(m(ahead), ip(ahead), "SELECT count(*) FROM forks WHERE id = 7")).toBe("1");
    expect(sql(m(ahead), ip(ahead), "SELECT count(*) FROM forks WHERE id = 6")).toBe("0");
    // The former primary rejoins too, so the file ends with every member running.
    members[primary] = member(primary, behind);
    m(primary).start();
    await waitReady(m(primary), 120_000);
  });

  it("a former primary whose pg_rewind stops half-way, and whose clone then fails too, clones again at its next start instead of crash-looping", async () => {
    const primary = [0, 1, 2].find(isPrimary) ?? -1;
    const [promoted, other] = [0, 1, 2].filter((o) => o !== primary) as [number, number];
    sql(m(primary), ip(primary), "CREATE TABLE rewinds (id int PRIMARY KEY)");
    await until(
      `the table on postgres-${promoted}`,
      () =>
        sql(m(promoted), ip(promoted), "SELECT count(*) FROM pg_tables WHERE tablename = 'rewinds'") === "1",
      30_000,
      members,
    );
    // The primary lost (killed, no clean shutdown) and a standby promoted, as the operator does;
    // the other standby follows the new primary.
    await m(primary).kill();
    sql(m(promoted), ip(promoted), "SELECT pg_promote(true, 30)");
    sql(m(promoted), ip(promoted), "CHECKPOINT");
    sql(m(promoted), ip(promoted), "INSERT INTO rewinds VALUES (8)");
    await m(other).stop();
    members[other] = member(other, promoted);
    m(other).start();
    await waitReady(m(other), 120_000);
    // The former primary's first start: its pg_rewind stops half-way (the control file is among
    // what it had rewritten: the directory is unusable), and its clone fails (the new primary
    // stopped answering meanwhile), as in a real-node run on a loaded machine.
    members[primary] = member(primary, promoted, [
      [
        `pg_rewind -D "$PGDATA"`,
        `sh -c 'rm -f "$PGDATA/global/pg_control"; echo "pg_rewind: stopped half-way (fault)"; exit 1' pg_rewind`,
      ],
      ["pg_basebackup -h", `sh -c 'echo "pg_basebackup: failed (fault)"; exit 1' pg_basebackup`],
    ]);
    const from = logLength(m(primary));
    m(primary).start();
    await until(`postgres-${primary}'s first start over`, () => !m(primary).running, 90_000, members);
    const first = startOutput(m(primary), from);
    expect(first, first).toContain("pg_basebackup: failed (fault)");
    expect(first, first).toContain("the data directory is set aside");
    // The next start (the kubelet's restart), with the programs working: a clone, not the
    // half-rewound directory.
    members[primary] = member(primary, promoted);
    const next = logLength(m(primary));
    m(primary).start();
    await waitReady(m(primary), 120_000);
    const second = startOutput(m(primary), next);
    expect(second, second).not.toContain("pg_rewind");
    expect(second, second).toContain(`cloning the data directory from ${ip(promoted)}`);
    expect(sql(m(primary), ip(primary), "SELECT count(*) FROM rewinds WHERE id = 8")).toBe("1");
    expect(existsSync(join(m(primary).volume("data"), "pgdata.diverged", "PG_VERSION"))).toBe(true);
  });

  it("a member whose starts on its data directory never become Ready clones again from the primary after three", async () => {
    const primary = [0, 1, 2].find(isPrimary) ?? -1;
    const standby = [0, 1, 2].find((o) => o !== primary) ?? -1;
    sql(m(primary), ip(primary), "INSERT INTO notes VALUES (9, 'before the standby broke')");
    await until(
      `row 9 on postgres-${standby}`,
      () => sql(m(standby), ip(standby), "SELECT count(*) FROM notes WHERE id = 9") === "1",
      30_000,
      members,
    );
    await m(standby).stop();
    // A control file nothing can read: every start stops on it (the script's pg_controldata).
    writeFileSync(join(m(standby).volume("data"), "pgdata", "global", "pg_control"), "");
    for (let start = 1; start <= 3; start++) {
      members[standby] = member(standby, primary);
      const from = logLength(m(standby));
      m(standby).start();
      await until(`postgres-${standby}'s start ${start} over`, () => !m(standby).running, 60_000, members);
      const output = startOutput(m(standby), from);
      expect(output, output).toContain("pg_controldata");
      expect(output, output).not.toContain("cloning again");
    }
    members[standby] = member(standby, primary);
    const from = logLength(m(standby));
    m(standby).start();
    await waitReady(m(standby), 120_000);
    const log = startOutput(m(standby), from);
    expect(log, log).toContain("3 starts on this data directory in a row never became Ready: cloning again");
    expect(sql(m(standby), ip(standby), "SELECT count(*) FROM notes WHERE id = 9")).toBe("1");
    // Ready: the count begins again.
    expect(existsSync(join(m(standby).volume("data"), "starts-since-ready"))).toBe(false);
  });

  it("a primary cut off from the API server and from every other member stops itself at a readiness check 10 s after the first that found it so, and does not start as the primary while cut off", async () => {
    const primary = [0, 1, 2].find(isPrimary) ?? -1;
    const others = [0, 1, 2].filter((o) => o !== primary);
    const data = m(primary).volume("data");
    // The other members stopped, the API server still answering: no partition, nothing stops.
    await Promise.all(others.map((o) => m(o).stop()));
    for (let i = 0; i < 3; i++) {
      expect(m(primary).probe("readinessProbe"), "Ready while the API server answers").toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 6_000));
    }
    expect(isPrimary(primary)).toBe(true);
    // Cut off: the API server's address no longer answers either (nothing listens on port 1). The
    // same member, probed with that address.
    const cutOff = member(primary, primary, [], { host: "127.0.0.1", port: 1 });
    const from = logLength(m(primary));
    expect(cutOff.probe("readinessProbe"), "still Ready at the first check").toBe(true);
    expect(existsSync(join(data, "isolated-since")), "the first check found it cut off").toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    // The check 10 s later stops it, with a fast shutdown.
    expect(cutOff.probe("readinessProbe")).toBe(false);
    await until(`postgres-${primary} stopped itself`, () => !m(primary).running, 30_000, members);
    expect(readFileSync(join(data, "fenced.log"), "utf8")).toContain("stopped itself (fast shutdown)");
    expect(startOutput(m(primary), from)).toContain("received fast shutdown request");
    members[primary] = cutOff;
    // Started again while still cut off: past the minute a former primary waits for its peers it
    // still does not start as the primary.
    const again = logLength(m(primary));
    m(primary).start();
    await until(
      `postgres-${primary} refusing to start as the primary while cut off`,
      () => startOutput(m(primary), again).includes("not starting as the primary"),
      120_000,
      members,
    );
    const said = startOutput(m(primary), again);
    expect(said, said).toContain("before this start: ");
    expect(said, said).toContain("stopped itself");
    expect(() => isPrimary(primary), "serving while cut off").toThrow();
    expect(existsSync(join(data, "fenced.log")), "said once").toBe(false);
    // The partition heals: the API server answers and the other members come back; it goes on.
    await m(primary).stop();
    members[primary] = member(primary, primary);
    m(primary).start();
    for (const o of others) m(o).start();
    await waitReady(m(primary), 120_000);
    expect(isPrimary(primary)).toBe(true);
    for (const o of others) await waitReady(m(o), 120_000);
  }, 360_000);
});
