// What the operator asks of Postgres members, over SQL with the platform's generated superuser
// credentials (pg, one short connection per question): what a member is and how far its WAL goes,
// promote a standby (pg_promote), make a primary stop taking writes before a switchover, and keep
// a replication slot for every member on the primary. No pods/exec: the operator reaches the pods'
// addresses like any client of the database.
import pg from "pg";
import { POSTGRES } from "../../render/index.js";
import { parseLsn, type SqlView } from "./decisions.js";

export interface Credentials {
  user: string;
  password: string;
}

/** How the operator talks to one member; an interface so the controller can be driven in tests. */
export interface MemberSql {
  observe(host: string): Promise<SqlView | undefined>;
  promote(host: string): Promise<number>;
  /** Makes the primary refuse writes and ends its client sessions; resolves to its WAL position then. */
  stopWrites(host: string): Promise<bigint>;
  resumeWrites(host: string): Promise<void>;
  /** Creates the physical replication slots missing on the primary; resolves to those made. */
  ensureSlots(host: string, slots: readonly string[]): Promise<string[]>;
}

const CONNECT_TIMEOUT_MS = 1_500;
const QUERY_TIMEOUT_MS = 5_000;
const PROMOTE_WAIT_SECONDS = 30;
const PROMOTE_CONNECT_TIMEOUT_MS = 10_000;

const OBSERVE = `
SELECT pg_is_in_recovery() AS in_recovery,
  CASE WHEN pg_is_in_recovery() THEN pg_last_wal_receive_lsn()::text ELSE pg_current_wal_lsn()::text END AS received,
  pg_last_wal_replay_lsn()::text AS replay,
  EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming') AS streaming,
  CASE WHEN pg_is_in_recovery() THEN (SELECT timeline_id FROM pg_control_checkpoint())
    ELSE ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int END AS timeline`;

const TIMELINE = `SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int AS timeline`;

export class PgMemberSql implements MemberSql {
  constructor(private readonly credentials: () => Credentials | undefined) {}

  private async with<T>(
    host: string,
    run: (client: pg.Client) => Promise<T>,
    queryTimeoutMs = QUERY_TIMEOUT_MS,
    connectTimeoutMs = CONNECT_TIMEOUT_MS,
  ): Promise<T> {
    const creds = this.credentials();
    if (!creds) throw new Error(`no credentials in Secret ${POSTGRES.secret}`);
    const client = new pg.Client({
      host,
      port: POSTGRES.port,
      user: creds.user,
      password: creds.password,
      database: "postgres",
      application_name: "onto-operator",
      connectionTimeoutMillis: connectTimeoutMs,
      query_timeout: queryTimeoutMs,
    });
    // A connection that breaks after connecting reports here; the query in flight fails with it.
    client.on("error", () => undefined);
    await client.connect();
    try {
      return await run(client);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  async observe(host: string): Promise<SqlView | undefined> {
    try {
      return await this.with(host, async (c) => {
        const row = (await c.query(OBSERVE)).rows[0] as
          | {
              in_recovery: boolean;
              received: string | null;
              replay: string | null;
              streaming: boolean;
              timeline: number;
            }
          | undefined;
        if (!row) return undefined;
        return {
          inRecovery: row.in_recovery,
          receivedLsn: parseLsn(row.received),
          replayLsn: parseLsn(row.replay),
          streaming: row.streaming,
          timeline: Number(row.timeline),
        };
      });
    } catch {
      return undefined; // not answering is an observation, not an error
    }
  }

  async promote(host: string): Promise<number> {
    return this.with(
      host,
      async (c) => {
        const done = (await c.query(`SELECT pg_promote(true, ${PROMOTE_WAIT_SECONDS}) AS done`)).rows[0] as
          { done: boolean } | undefined;
        if (!done?.done) throw new Error(`pg_promote did not finish within ${PROMOTE_WAIT_SECONDS}s`);
        // The new timeline reaches the control file at the next checkpoint; until then a former
        // primary's pg_rewind sees one timeline and rewinds nothing (it then never streams).
        await c.query("CHECKPOINT");
        // A member fenced for a switchover earlier still has writes off in its own settings.
        await c.query("ALTER SYSTEM RESET default_transaction_read_only");
        await c.query("SELECT pg_reload_conf()");
        const row = (await c.query(TIMELINE)).rows[0] as { timeline: number } | undefined;
        return Number(row?.timeline ?? 0);
      },
      (PROMOTE_WAIT_SECONDS + 10) * 1000,
      // Not a probe: on a loaded node a connection may take longer than an observation waits,
      // and a promotion given up at connect leaves a switchover's old primary already stopped.
      PROMOTE_CONNECT_TIMEOUT_MS,
    );
  }

  async stopWrites(host: string): Promise<bigint> {
    return this.with(host, async (c) => {
      await c.query("ALTER SYSTEM SET default_transaction_read_only = on");
      await c.query("SELECT pg_reload_conf()");
      await c.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
      );
      const row = (await c.query("SELECT pg_current_wal_lsn()::text AS lsn")).rows[0] as
        { lsn: string } | undefined;
      const lsn = parseLsn(row?.lsn);
      if (lsn === undefined) throw new Error("no WAL position from the primary");
      return lsn;
    });
  }

  async resumeWrites(host: string): Promise<void> {
    await this.with(host, async (c) => {
      await c.query("ALTER SYSTEM RESET default_transaction_read_only");
      await c.query("SELECT pg_reload_conf()");
    });
  }

  async ensureSlots(host: string, slots: readonly string[]): Promise<string[]> {
    if (slots.length === 0) return [];
    return this.with(host, async (c) => {
      const result = await c.query(
        `SELECT s.name, pg_create_physical_replication_slot(s.name, true) IS NOT NULL AS made
           FROM unnest($1::text[]) AS s(name)
          WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = s.name)`,
        [slots],
      );
      return (result.rows as { name: string }[]).map((r) => r.name);
    });
  }
}

/** The slot a member streams through (the entrypoint names it the same way). */
export const slotOf = (podName: string): string =>
  `${POSTGRES.slotPrefix}${podName.slice(podName.lastIndexOf("-") + 1)}`;
