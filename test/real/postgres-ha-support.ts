// What the real-node Postgres HA tests share: a client pod writing through the read-write Service
// every 100 ms (its log is the record of acknowledged and failed writes), a sampler of
// pg_is_in_recovery() on every member every 200 ms (moments with two writable primaries), and the
// waits and checks on status.postgres and the members. One platform per test file:
// useHaPlatform() names it.
import type * as k8s from "@kubernetes/client-node";
import type { OntoPlatform } from "../../src/api/index.js";
import { POSTGRES } from "../../src/render/endpoints.js";
import { eventually } from "../support/cluster.js";
import { readPlatform } from "../support/platform.js";
import { deletePod, podsOf, query, withPostgres, type RealPlatform } from "./platform-support.js";
import { postgresDiagnosis } from "./diagnosis.js";
import { createPod, IMAGE_REFS, kubectl, onRealNode, waitRunning } from "./support.js";

export const MEMBERS = ["postgres-0", "postgres-1", "postgres-2"];

let p: RealPlatform;
let ns = "";
let password = "";

/** Only Postgres runs for real: the rest of the platform stays on the simulated nodes. */
export function onlyPostgresReal(platform: OntoPlatform): void {
  const spec = platform.spec;
  for (const c of [
    spec.infrastructure?.redis,
    spec.infrastructure?.minio,
    spec.controlPlane?.authService,
    spec.dataPlane?.dataService,
  ])
    if (c) delete c.nodePool;
}

/** The platform the functions below look at, and its Postgres password. */
export function useHaPlatform(platform: RealPlatform, postgresPassword: string): void {
  p = platform;
  ns = platform.namespace;
  password = postgresPassword;
}

/** Starts the writer pod (on `nodeName` when given, else on a real node) and waits for a first write. */
export async function startWriter(nodeName?: string): Promise<void> {
  const spec: k8s.V1PodSpec = onRealNode({
    containers: [
      {
        name: "writer",
        image: IMAGE_REFS.postgres,
        imagePullPolicy: "Never",
        command: ["bash", "-c", WRITER],
        env: [
          {
            name: "PGPASSWORD",
            valueFrom: { secretKeyRef: { name: POSTGRES.secret, key: POSTGRES.passwordKey } },
          },
          { name: "PGCONNECT_TIMEOUT", value: "2" },
        ],
      },
    ],
    terminationGracePeriodSeconds: 0,
  });
  await createPod(ns, "pg-writer", nodeName ? { ...spec, nodeName } : spec);
  await waitRunning(ns, "pg-writer");
  await firstOkAfter(0, 240_000);
}

/** Runs on the real node, writing one row through the read-write Service every 100 ms. */
export const WRITER = `
i=0
until psql -h ${POSTGRES.service} -U ${POSTGRES.user} -d ${POSTGRES.database} -Atqc 'CREATE TABLE IF NOT EXISTS ha_writes (id bigint PRIMARY KEY, at timestamptz DEFAULT now())' >/dev/null 2>&1; do sleep 0.5; done
echo ready
while true; do
  i=$((i+1))
  if out="$(psql -h ${POSTGRES.service} -U ${POSTGRES.user} -d ${POSTGRES.database} -Atqc "INSERT INTO ha_writes (id) VALUES ($i)" 2>&1)"; then
    echo "ok $i $(date +%s%3N)"
  else
    echo "fail $i $(date +%s%3N) $(echo "$out" | head -1)"
  fi
  sleep 0.1
done`;

export interface WriteLog {
  ok: { id: number; at: number }[];
  failed: { id: number; at: number; why: string }[];
}

export async function writerLog(): Promise<WriteLog> {
  const res = await kubectl(["logs", "-n", ns, "pg-writer", "--tail=-1"], { timeoutMs: 60_000 });
  const log: WriteLog = { ok: [], failed: [] };
  for (const line of res.stdout.split("\n")) {
    const [kind, id, at, ...why] = line.split(" ");
    if (kind === "ok") log.ok.push({ id: Number(id), at: Number(at) });
    if (kind === "fail") log.failed.push({ id: Number(id), at: Number(at), why: why.join(" ") });
  }
  return log;
}

/** Failed writes and the longest gap between two acknowledged writes in [from, to]. */
export function gapIn(log: WriteLog, from: number, to: number): { failed: number; longestGapMs: number } {
  const oks = log.ok.filter((w) => w.at >= from && w.at <= to).map((w) => w.at);
  let longest = 0;
  for (let i = 1; i < oks.length; i++) longest = Math.max(longest, (oks[i] ?? 0) - (oks[i - 1] ?? 0));
  return { failed: log.failed.filter((w) => w.at >= from && w.at <= to).length, longestGapMs: longest };
}

/** Samples pg_is_in_recovery() on every member every 200 ms; counts moments with two writable. */
export class Sampler {
  moments = 0;
  doubled: string[] = [];
  private stopped = false;
  private readonly done: Promise<void>;
  private ips = new Map<string, string>();

