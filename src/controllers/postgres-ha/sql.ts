// What the operator asks of Postgres members, over SQL with the platform's generated superuser
// credentials (pg; a look over a connection kept from one look to the next, every other question
// over a short connection of its own): what a member is and how far its WAL goes,
// promote a standby (pg_promote), make a primary stop taking writes before a switchover, shut down
// a primary whose node is lost, keep a replication slot for every member on the primary, and make a
// member read its configuration files again (pg_reload_conf). No pods/exec: the operator reaches
// the pods' addresses like any client of the database.
import { connect } from "node:net";
import { TLSSocket } from "node:tls";
import pg from "pg";
import { POSTGRES } from "../../render/index.js";
import { parseLsn, type FileSetting, type SqlView } from "./decisions.js";
import { connectionKey, type KeptConnections } from "./kept-connections.js";

export interface Credentials {
  user: string;
  password: string;
}

/**
 * How the operator verifies a member that serves TLS: against the platform CA. Only the chain: the
 * operator reaches a member at the address the API server gives for its pod, and a user's
 * certificate that does not name the Services (which the platform's clients would report) must not
 * make every member look down to the failover logic.
 */
export interface MemberTls {
  ca: string;
  /**
   * Whether the members are meant to serve TLS (global.tlsEnabled): spoken to over TLS first. When
   * not, plaintext first; TLS then only reaches a member that still requires it (a roll that turns
   * TLS off), so a platform whose certificate serves only its Ingress costs one connection a look.
   */
  preferred: boolean;
}

/** How the operator talks to one member; an interface so the controller can be driven in tests. */
export interface MemberSql {
  observe(host: string): Promise<SqlView | undefined>;
  /** pg_promote() and waits for it; resolves to the new timeline. */
  promote(host: string): Promise<number>;
  /** CHECKPOINT: a promoted member's new timeline reaches its control file (pg_rewind reads it there). */
  checkpoint(host: string): Promise<void>;
  /** Makes the primary refuse writes and ends its client sessions; resolves to its WAL position then. */
  stopWrites(host: string): Promise<bigint>;
  resumeWrites(host: string): Promise<void>;
  /**
   * Asks the server for a fast shutdown (it ends every session, this one too, and hands connected
   * standbys its last WAL); resolves once asked.
   */
  shutDown(host: string): Promise<void>;
  /**
   * Whether nothing listens at the member's port (its postmaster has exited). A server shutting
   * down already refuses sessions ("the database system is shutting down") while its WAL senders
   * still hand the standbys its shutdown checkpoint; only once the port is closed is that done.
   */
  exited(host: string): Promise<boolean>;
  /** Creates the physical replication slots missing on the primary; resolves to those made. */
  ensureSlots(host: string, slots: readonly string[]): Promise<string[]>;
  /** Makes the member read its configuration files again (pg_reload_conf()). */
  reload(host: string): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 1_500;
const QUERY_TIMEOUT_MS = 5_000;
/** How long a look over a kept connection waits for its answer (a hung server is not answering). */
const LOOK_TIMEOUT_MS = 2_500;
const PROMOTE_WAIT_SECONDS = 30;
const PROMOTE_CONNECT_TIMEOUT_MS = 10_000;

const OBSERVE = `
SELECT pg_is_in_recovery() AS in_recovery,
  CASE WHEN pg_is_in_recovery() THEN pg_last_wal_receive_lsn()::text ELSE pg_current_wal_lsn()::text END AS received,
  pg_last_wal_replay_lsn()::text AS replay,
  EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming') AS streaming,
  CASE WHEN pg_is_in_recovery() THEN (SELECT timeline_id FROM pg_control_checkpoint())
    ELSE ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int END AS timeline`;

// What the configuration files give for each reloadable setting, as they are now (pg_file_settings
// parses them at each query; superuser only), and what the server runs. An entry that does not
// apply (a later one of the same name wins, or its value is invalid) is left out.
const FILE_SETTINGS = `
SELECT f.name, f.setting AS file, s.setting AS running, s.unit, s.source, current_setting(f.name) AS shown
  FROM pg_file_settings f JOIN pg_settings s ON s.name = f.name
 WHERE f.applied AND f.error IS NULL AND f.name = ANY($1::text[])
 ORDER BY f.seqno`;

const TIMELINE = `SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int AS timeline`;

/** What a server answers to a TLS request when it was started without ssl. */
const NO_SSL = /does not support SSL/i;
/** What a server that takes network connections only over TLS answers to a plaintext one (pg_hba.conf). */
const NO_PLAINTEXT = /no encryption/i;

export class PgMemberSql implements MemberSql {
  constructor(
    private readonly credentials: () => Credentials | undefined,
    private readonly tls: () => MemberTls | undefined = () => undefined,
    /** Where looks keep their connections; without it every look opens and closes one. */
    private readonly kept?: KeptConnections,
  ) {}

