// Crash-loop diagnosis (seed 5.1): a container in CrashLoopBackOff is not restarted blindly (the
// kubelet already restarts it); the healer says why it most likely fails, in the order a person
// would check: a ConfigMap or Secret the pod references that does not exist, a backing service
// (Postgres, Kafka, Redis, MinIO, Nessie, Temporal) that is not Ready, else the exit code and
// termination message of the last run. Pure: lookups come in as functions over the caches.
import { REASON, type Reason } from "../../api/index.js";
import { KAFKA, MINIO, NESSIE, POSTGRES, REDIS, TEMPORAL } from "../../render/index.js";
import type { ContainerStatus, ContainerView, PodView } from "../shared/kube-views.js";

export const CRASH_LOOP = "CrashLoopBackOff";

export type CrashReason = Extract<
  Reason,
  "MissingSecret" | "MissingConfigMap" | "DependencyNotReady" | "ContainerExited"
>;

export interface CrashDiagnosis {
  reason: CrashReason;
  /** One sentence naming the pod, the container and the cause (names only, never values). */
  message: string;
  container: string;
  exitCode?: number | undefined;
}

export interface DiagnosisLookups {
  secretExists(name: string): boolean;
  configMapExists(name: string): boolean;
  /** Keys of a ConfigMap in the namespace (empty when it does not exist). */
  configMapKeys(name: string): string[];
  /** undefined when Ready; else a short description such as "0/1 pods ready". */
  dependencyProblem(component: string): string | undefined;
}

/**
 * Waiting reasons of a container the kubelet cannot start: its env names a Secret or ConfigMap key
 * that does not exist (CreateContainerConfigError), or a volume cannot be set up, which leaves the
 * pod in ContainerCreating (the kubelet says why in FailedMount Events). Neither is a crash loop;
 * both are diagnosed when a reference is missing.
 */
export const NOT_STARTING = ["CreateContainerConfigError", "ContainerCreating"] as const;

/** The container statuses of a pod that wait in one of NOT_STARTING. */
export function notStarting(pod: PodView): ContainerStatus[] {
  return [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])].filter(
    (s) => (NOT_STARTING as readonly string[]).includes(s.state?.waiting?.reason ?? ""),
  );
}

/** The crash-looping container statuses of a pod. */
export function crashLooping(pod: PodView): ContainerStatus[] {
  return [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])].filter(
    (s) => s.state?.waiting?.reason === CRASH_LOOP,
  );
}

interface Reference {
  kind: "Secret" | "ConfigMap";
  name: string;
  /** Where the pod references it, e.g. "env DATABASE_PASSWORD" or "volume tls". */
  where: string;
}

/** Every required (non-optional) Secret and ConfigMap reference of a container and the pod's volumes. */
function references(pod: PodView, container: ContainerView | undefined): Reference[] {
  const refs: Reference[] = [];
  for (const e of container?.env ?? []) {
    const s = e.valueFrom?.secretKeyRef;
    if (s?.name && !s.optional) refs.push({ kind: "Secret", name: s.name, where: `env ${e.name}` });
    const c = e.valueFrom?.configMapKeyRef;
    if (c?.name && !c.optional) refs.push({ kind: "ConfigMap", name: c.name, where: `env ${e.name}` });
  }
  for (const f of container?.envFrom ?? []) {
    if (f.secretRef?.name && !f.secretRef.optional)
      refs.push({ kind: "Secret", name: f.secretRef.name, where: "envFrom" });
    if (f.configMapRef?.name && !f.configMapRef.optional)
      refs.push({ kind: "ConfigMap", name: f.configMapRef.name, where: "envFrom" });
  }
  for (const v of pod.spec?.volumes ?? []) {
    if (v.secret?.secretName && !v.secret.optional)
      refs.push({ kind: "Secret", name: v.secret.secretName, where: `volume ${v.name}` });
    if (v.configMap?.name && !v.configMap.optional)
      refs.push({ kind: "ConfigMap", name: v.configMap.name, where: `volume ${v.name}` });
    for (const source of v.projected?.sources ?? []) {
      if (source.secret?.name && !source.secret.optional)
        refs.push({ kind: "Secret", name: source.secret.name, where: `volume ${v.name}` });
      if (source.configMap?.name && !source.configMap.optional)
        refs.push({ kind: "ConfigMap", name: source.configMap.name, where: `volume ${v.name}` });
    }
  }
  return refs;
}

// How a platform pod shows that it needs a backing service: the credentials Secret it reads, or
// the endpoint key its ConfigMap carries (the names render uses, see render/endpoints.ts and
// render/platform-service.ts).
const DEPENDENCY_SECRETS: Readonly<Record<string, string>> = {
  [POSTGRES.secret]: "postgres",
  [REDIS.secret]: "redis",
  [MINIO.secret]: "minio",
};
const DEPENDENCY_CONFIG_KEYS: Readonly<Record<string, string>> = {
  DATABASE_HOST: POSTGRES.service,
  KAFKA_BOOTSTRAP_SERVERS: KAFKA.service,
  REDIS_MODE: REDIS.service,
  S3_ENDPOINT: MINIO.service,
  NESSIE_URI: NESSIE.service,
  TEMPORAL_ADDRESS: TEMPORAL.service,
};

