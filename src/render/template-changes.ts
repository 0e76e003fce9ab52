// The declared changes of render: every change of this code that alters a rendered object for an
// unchanged spec is listed here, with the restart it causes. The golden-file test
// (template-changes.test.ts) renders a committed set of specs and fails on any difference that no
// entry declares, so an operator upgrade never restarts a pod by surprise. The revision of the
// newest entry is stamped on every workload; the reconciler defers a pod-template change that comes
// with a newer revision (an operator-side change, not the user's) until the user opts in or a
// maintenance window opens (controllers/platform/disruption.ts).

/** Why a pod restarts: the part of its pod template that changed. */
export const RESTART_REASONS = ["image", "config", "resources", "certificate", "template"] as const;
export type RestartReason = (typeof RESTART_REASONS)[number];

export interface DeclaredChange {
  /** Increases by one per entry; the newest is TEMPLATE_REVISION. */
  revision: number;
  /** Component names whose objects change, or "all". */
  components: readonly string[] | "all";
  /** The kinds that change (e.g. "StatefulSet", "ConfigMap"). */
  kinds: readonly string[];
  /** The restart it causes on running pods, or "none" when no pod template changes. */
  restart: RestartReason | "none";
  /** What changed and why, for the restart plan and the release notes. */
  why: string;
}