  /**
   * A connected client, over TLS (verified) or in plaintext: the preferred way first, the other when
   * the member answers that it does not take that one (a member that has not restarted since TLS
   * was turned on or off). Without a certificate, plaintext only.
   */
  private async open(host: string, creds: Credentials, connectTimeoutMs: number, queryTimeoutMs: number) {
    const tls = this.tls();
    const attempt = async (secure: boolean): Promise<pg.Client> => {
      const client = new pg.Client({
        host,
        port: POSTGRES.port,
        user: creds.user,
        password: creds.password,
        database: "postgres",
        application_name: "onto-operator",
        connectionTimeoutMillis: connectTimeoutMs,
        query_timeout: queryTimeoutMs,
        ssl: secure && tls ? { ca: tls.ca, checkServerIdentity: () => undefined } : false,
      });
      // A connection that breaks after connecting reports here; the query in flight fails with it.
      client.on("error", () => undefined);
      try {
        await client.connect();
      } catch (err) {
        await client.end().catch(() => undefined);
        throw err;
      }
      return client;
    };
    if (!tls) return attempt(false);
    const first = tls.preferred;
    try {
      return await attempt(first);
    } catch (err) {
      const refused = first ? NO_SSL : NO_PLAINTEXT;
      if (err instanceof Error && refused.test(err.message)) return attempt(!first);
      throw err;
    }
  }

