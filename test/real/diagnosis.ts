// What a failed real-node test prints so that its failure names its cause: the Postgres members as
// Kubernetes and Postgres see them (role labels, what the primary Service's Endpoints and
// EndpointSlices point at, status.postgres, each member's pg_is_in_recovery() and the tail of its
// log), the Sentinels'
// primary, and what a stand-in says is failing (its /readyz reasons, /metrics failing lines, and
// the tail of its log); and, as a figure, how often the HA controller's cache was behind. Every probe is bounded in time and never throws: a diagnosis of a broken
// platform must not fail in its turn.
import { readFileSync } from "node:fs";
import * as k8s from "@kubernetes/client-node";
import { POSTGRES_ROLE_LABEL } from "../../src/api/index.js";
import { CACHE_BEHIND_MESSAGE } from "../../src/controllers/postgres-ha/index.js";
import type { KubeClient } from "../../src/kube/index.js";
import { POSTGRES } from "../../src/render/endpoints.js";
import { adminKubeConfig } from "../support/cluster.js";
import { readPlatform } from "../support/platform.js";
import { query, sentinelDetail, sentinelView } from "./platform-support.js";
import { coreApi, kubectl } from "./support.js";

const PROBE_MS = 5_000;

/** How many Postgres HA passes found the cached platform behind their last status write (a figure). */
export function cacheBehindPasses(p: { operator: { logFile: string } }): number {
  try {
    return readFileSync(p.operator.logFile, "utf8")
      .split("\n")
      .filter((l) => l.includes(CACHE_BEHIND_MESSAGE)).length;
  } catch {
    return -1;
  }
}

function bounded<T>(what: Promise<T>, ms = PROBE_MS): Promise<T> {
  return Promise.race([
    what,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)),
  ]);
}

const said = (err: unknown): string => (err instanceof Error ? err.message : String(err));

function podLine(pod: k8s.V1Pod): string {
  const ready = pod.status?.conditions?.find((c) => c.type === "Ready");
  const waiting = pod.status?.containerStatuses?.map((c) => c.state?.waiting?.reason).filter(Boolean);
  return [
    pod.metadata?.name,
    `uid ${pod.metadata?.uid?.slice(0, 8)}`,
    pod.status?.phase,
    `Ready=${ready?.status ?? "?"}${ready?.reason ? ` (${ready.reason})` : ""}`,
    `ip ${pod.status?.podIP ?? "-"}`,
    pod.metadata?.deletionTimestamp ? `deleting since ${pod.metadata.deletionTimestamp.toISOString()}` : "",
    waiting?.length ? `waiting ${waiting.join(",")}` : "",
  ]
    .filter(Boolean)
    .join(" ");
}

const LOG_LINES = 80;

/** The last lines a member's postgres container printed, in this run and (after a restart) the one before. */
async function memberLog(namespace: string, pod: k8s.V1Pod): Promise<string[]> {
  const name = pod.metadata?.name ?? "";
  const restarts = pod.status?.containerStatuses?.find((c) => c.name === "postgres")?.restartCount ?? 0;
  const runs: [label: string, previous: boolean][] = [
    ["this run", false],
    ...(restarts > 0 ? [["the run before", true] as [string, boolean]] : []),
  ];
  const out: string[] = [];
  for (const [label, previous] of runs) {
    const text = await bounded(
      coreApi().readNamespacedPodLog({
        namespace,
        name,
        container: "postgres",
        tailLines: LOG_LINES,
        previous,
      }),
    ).catch((err: unknown) => `(no log: ${said(err)})`);
    out.push(
      `  ${name} log, ${label} (restarts ${restarts}):`,
      ...text
        .trimEnd()
        .split("\n")
        .map((l) => `  | ${l}`),
    );
  }
  return out;
}