export const DECLARED_CHANGES: readonly DeclaredChange[] = [
  {
    revision: 1,
    components: "all",
    kinds: ["Deployment", "StatefulSet"],
    restart: "none",
    why: "workloads carry the onto.paas/template-revision annotation (on the workload, not the pod template)",
  },
  {
    revision: 2,
    components: ["postgres"],
    kinds: ["ConfigMap", "StatefulSet"],
    restart: "config",
    why: "standbys name their primary_conninfo with a TCP user timeout, so a primary back at a new address is found in seconds",
  },
  {
    revision: 3,
    components: "all",
    // Setup Jobs are named by their content, so theirs are new Jobs (run once more).
    kinds: ["Deployment", "StatefulSet", "Job"],
    restart: "template",
    why: "every container reports its last log lines on failure (terminationMessagePolicy FallbackToLogsOnError); distributed MinIO waits until its own name resolves to its address",
  },
  {
    revision: 4,
    components: "all",
    kinds: ["Job"],
    restart: "none",
    why: "setup Job names hash their pod spec with sorted keys, so building the same spec in another key order no longer runs a Job again",
  },
  {
    revision: 5,
    components: ["postgres"],
    kinds: ["ConfigMap", "StatefulSet", "Service"],
    restart: "config",
    why: "Postgres members decide their role from what their peers answer (a former primary rejoins by pg_rewind) and the Services select by the role label the operator keeps",
  },
  {
    revision: 6,
    components: ["postgres"],
    kinds: ["StatefulSet"],
    restart: "template",
    why: "the Postgres pod template carries the new script's checksum (the same roll as r5)",
  },
  {
    revision: 7,
    components: ["postgres"],
    kinds: ["ConfigMap", "StatefulSet"],
    restart: "config",
    why: "a former primary checkpoints the new primary before pg_rewind, so a promotion moments old is rewound onto instead of followed forever",
  },
  {
    revision: 8,
    components: ["postgres"],
    kinds: ["StatefulSet"],
    restart: "template",
    why: "the Postgres pod template carries r7's script checksum",
  },
  {
    revision: 9,
    components: ["postgres"],
    kinds: ["ConfigMap", "StatefulSet"],
    restart: "config",
    why: "Postgres members start all at once (podManagementPolicy Parallel), so a platform re-created on retained volumes whose last primary was not ordinal 0 starts; a former primary that sees a member on a newer timeline waits for the primary instead of going on as one",
  },
  {
    revision: 10,
    components: "all",
    kinds: ["ConfigMap", "Deployment", "StatefulSet"],
    restart: "config",
    why: "with global.tlsEnabled, services are given the CA that the platform's TLS links verify against (TLS_CA_FILE) and MinIO's endpoint as https",
  },
  {
    revision: 11,
    components: ["minio", "nessie"],
    kinds: ["StatefulSet", "Job", "ServiceMonitor"],
    restart: "template",
    why: "with global.tlsEnabled, MinIO serves HTTPS with the platform certificate (peers, probes, the bucket Job and the ServiceMonitor verify it against the platform CA); Nessie trusts the platform CA through a truststore its init container builds",
  },
  {
    revision: 12,
    components: ["minio", "nessie"],
    kinds: ["StatefulSet"],
    restart: "certificate",
    why: "MinIO and Nessie mount the platform certificate (r11)",
  },
  {
    revision: 13,
    components: ["redis"],
    kinds: ["ConfigMap", "StatefulSet"],
    restart: "config",
    why: "a starting Redis pod follows, of the primaries its peers' Sentinels and its saved state name, the newest whose server answers as primary, so a Sentinel never starts on a replica under an epoch its peers hold (which sent clients to a replica for good)",
  },
  {
    revision: 14,
    components: ["postgres"],
    kinds: ["StatefulSet"],
    restart: "none",
    why: "with standbys, the Postgres StatefulSet is updated by the operator (updateStrategy OnDelete): the standbys first, the primary last after a switchover, instead of highest ordinal first; the pod template is unchanged",
  },
  {
    revision: 15,
    components: ["postgres"],
    kinds: ["ConfigMap", "StatefulSet"],
    restart: "config",
    why: "Postgres reads max_slot_wal_keep_size (a quarter of its volume) from a file of its ConfigMap that postgresql.conf includes and the operator reloads (pg_reload_conf()), no longer a server flag, so growing its volume restarts no Postgres pod",
  },
  {
    revision: 16,
    components: ["postgres"],
    kinds: ["ConfigMap", "StatefulSet"],
    restart: "config",
    why: "a former Postgres primary goes on as the primary only when it is the only member, or standbys answer and none took over; while the other members are listed but none answers it keeps looking (up to 60 s), so a pod whose first seconds of network fail does not start as a second primary beside a promoted standby",
  },
  {
    revision: 17,
    components: ["postgres"],
    kinds: ["ConfigMap", "StatefulSet"],
    restart: "config",
    why: "Postgres takes its client authentication rules from its ConfigMap (hba_file), the same on every member; with global.tlsEnabled it serves the platform certificate (ssl=on), accepts network connections only over TLS, and its standbys stream over verified TLS",
  },
  {
    revision: 18,
    components: "all",
    kinds: ["ConfigMap", "StatefulSet", "Deployment"],
    restart: "config",
    why: "with global.tlsEnabled, Redis and its Sentinels speak only TLS with the platform certificate (replication and Sentinel links too), Kafka's client, inter-broker and controller listeners speak TLS (a PEM keystore written by an init container), and the platform services are told so (REDIS_TLS, KAFKA_SECURITY_PROTOCOL=SSL) and to verify Postgres (DATABASE_SSLMODE=verify-full, DATABASE_SSLROOTCERT)",
  },
  {
    revision: 19,
    components: ["minio"],
    kinds: ["StatefulSet"],
    restart: "template",
    why: "MinIO has a startup probe (liveness waits until it first answers: a distributed member listens only once it has found its peers) and its probes allow 5 s for an answer, so a member starting or answering slowly on a busy node is not killed into a restart loop",
  },
  {
    revision: 20,
    components: ["postgres"],
    kinds: ["ConfigMap", "StatefulSet"],
    restart: "config",
    why: "a Postgres standby that was not shut down cleanly rewinds onto a new primary's timeline instead of cloning the whole database again: standby.signal is set aside while pg_rewind finishes its crash recovery in single-user mode, which refuses standby mode",
  },
  {
    revision: 21,
    components: ["redis"],
    kinds: ["ConfigMap", "StatefulSet"],
    restart: "config",
    why: "Sentinel's failover-timeout is 10 s: when the two Sentinels left after a primary's pod is gone split their votes, the next election comes 20 s later instead of 120 s",
  },
  {
    revision: 22,
    components: ["redis"],
    kinds: ["ConfigMap", "StatefulSet"],
    restart: "config",
    why: "a Redis primary whose pod comes back while the Sentinels still name it asks them to fail over and follows the replica they promote, instead of starting as the primary in the middle of their failover and losing what its replicas acknowledged meanwhile",
  },
  {
    revision: 23,
    components: ["redis"],
    kinds: ["ConfigMap", "StatefulSet"],
    restart: "config",
    why: "a Redis replica that follows a server other than the primary the Sentinels name moves to that primary: one started within 10 s of a failover was unknown to the Sentinels, was not reconfigured by it, and replicated through the demoted primary for good",
  },
  {
    revision: 24,
    components: ["redis"],
    kinds: ["ConfigMap", "StatefulSet"],
    restart: "config",
    why: "a Redis Sentinel that starts on a primary no server confirmed monitors it one epoch below the pair it heard: started in the middle of a failover it took the new epoch with the old address and named a replica for good",
  },
  {
    revision: 25,
    components: ["postgres"],
    kinds: ["ConfigMap", "StatefulSet"],
    restart: "config",
    why: "a Postgres member whose pg_rewind failed, and whose clone then failed too, started on the half-rewound data directory and crash-looped for good: the directory is set aside before the clone, and a member whose starts on its data directory never became Ready three times in a row clones again from the primary another member is",
  },
  {
    revision: 26,
    components: ["postgres", "redis"],
    kinds: ["StatefulSet"],
    restart: "template",
    why: "pods probed by commands share one PID namespace, so an orphan of a timed-out probe is reaped by the sandbox's pause program: as process 1 of its container, the Postgres postmaster took such an orphan's exit for a crashed backend and ran crash recovery, ending every session of the primary (seen as failovers under load)",
  },
  {
    revision: 27,
    components: ["redis"],
    kinds: ["ConfigMap", "StatefulSet"],
    restart: "config",
    why: "a Redis primary stopped by its pod's deletion (a roll, a drain) hands over first: writes paused, a peer's Sentinel asked to fail over, the server following the promoted replica before it stops; a rolled primary cost writes up to 171 s when it came back before the Sentinels had failed over",
  },
  {
    revision: 28,
    components: ["postgres"],
    kinds: ["ConfigMap", "StatefulSet"],
    restart: "template",
    why: "a Postgres primary cut off by a network partition (neither the API server nor any other member reachable) at two readiness checks 10 s apart stops itself, and does not start as the primary again while cut off: the operator promotes a standby on the other side, and clients on the primary's side went on writing to it, writes the promoted standby never saw; the readiness probe may take 10 s",
  },
  {
    revision: 29,
    components: ["redis"],
    kinds: ["StatefulSet"],
    restart: "template",
    why: 'the Redis server\'s startup and readiness probes wait 3 s for PING instead of the default 1 s: on a loaded node the kubelet counted dozens of answers a run as failures ("timed out after 1s": 43 readiness and 6 startup failures in one CI run; three in a row take a member out of its Service)',
  },
];

/** The revision of this render code: the newest declared change. */
export const TEMPLATE_REVISION = Math.max(0, ...DECLARED_CHANGES.map((c) => c.revision));

/** Workload annotation: the TEMPLATE_REVISION of the operator that last rendered its pod template. */
export const TEMPLATE_REVISION_ANNOTATION = "onto.paas/template-revision";

/** The declared changes after `revision`, up to this code's. */
export function changesSince(revision: number): DeclaredChange[] {
  return DECLARED_CHANGES.filter((c) => c.revision > revision);
}

/** Whether a declared change covers an object of `kind` of component `component`. */
export function covers(change: DeclaredChange, kind: string, component: string | undefined): boolean {
  if (!change.kinds.includes(kind)) return false;
  return change.components === "all" || (component !== undefined && change.components.includes(component));
}

/** The revision recorded on a live workload; 0 when it predates revisions. */
export function revisionOf(annotations: Readonly<Record<string, string>> | undefined): number {
  const value = Number(annotations?.[TEMPLATE_REVISION_ANNOTATION]);
  return Number.isInteger(value) && value >= 0 ? value : 0;
}