  private async with<T>(
    host: string,
    run: (client: pg.Client) => Promise<T>,
    queryTimeoutMs = QUERY_TIMEOUT_MS,
    connectTimeoutMs = CONNECT_TIMEOUT_MS,
  ): Promise<T> {
    const creds = this.credentials();
    if (!creds) throw new Error(`no credentials in Secret ${POSTGRES.secret}`);
    const client = await this.open(host, creds, connectTimeoutMs, queryTimeoutMs);
    try {
      return await run(client);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /**
   * What the member is now; undefined when it does not answer. Over the connection kept from the
   * last look when there is one: one that fails otherwise than by timing out (the server ended the
   * session: a switchover's stop of writes, a restart) is replaced by a new connection at once.
   */
  async observe(host: string): Promise<SqlView | undefined> {
    const creds = this.credentials();
    if (!creds) return undefined;
    const tls = this.tls();
    const key = connectionKey([host, creds.user, creds.password, tls?.ca, tls?.preferred]);
    const kept = this.kept?.take(host, key);
    if (kept) {
      try {
        return await look(kept, LOOK_TIMEOUT_MS);
      } catch (err) {
        this.kept?.drop(host);
        if (err instanceof Error && /timeout/i.test(err.message)) return undefined;
      }
    }
    let client: pg.Client;
    try {
      client = await this.open(host, creds, CONNECT_TIMEOUT_MS, QUERY_TIMEOUT_MS);
    } catch {
      return undefined; // not answering is an observation, not an error
    }
    try {
      const view = await look(client, QUERY_TIMEOUT_MS);
      if (this.kept) this.kept.keep(host, key, client);
      else await client.end().catch(() => undefined);
      return view;
    } catch {
      await client.end().catch(() => undefined);
      return undefined;
    }
  }

  async promote(host: string): Promise<number> {
    return this.with(
      host,
      async (c) => {
        const done = (await c.query(`SELECT pg_promote(true, ${PROMOTE_WAIT_SECONDS}) AS done`)).rows[0] as
          { done: boolean } | undefined;
        if (!done?.done) throw new Error(`pg_promote did not finish within ${PROMOTE_WAIT_SECONDS}s`);
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

  // The new timeline reaches the control file at the next checkpoint; until then a former primary's
  // pg_rewind sees one timeline and rewinds nothing (it then never streams). Asked once the new
  // primary takes writes, as a checkpoint of a busy server takes a while.
  async checkpoint(host: string): Promise<void> {
    await this.with(host, async (c) => {
      await c.query("CHECKPOINT");
    });
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

  // SQL has no shutdown command. A superuser can run a program as the server's OS user (COPY TO
  // PROGRAM): that program signals the postmaster (SIGINT: fast shutdown), whose PID is the first
  // line of postmaster.pid in the data directory (pg_read_file). Used on a primary whose node is
  // lost: no kubelet is left to stop its pod, and the operator needs no pods/exec.
  async shutDown(host: string): Promise<void> {
    await this.with(host, async (c) => {
      const row = (await c.query("SELECT split_part(pg_read_file('postmaster.pid'), E'\\n', 1) AS pid"))
        .rows[0] as { pid: string } | undefined;
      const pid = Number(row?.pid);
      if (!Number.isInteger(pid) || pid < 1)
        throw new Error(`no postmaster PID in postmaster.pid (${row?.pid})`);
      // The shutdown ends this session as well: an error from here on is the shutdown under way.
      await c.query(`COPY (SELECT 1) TO PROGRAM 'kill -INT ${pid}'`).catch(() => undefined);
    });
  }

  exited(host: string): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = connect({ host, port: POSTGRES.port });
      const done = (exited: boolean): void => {
        socket.destroy();
        resolve(exited);
      };
      socket.setTimeout(CONNECT_TIMEOUT_MS, () => done(false));
      socket.once("connect", () => done(false));
      socket.once("error", (err: NodeJS.ErrnoException) => done(err.code === "ECONNREFUSED"));
    });
  }

  async reload(host: string): Promise<void> {
    await this.with(host, async (c) => {
      const row = (await c.query("SELECT pg_reload_conf() AS sent")).rows[0] as { sent: boolean } | undefined;
      if (!row?.sent) throw new Error("pg_reload_conf() could not signal the server");
    });
    // The next look connects afresh: a kept connection shows the certificate served when it opened.
    this.kept?.drop(host);
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

/**
 * A query with its own read timeout. pg reads `query_timeout` from a query's config as well as from
 * the client's; its type definitions know only the client's.
 */
function timed(text: string, timeoutMs: number, values?: unknown[]): pg.QueryConfig {
  const config: pg.QueryConfig & { query_timeout: number } = {
    text,
    query_timeout: timeoutMs,
    ...(values ? { values } : {}),
  };
  return config;
}

/** One look at a member over `c`: what it is, how far its WAL goes, its settings, its certificate. */
async function look(c: pg.Client, timeoutMs: number): Promise<SqlView | undefined> {
  const row = (await c.query(timed(OBSERVE, timeoutMs))).rows[0] as
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
    fileSettings: await fileSettings(c, timeoutMs),
    certificateSerial: servedSerial(c),
  };
}

/**
 * The reloadable settings' file and running values; undefined when they cannot be read, which is
 * no reason to think the member is not answering.
 */
async function fileSettings(c: pg.Client, timeoutMs: number): Promise<FileSetting[] | undefined> {
  try {
    const rows = (await c.query(timed(FILE_SETTINGS, timeoutMs, [POSTGRES.reloadableSettings]))).rows as {
      name: string;
      file: string;
      running: string;
      unit: string | null;
      source: string;
      shown: string;
    }[];
    // One entry applies per name; were there more, the last read wins, as it does for Postgres.
    const byName = new Map(rows.map((r) => [r.name, r]));
    return [...byName.values()].map((r) => ({
      name: r.name,
      file: r.file,
      running: r.running,
      ...(r.unit ? { unit: r.unit } : {}),
      source: r.source,
      shown: r.shown,
    }));
  } catch {
    return undefined;
  }
}

/** The serial of the certificate the member served on this connection (upper-case hex); undefined: plaintext. */
function servedSerial(c: pg.Client): string | undefined {
  const stream: unknown = c.connection.stream;
  if (!(stream instanceof TLSSocket)) return undefined;
  const serial = stream.getPeerCertificate().serialNumber;
  return serial ? serial.toUpperCase() : undefined;
}

/** The slot a member streams through (the entrypoint names it the same way). */
export const slotOf = (podName: string): string =>
  `${POSTGRES.slotPrefix}${podName.slice(podName.lastIndexOf("-") + 1)}`;
