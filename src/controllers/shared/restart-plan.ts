// The restart plan: for each workload, whether applying a change restarts its pods, why (image,
// config checksum, resources, certificate, another part of the pod template), in what order, and
// under what disruption budget. Pure: `onto diff` feeds it the live objects and the server's
// dry-run result, the reconciler its cache and the rendered objects, the golden-file test two
// renders. A pod restarts exactly when its workload's pod template changes; everything else
// (replicas, the revision annotation, a PDB) is applied without touching a pod.
import { Quantity } from "../../api/index.js";
import {
  CONFIG_CHECKSUM_ANNOTATION,
  TEMPLATE_REVISION_ANNOTATION,
  TLS_REVISION_ANNOTATION,
  changesSince,
  covers,
  revisionOf,
  type RestartReason,
} from "../../render/index.js";
import { canonical } from "../../runtime/index.js";
import { statefulSetPartition, updatedByOperator, type StatefulSetUpdateStrategy } from "./kube-views.js";

/** The fields of a workload the plan reads (a rendered object or a live one). */
export interface WorkloadObject {
  kind: string;
  metadata: {
    name: string;
    labels?: Record<string, string> | undefined;
    annotations?: Record<string, string> | undefined;
  };
  spec?: unknown;
}

export interface RestartEntry {
  kind: string;
  name: string;
  /** Whether applying restarts its pods. */
  restarts: boolean;
  reasons: RestartReason[];
  /** One line per reason, e.g. "image onto/postgres:1.5.0 -> onto/postgres:1.6.0". */
  details: string[];
  /** 1-based position in which the operator applies it (the seed's component order). */
  order: number;
  /** How its pods are replaced, e.g. "one pod at a time, highest ordinal first". */
  rollout: string;
  /** The PodDisruptionBudget that covers its pods, e.g. "maxUnavailable 1", or "none". */
  budget: string;
  /** Set when the change comes with a newer operator (declared changes), not from the spec. */
  operatorChange?: { fromRevision: number; toRevision: number; declared: string[] };
}

interface Container {
  name: string;
  image?: string;
  resources?: unknown;
}
interface PodTemplate {
  metadata?: { annotations?: Record<string, string> };
  spec?: { containers?: Container[]; initContainers?: Container[]; volumes?: unknown[] };
}

const templateOf = (obj: WorkloadObject): PodTemplate =>
  (obj.spec as { template?: PodTemplate } | undefined)?.template ?? {};

/** A field value as text (an int-or-string of the API, or anything else as JSON). */
const text = (v: unknown): string =>
  typeof v === "string" || typeof v === "number" ? String(v) : JSON.stringify(v);

/** Deep equality, quantities by value ("1024Mi" equals "1Gi"), key order ignored. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (typeof a === "string" && typeof b === "string" && a !== b && Quantity.isValid(a) && Quantity.isValid(b))
    return Quantity.parse(a).compareTo(Quantity.parse(b)) === 0;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  if (a !== null && b !== null && typeof a === "object" && typeof b === "object" && !Array.isArray(a)) {
    const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
    const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function containers(t: PodTemplate): Container[] {
  return [...(t.spec?.initContainers ?? []), ...(t.spec?.containers ?? [])];
}

const tlsVolume = (t: PodTemplate): unknown =>
  (t.spec?.volumes ?? []).find((v) => (v as { name?: string }).name === "tls");

/**
 * Why moving a pod template from `before` to `after` restarts pods; empty when it does not.
 * `same` compares two values; the default is exact (two full objects). The reconciler passes a
 * subset test instead, because a live template also holds the API server's defaults.
 */
export function restartReasons(
  before: WorkloadObject,
  after: WorkloadObject,
  same: (want: unknown, have: unknown) => boolean = sameValue,
): { reasons: RestartReason[]; details: string[] } {
  const was = templateOf(before);
  const will = templateOf(after);
  if (same(will, was)) return { reasons: [], details: [] };
  const reasons = new Set<RestartReason>();
  const details: string[] = [];
  const old = new Map(containers(was).map((c) => [c.name, c]));
  for (const c of containers(will)) {
    const prior = old.get(c.name);
    if (!prior) continue;
    if (c.image !== prior.image) {
      reasons.add("image");
      details.push(`image of ${c.name}: ${prior.image ?? "-"} -> ${c.image ?? "-"}`);
    }
    if (!same(c.resources, prior.resources)) {
      reasons.add("resources");
      details.push(
        `resources of ${c.name}: ${JSON.stringify(prior.resources)} -> ${JSON.stringify(c.resources)}`,
      );
    }
  }
  const checksum = (t: PodTemplate) => t.metadata?.annotations?.[CONFIG_CHECKSUM_ANNOTATION];
  if (checksum(will) !== checksum(was) && checksum(will) !== undefined) {
    reasons.add("config");
    details.push(`config checksum ${short(checksum(was))} -> ${short(checksum(will))}`);
  }
  if (!same(tlsVolume(will), tlsVolume(was)) && tlsVolume(will) !== undefined) {
    reasons.add("certificate");
    details.push("the TLS certificate Secret it mounts");
  }
  // A renewed certificate changes only the serial its pods started with (render's withTlsRevision).
  const serial = (t: PodTemplate) => t.metadata?.annotations?.[TLS_REVISION_ANNOTATION];
  if (serial(will) !== serial(was) && serial(will) !== undefined) {
    reasons.add("certificate");
    details.push(`certificate serial ${serial(was) ?? "-"} -> ${serial(will)}`);
  }
  // Whatever else differs: strip what was attributed and compare the rest.
  if (!same(strip(will), strip(was))) {
    reasons.add("template");
    details.push("another part of the pod template");
  }
  return { reasons: [...reasons], details };
}