  constructor() {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    let refreshed = 0;
    while (!this.stopped) {
      const t = Date.now();
      if (t - refreshed > 1_000) {
        refreshed = t;
        const pods = await podsOf(ns, "postgres").catch(() => []);
        this.ips = new Map(
          pods.filter((x) => x.status?.podIP).map((x) => [x.metadata?.name ?? "", x.status?.podIP ?? ""]),
        );
      }
      const answers = await Promise.all(
        [...this.ips].map(async ([name, ip]) => {
          const rows = await withPostgres(
            ip,
            password,
            async (c) => (await c.query<{ r: boolean }>("SELECT pg_is_in_recovery() AS r")).rows,
            POSTGRES.port,
          ).catch(() => undefined);
          return rows?.[0]?.r === false ? name : undefined;
        }),
      );
      const writable = answers.filter((a): a is string => a !== undefined);
      this.moments++;
      if (writable.length > 1) this.doubled.push(`${new Date(t).toISOString()} ${writable.join(",")}`);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 200 - (Date.now() - t))));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }
}

export async function state(): Promise<NonNullable<NonNullable<OntoPlatform["status"]>["postgres"]>> {
  return (await readPlatform(p.client, ns, p.name)).status?.postgres ?? {};
}

export async function primaryName(): Promise<string> {
  return eventually("a primary in status.postgres", async () => (await state()).currentPrimary, 120_000, 500);
}

export async function ipOf(name: string): Promise<string> {
  return eventually(
    `${name} has an address`,
    async () => (await podsOf(ns, "postgres")).find((x) => x.metadata?.name === name)?.status?.podIP,
    240_000,
    500,
  );
}

/** Waits until `name` answers as a standby streaming from the primary, and two standbys stream. */
export async function rejoined(name: string, timeoutMs = 300_000): Promise<void> {
  await eventually(
    `${name} streaming as a standby`,
    async () => {
      const s = await state();
      const primary = s.currentPrimary ?? "";
      if (primary === name) return undefined;
      const rows = await query<{ n: string }>(
        await ipOf(primary),
        password,
        "SELECT count(*) AS n FROM pg_stat_replication WHERE state = 'streaming'",
      ).catch(() => []);
      const me = s.members?.find((m) => m.name === name);
      return rows[0]?.n === "2" && me?.role === "standby" ? true : undefined;
    },
    timeoutMs,
    1_000,
  );
}

/**
 * What the start script of a member's current container said (its own lines, not the server's,
 * which start with a timestamp): how a former primary decided to rejoin.
 */
export async function startScriptLines(name: string): Promise<string> {
  const run = await kubectl(["logs", "-n", ns, name, "-c", "postgres"]);
  return run.stdout
    .split("\n")
    .filter((l) => l.trim() && !/^\d{4}-\d\d-\d\d /.test(l))
    .slice(0, 12)
    .join(" | ");
}

/** Deletes the primary's pod; resolves once status.postgres names another primary. */
export async function deletePrimaryPod(): Promise<{
  old: string;
  t0: number;
  promoted: Awaited<ReturnType<typeof state>>;
}> {
  const old = await primaryName();
  const t0 = Date.now();
  await deletePod(ns, old);
  const promoted = await eventually(
    "a new primary",
    async () => {
      const s = await state();
      return s.currentPrimary && s.currentPrimary !== old ? s : undefined;
    },
    120_000,
    200,
  );
  return { old, t0, promoted };
}

export async function firstOkAfter(t: number, timeoutMs = 120_000): Promise<number> {
  try {
    return await eventually(
      "a write accepted through postgres",
      async () => (await writerLog()).ok.find((w) => w.at > t)?.at,
      timeoutMs,
      500,
    );
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${await writesDiagnosis(t)}`);
  }
}

/** Why no write goes through: the writer's last lines, and the Postgres members and Service. */
export async function writesDiagnosis(since: number): Promise<string> {
  const tail = await kubectl(["logs", "-n", ns, "pg-writer", "--tail=8"], { timeoutMs: 30_000 })
    .then((r) => r.stdout.trimEnd().split("\n"))
    .catch((err: unknown) => [String(err)]);
  const now = Date.now();
  const lines = [
    `--- writer (waiting since ${new Date(since).toISOString()}, now ${new Date(now).toISOString()}); last lines, with their age:`,
    ...tail.map((l) => {
      const at = Number(l.split(" ")[2]);
      return `  ${l}${Number.isFinite(at) && at > 0 ? `  (${((now - at) / 1000).toFixed(1)} s ago)` : ""}`;
    }),
  ];
  return `${lines.join("\n")}\n${await postgresDiagnosis(p.client, ns, p.name, password)}`;
}

/**
 * Writes a case lost by design (asynchronous replication, a primary killed before its standbys
 * received them): counted in that case's figures, not held against the cases after it.
 */
const lossesByDesign = new Set<number>();

/**
 * The acknowledged writes up to `upTo` an asynchronous failover lost, for the case's figures; set
 * aside so the cases after it check only their own.
 */
export async function setAsideLosses(upTo: number): Promise<number[]> {
  const lost = await lostWrites(upTo);
  for (const id of lost) lossesByDesign.add(id);
  return lost;
}

/** Acknowledged writes (ids) not present on the primary now, less the losses accepted before. */
export async function lostWrites(upTo: number): Promise<number[]> {
  const log = await writerLog();
  const acked = log.ok.filter((w) => w.at <= upTo && !lossesByDesign.has(w.id)).map((w) => w.id);
  const rows = await query<{ id: string }>(
    await ipOf(await primaryName()),
    password,
    "SELECT id FROM ha_writes WHERE id = ANY($1::bigint[])",
    [acked],
  );
  const present = new Set(rows.map((r) => Number(r.id)));
  return acked.filter((id) => !present.has(id));
}
