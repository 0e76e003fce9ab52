// Every action the operator takes on the cluster leaves three traces (seed 8.2): a Kubernetes
// Event on the OntoPlatform, one JSON audit line (what, why, which object, which reconcile), and
// a metric. Records carry names, kinds and reasons only, never object content, so no secret
// value can reach the Event stream or the audit log.
import { closeSync, openSync, writeSync } from "node:fs";
import type { Counter, Registry } from "prom-client";
import type { KubeObject } from "../../kube/index.js";
import { sharedCounter, type EventRecorder } from "../../runtime/index.js";

export type ActionVerb =
  "create" | "update" | "delete" | "force-delete" | "patch" | "status" | "promote" | "fence" | "reload";

export interface ActionRecord {
  /** The OntoPlatform the action is for; the Event is attached to it. */
  platform: KubeObject;
  verb: ActionVerb;
  /** The object acted on. */
  target: { apiVersion: string; kind: string; namespace?: string | undefined; name: string };
  /** CamelCase reason, e.g. Missing, Drift, SpecChanged, Pruned, OOMKilled. */
  reason: string;
  /** One sentence for a person. */
  message: string;
  /** Correlates every action of one reconcile. */
  reconcileId: string;
  /** Which part of the operator acted: reconciler, upgrade, healer. */
  actor: string;
  outcome: "ok" | "error";
  error?: string | undefined;
  warning?: boolean | undefined;
  /** Its Event is part of a summary (see act.ts's actAll): only the audit line and the metric here. */
  summarized?: boolean | undefined;
}

export interface AuditSink {
  write(line: string): void;
}

/**
 * Audit lines to a file (appended) or to stdout. A file line is written synchronously: it reaches
 * the kernel before the next action starts, so an operator killed right after an action (SIGKILL,
 * OOM) still leaves its line. A buffered stream lost the line of a canary created just before a
 * kill, and the audit then showed no create for an object that existed.
 */
export function auditSink(path: string | undefined): AuditSink & { close(): void } {
  if (!path || path === "-") return { write: (line) => process.stdout.write(line), close: () => undefined };
  const fd = openSync(path, "a");
  let open = true;
  return {
    write: (line) => {
      if (open) writeSync(fd, line);
    },
    close: () => {
      if (open) closeSync(fd);
      open = false;
    },
  };
}

export class ActionRecorder {
  private readonly counter: Counter<"actor" | "verb" | "kind" | "outcome">;

  constructor(
    private readonly events: EventRecorder | undefined,
    private readonly audit: AuditSink,
    registry: Registry,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.counter = sharedCounter(registry, {
      name: "onto_actions_total",
      help: "Actions the operator took on the cluster, by actor, verb, kind and outcome.",
      labelNames: ["actor", "verb", "kind", "outcome"],
    });
  }

  record(action: ActionRecord): void {
    const { platform, target } = action;
    this.counter.inc({ actor: action.actor, verb: action.verb, kind: target.kind, outcome: action.outcome });
    this.audit.write(
      JSON.stringify({
        time: this.now().toISOString(),
        audit: true,
        actor: action.actor,
        verb: action.verb,
        reason: action.reason,
        message: action.message,
        outcome: action.outcome,
        ...(action.error ? { error: action.error } : {}),
        object: {
          apiVersion: target.apiVersion,
          kind: target.kind,
          namespace: target.namespace,
          name: target.name,
        },
        platform: {
          namespace: platform.metadata?.namespace,
          name: platform.metadata?.name,
          uid: platform.metadata?.uid,
        },
        reconcileId: action.reconcileId,
      }) + "\n",
    );
    if (!this.events || action.summarized) return;
    const note = action.outcome === "ok" ? action.message : `${action.message}: ${action.error ?? "failed"}`;
    if (action.outcome === "error" || action.warning) {
      this.events.warning(platform, action.reason, action.verb, note);
    } else {
      this.events.normal(platform, action.reason, action.verb, note);
    }
  }

  /** An Event about a decision that acts on nothing (a change that waits); no audit line, no metric. */
  notice(platform: KubeObject, reason: string, note: string): void {
    this.events?.normal(platform, reason, "Wait", note);
  }

  /**
   * One Event for several actions already recorded with `summarized` (their audit lines and
   * metrics name each object; the Event says what happened to the platform as a whole).
   */
  summary(platform: KubeObject, verb: ActionVerb, reason: string, note: string): void {
    this.events?.normal(platform, reason, verb, note);
  }
}