const short = (s: string | undefined): string => (s ? s.slice(0, 12) : "-");

/** The template without the parts restartReasons names on their own. */
function strip(t: PodTemplate): unknown {
  const copy = structuredClone(t);
  delete copy.metadata?.annotations?.[CONFIG_CHECKSUM_ANNOTATION];
  delete copy.metadata?.annotations?.[TLS_REVISION_ANNOTATION];
  for (const c of containers(copy)) {
    delete c.image;
    delete c.resources;
  }
  if (copy.spec?.volumes)
    copy.spec.volumes = copy.spec.volumes.filter((v) => (v as { name?: string }).name !== "tls");
  return canonical(copy);
}

/** How the workload's controller replaces its pods. */
function rolloutOf(obj: WorkloadObject): string {
  const spec = (obj.spec ?? {}) as {
    strategy?: { rollingUpdate?: { maxSurge?: unknown; maxUnavailable?: unknown } };
    updateStrategy?: StatefulSetUpdateStrategy;
  };
  if (obj.kind === "StatefulSet") {
    const sts = { metadata: obj.metadata, spec: { updateStrategy: spec.updateStrategy } };
    const partition = statefulSetPartition(sts);
    const only = partition > 0 ? ` (ordinals >= ${partition})` : "";
    // Postgres with standbys: controllers/postgres-ha/rolling.ts decides the order.
    if (updatedByOperator(sts))
      return `one member at a time by the operator, standbys first, the primary last after a switchover${only}`;
    return `one pod at a time, highest ordinal first${only}`;
  }
  const r = spec.strategy?.rollingUpdate;
  return `rolling, maxSurge ${text(r?.maxSurge ?? "25%")}, maxUnavailable ${text(r?.maxUnavailable ?? "25%")}`;
}

interface Budget {
  metadata: { name: string };
  spec?: unknown;
}

function budgetOf(obj: WorkloadObject, budgets: readonly Budget[]): string {
  const labels = (obj.spec as { template?: { metadata?: { labels?: Record<string, string> } } } | undefined)
    ?.template?.metadata?.labels;
  for (const pdb of budgets) {
    const spec = (pdb.spec ?? {}) as {
      selector?: { matchLabels?: Record<string, string> };
      maxUnavailable?: unknown;
      minAvailable?: unknown;
    };
    const match = spec.selector?.matchLabels ?? {};
    if (Object.keys(match).length === 0 || !Object.entries(match).every(([k, v]) => labels?.[k] === v))
      continue;
    if (spec.maxUnavailable !== undefined)
      return `${pdb.metadata.name}: maxUnavailable ${text(spec.maxUnavailable)}`;
    if (spec.minAvailable !== undefined)
      return `${pdb.metadata.name}: minAvailable ${text(spec.minAvailable)}`;
  }
  return "none";
}

export const isWorkload = (obj: { kind: string }): boolean =>
  obj.kind === "Deployment" || obj.kind === "StatefulSet";

/** The component an object belongs to (its app.kubernetes.io/name label). */
const componentOf = (obj: WorkloadObject): string | undefined =>
  obj.metadata.labels?.["app.kubernetes.io/name"];

export interface PlanInput {
  /** The workloads and PDBs after the change, in apply order. */
  desired: readonly WorkloadObject[];
  /** The live object of a desired one, if it exists. */
  live: (obj: WorkloadObject) => WorkloadObject | undefined;
  same?: (want: unknown, have: unknown) => boolean;
}

/** One entry per desired workload that exists live and whose change is planned. */
export function restartPlan(input: PlanInput): RestartEntry[] {
  const budgets = input.desired.filter((o) => o.kind === "PodDisruptionBudget") as Budget[];
  const out: RestartEntry[] = [];
  let order = 0;
  for (const obj of input.desired) {
    if (!isWorkload(obj)) continue;
    const current = input.live(obj);
    if (!current) continue;
    const { reasons, details } = restartReasons(current, obj, input.same);
    const entry: RestartEntry = {
      kind: obj.kind,
      name: obj.metadata.name,
      restarts: reasons.length > 0,
      reasons,
      details,
      order: reasons.length > 0 ? ++order : 0,
      rollout: rolloutOf(obj),
      budget: budgetOf(obj, budgets),
    };
    const from = revisionOf(current.metadata.annotations);
    const to = revisionOf(obj.metadata.annotations);
    if (reasons.length > 0 && obj.metadata.annotations?.[TEMPLATE_REVISION_ANNOTATION] && to > from) {
      const declared = changesSince(from)
        .filter((c) => c.revision <= to && c.restart !== "none" && covers(c, obj.kind, componentOf(obj)))
        .map((c) => `r${c.revision} (${c.restart}): ${c.why}`);
      entry.operatorChange = { fromRevision: from, toRevision: to, declared };
    }
    out.push(entry);
  }
  return out;
}

/** Human lines for a plan, restarts first. */
export function formatPlan(plan: readonly RestartEntry[]): string[] {
  const lines: string[] = [];
  for (const e of plan.filter((p) => p.restarts)) {
    lines.push(
      `${e.order}. ${e.kind}/${e.name} restarts (${e.reasons.join(", ")}); ${e.rollout}; budget ${e.budget}`,
    );
    for (const d of e.details) lines.push(`     ${d}`);
    if (e.operatorChange)
      lines.push(
        `     operator-side change r${e.operatorChange.fromRevision} -> r${e.operatorChange.toRevision}${
          e.operatorChange.declared.length > 0 ? `: ${e.operatorChange.declared.join("; ")}` : ""
        }`,
      );
  }
  const still = plan.filter((p) => !p.restarts).map((p) => `${p.kind}/${p.name}`);
  if (still.length > 0) lines.push(`no restart: ${still.join(", ")}`);
  return lines;
}