/** The Postgres members, the primary Service's endpoints and status.postgres, one fact a line. */
export async function postgresDiagnosis(
  client: KubeClient,
  namespace: string,
  platform: string,
  password: string,
): Promise<string> {
  const lines: string[] = [`--- Postgres at ${new Date().toISOString()}`];
  try {
    const pods = await bounded(
      coreApi().listNamespacedPod({ namespace, labelSelector: "app.kubernetes.io/name=postgres" }),
    );
    for (const pod of pods.items) {
      const ip = pod.status?.podIP;
      const recovery = ip
        ? await bounded(query<{ r: boolean }>(ip, password, "SELECT pg_is_in_recovery() AS r"))
            .then((rows) => `pg_is_in_recovery()=${String(rows[0]?.r)}`)
            .catch((err: unknown) => `no SQL answer: ${said(err)}`)
        : "no address";
      lines.push(
        `pod ${podLine(pod)} ${POSTGRES_ROLE_LABEL}=${pod.metadata?.labels?.[POSTGRES_ROLE_LABEL] ?? "(none)"}; ${recovery}`,
      );
      // Each member in its own words: the tail of its log, and of the run before when its container
      // restarted (a crash loop's cause is in the run that ended).
      lines.push(...(await memberLog(namespace, pod)));
    }
  } catch (err) {
    lines.push(`pods: ${said(err)}`);
  }
  try {
    const ep = await bounded(coreApi().readNamespacedEndpoints({ namespace, name: POSTGRES.service }));
    for (const subset of ep.subsets ?? []) {
      const list = (a: k8s.V1EndpointAddress[] | undefined): string =>
        (a ?? []).map((x) => `${x.ip}(${x.targetRef?.name ?? "?"})`).join(", ") || "none";
      lines.push(
        `Endpoints ${POSTGRES.service}: ready ${list(subset.addresses)}; not ready ${list(subset.notReadyAddresses)}`,
      );
    }
    if (!ep.subsets?.length) lines.push(`Endpoints ${POSTGRES.service}: no subsets`);
  } catch (err) {
    lines.push(`Endpoints ${POSTGRES.service}: ${said(err)}`);
  }
  try {
    const slices = await bounded(
      adminKubeConfig()
        .makeApiClient(k8s.DiscoveryV1Api)
        .listNamespacedEndpointSlice({
          namespace,
          labelSelector: `kubernetes.io/service-name=${POSTGRES.service}`,
        }),
    );
    for (const slice of slices.items) {
      const eps = (slice.endpoints ?? []).map((e) => {
        const c = e.conditions ?? {};
        return `${e.addresses.join("/")}(${e.targetRef?.name ?? "?"} ready=${String(c.ready)} serving=${String(c.serving)} terminating=${String(c.terminating)})`;
      });
      lines.push(`EndpointSlice ${slice.metadata?.name}: ${eps.join(", ") || "no endpoints"}`);
    }
  } catch (err) {
    lines.push(`EndpointSlices ${POSTGRES.service}: ${said(err)}`);
  }
  try {
    const status = (await bounded(readPlatform(client, namespace, platform))).status?.postgres;
    lines.push(`status.postgres: ${JSON.stringify(status)}`);
  } catch (err) {
    lines.push(`status.postgres: ${said(err)}`);
  }
  return lines.join("\n");
}

/** What each Sentinel names as the Redis primary. */
export async function sentinelDiagnosis(namespace: string): Promise<string> {
  const lines: string[] = [`--- Redis Sentinels at ${new Date().toISOString()}`];
  try {
    const pods = await bounded(
      coreApi().listNamespacedPod({ namespace, labelSelector: "app.kubernetes.io/name=redis" }),
    );
    for (const pod of pods.items) {
      const ip = pod.status?.podIP;
      const view = ip
        ? await bounded(sentinelView(ip))
            .then((v) => `Sentinel names ${v.primary} (epoch ${v.epoch}, ${v.replicas} replicas)`)
            .catch((err: unknown) => `Sentinel: ${said(err)}`)
        : "no address";
      lines.push(`pod ${podLine(pod)}; ${view}`);
      if (ip) {
        // Why a Sentinel does not fail over: its flags and failover state, and each replica's
        // flags, priority (0 never promoted) and link to the primary as this Sentinel sees them.
        const detail = await bounded(sentinelDetail(ip)).catch((err: unknown) => `detail: ${said(err)}`);
        lines.push(`  ${detail}`);
      }
      const name = pod.metadata?.name ?? "";
      const log = await kubectl(["logs", "-n", namespace, name, "-c", "sentinel", "--tail=15"], {
        timeoutMs: PROBE_MS,
      })
        .then((r) => r.stdout.trimEnd() || r.stderr.trimEnd())
        .catch((err: unknown) => said(err));
      lines.push(...log.split("\n").map((l) => `  | ${l}`));
    }
  } catch (err) {
    lines.push(`redis pods: ${said(err)}`);
  }
  return lines.join("\n");
}

/**
 * What the stand-in pods whose names start with `prefix` (a Deployment's and its canary's) say:
 * /readyz (the failing checks and why), the failing lines of /metrics, and the tail of the log.
 */
export async function standinDiagnosis(namespace: string, prefix: string): Promise<string> {
  const lines: string[] = [`--- stand-in pods ${prefix}* at ${new Date().toISOString()}`];
  try {
    const pods = (await bounded(coreApi().listNamespacedPod({ namespace }))).items.filter((p) =>
      p.metadata?.name?.startsWith(prefix),
    );
    for (const pod of pods) {
      const name = pod.metadata?.name ?? "";
      lines.push(`pod ${podLine(pod)}`);
      const ip = pod.status?.podIP;
      if (ip) {
        const readyz = await bounded(fetch(`http://${ip}:8080/readyz`).then((r) => r.text()))
          .then((t) => t.trim())
          .catch((err: unknown) => said(err));
        lines.push(`  /readyz: ${readyz.split("\n").join(" | ")}`);
        const failing = await bounded(fetch(`http://${ip}:8080/metrics`).then((r) => r.text()))
          .then((t) =>
            t
              .split("\n")
              .filter((l) => (l.startsWith("standin_") && !l.endsWith(" 0")) || l.startsWith("standin_ready"))
              .join(", "),
          )
          .catch((err: unknown) => said(err));
        lines.push(`  /metrics: ${failing}`);
      }
      const log = await kubectl(["logs", "-n", namespace, name, "--tail=12"], { timeoutMs: PROBE_MS * 2 })
        .then((r) => (r.stdout || r.stderr).trimEnd())
        .catch((err: unknown) => said(err));
      lines.push(...log.split("\n").map((l) => `  log: ${l}`));
    }
  } catch (err) {
    lines.push(`pods: ${said(err)}`);
  }
  return lines.join("\n");
}