/** The backing components a container needs, in a stable order, never itself. */
export function dependenciesOf(
  component: string,
  container: ContainerView | undefined,
  lookups: Pick<DiagnosisLookups, "configMapKeys">,
): string[] {
  const found = new Set<string>();
  for (const e of container?.env ?? []) {
    const dep = DEPENDENCY_SECRETS[e.valueFrom?.secretKeyRef?.name ?? ""];
    if (dep) found.add(dep);
  }
  for (const f of container?.envFrom ?? []) {
    if (!f.configMapRef?.name) continue;
    for (const key of lookups.configMapKeys(f.configMapRef.name)) {
      const dep = DEPENDENCY_CONFIG_KEYS[key];
      if (dep) found.add(dep);
    }
  }
  found.delete(component);
  return [...found].sort();
}

/** The last lines of a termination message, at most MESSAGE_CHARS characters, the latest kept. */
export function lastWords(message: string): string {
  const lines = message
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  let words = "";
  for (const line of lines.reverse()) {
    const next = words ? `${line} | ${words}` : line;
    if (next.length > MESSAGE_CHARS) return words || line.slice(-MESSAGE_CHARS);
    words = next;
  }
  return words;
}

const MESSAGE_CHARS = 256;

function lastExit(status: ContainerStatus): { exitCode?: number; text: string } {
  const t = status.lastState?.terminated ?? status.state?.terminated;
  if (!t) return { text: "no termination recorded yet" };
  const parts = [`exit code ${t.exitCode ?? "?"}`];
  if (t.reason) parts.push(`reason ${t.reason}`);
  // The termination message is what the container wrote to its termination log or, as rendered
  // (terminationMessagePolicy FallbackToLogsOnError), the end of its log: its last lines are what
  // the program said before it exited. No secret by design of the platform images; cut to keep
  // Events and conditions short.
  if (t.message) parts.push(`message "${lastWords(t.message)}"`);
  return { ...(t.exitCode !== undefined ? { exitCode: t.exitCode } : {}), text: parts.join(", ") };
}

/**
 * Why a container the kubelet cannot start (see notStarting) waits: the Secrets and ConfigMaps it
 * references that do not exist, with what the kubelet said; undefined when none is missing (a pod
 * is in ContainerCreating for a moment on every start).
 */
export function diagnoseNotStarting(
  pod: PodView,
  status: ContainerStatus,
  lookups: DiagnosisLookups,
): CrashDiagnosis | undefined {
  const container = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].find(
    (c) => c.name === status.name,
  );
  const missing = missingReferences(pod, container, lookups);
  const first = missing[0];
  if (!first) return undefined;
  const waiting = status.state?.waiting;
  const kubelet = waiting?.message ? ` (kubelet: ${waiting.message.trim().slice(0, MESSAGE_CHARS)})` : "";
  const list = missing.map((r) => `${r.kind} ${r.name} (${r.where})`).join(", ");
  return {
    container: status.name,
    reason: first.kind === "Secret" ? REASON.MissingSecret : REASON.MissingConfigMap,
    message: `pod ${pod.metadata?.name ?? "?"} container ${status.name} cannot start, ${waiting?.reason ?? "waiting"}${kubelet}: it references ${list}, which does not exist`,
  };
}

function missingReferences(
  pod: PodView,
  container: ContainerView | undefined,
  lookups: DiagnosisLookups,
): Reference[] {
  return references(pod, container).filter((r) =>
    r.kind === "Secret" ? !lookups.secretExists(r.name) : !lookups.configMapExists(r.name),
  );
}

/** Why the crash-looping container `status` of `pod` (component `component`) most likely fails. */
export function diagnoseCrashLoop(
  pod: PodView,
  component: string,
  status: ContainerStatus,
  lookups: DiagnosisLookups,
): CrashDiagnosis {
  const podName = pod.metadata?.name ?? "?";
  const container = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].find(
    (c) => c.name === status.name,
  );
  const exit = lastExit(status);
  const prefix = `pod ${podName} container ${status.name} is in CrashLoopBackOff (${exit.text})`;
  const base = {
    container: status.name,
    ...(exit.exitCode !== undefined ? { exitCode: exit.exitCode } : {}),
  };
  const missing = missingReferences(pod, container, lookups);
  const first = missing[0];
  if (first) {
    const list = missing.map((r) => `${r.kind} ${r.name} (${r.where})`).join(", ");
    return {
      ...base,
      reason: first.kind === "Secret" ? REASON.MissingSecret : REASON.MissingConfigMap,
      message: `${prefix}: it references ${list}, which does not exist`,
    };
  }
  const notReady = dependenciesOf(component, container, lookups)
    .map((dep) => ({ dep, problem: lookups.dependencyProblem(dep) }))
    .filter((d): d is { dep: string; problem: string } => d.problem !== undefined);
  if (notReady.length > 0) {
    return {
      ...base,
      reason: REASON.DependencyNotReady,
      message: `${prefix}: it depends on ${notReady.map((d) => `${d.dep} (${d.problem})`).join(", ")}, not Ready`,
    };
  }
  return {
    ...base,
    reason: REASON.ContainerExited,
    message: `${prefix}: no missing reference or dependency found`,
  };
}
