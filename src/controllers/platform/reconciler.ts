// The platform reconciler (seed 3.1): one OntoPlatform in, every object of the platform applied in
// the seed's order in one pass, what the spec no longer asks for pruned, and a status that tells
// the truth. Level-triggered: every decision is made again from the informer caches; a reconcile
// that finds nothing to change sends no request at all.
import { randomBytes } from "node:crypto";
import {
  INSTANCE_LABEL,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  NAME_LABEL,
  CONDITION,
  PLATFORM_REF,
  REASON,
  componentByName,
  resolveSpec,
  type OntoPlatform,
  type ConditionType,
  type OntoPlatformStatus,
  type Reason,
  type ResolvedSpec,
  type UpgradeStatus,
} from "../../api/index.js";
import { InvalidError, type KubeClient, type KubeObject } from "../../kube/index.js";
import { PRODUCT_CATALOG, unknownReleases, type ReleaseCatalog } from "../../release/index.js";
import {
  GENERATED_SECRET_LABEL,
  apiVersionOf,
  servedKinds,
  type Capabilities,
  type ManagedKind,
  type RenderedObject,
  type SecretGenerator,
  type UpgradeStep,
} from "../../render/index.js";
import type { Logger, Request, Result, Store } from "../../runtime/index.js";
import { errorFields, setCondition } from "../../runtime/index.js";
import type { ActionRecorder, ActionVerb } from "../actions.js";
import { applyNeed, withAppliedHash } from "./drift.js";
import { mergePatchDiff } from "./merge-patch.js";
import { namespaceSecurity } from "./namespace-security.js";
import { quotaProblems } from "./quota.js";
import { decodeGeneratedSecrets, renderFor } from "./render-input.js";
import { computeStatus, type SpecProblem, type ComponentWorkload } from "./status.js";
import { verticalScalingStatus } from "./vertical.js";

const VPA_REF = { apiVersion: "autoscaling.k8s.io/v1", kind: "VerticalPodAutoscaler" } as const;
/** Seed 3.1: a platform that is in order is looked at again every five minutes. */
const RESYNC_MS = 5 * 60_000;
/** While components are coming up, look again soon even if no watch event arrives. */
const PROGRESS_RECHECK_MS = 15_000;

/** A decision of the upgrade orchestrator, note for note what the reconciler does with it. */
export interface UpgradeDecision {
  /** Which version each component runs this reconcile; absent: spec.version everywhere. */
  step?: UpgradeStep | undefined;
  /**
   * The new status.upgrade, written before anything is applied (write-ahead), so a crash between
   * the write and the apply resumes the step it decided; absent: unchanged.
   */
  upgrade?: UpgradeStatus | undefined;
  /** The Upgrading condition, written with `upgrade`. */
  condition?: { status: "True" | "False"; reason: Reason; message: string } | undefined;
  /** What was decided, recorded (Event + audit line) once the write-ahead succeeded. */
  notes?: {
    reason: string;
    message: string;
    target: { apiVersion: string; kind: string; name: string };
    warning?: boolean;
  }[];
  /** Pods to delete after the objects are applied (a StatefulSet pod stuck on a bad revision). */
  deletePods?: { name: string; reason: string; message: string }[];
  /** Look again this soon (a soak ending, a timeout). */
  requeueAfterMs?: number | undefined;
  /** Called once the write-ahead succeeded (metrics of finished upgrades). */
  committed?: () => void;
}

/** Extension points the upgrade orchestrator and the healer plug into. */
export interface PlatformHooks {
  /** The upgrade step of this reconcile; undefined: no upgrade, spec.version everywhere. */
  upgradeStep?(platform: OntoPlatform, spec: ResolvedSpec): Promise<UpgradeDecision | undefined>;
}

export interface PlatformReconcilerDeps {
  client: KubeClient;
  /** The informer cache of a kind for a namespace (shared informers; see operator.ts). */
  cache: (kind: { apiVersion: string; kind: string }, namespace: string) => Store<KubeObject>;
  /** What the cluster serves beyond the built-in APIs (refreshed by the caller). */
  capabilities: () => Capabilities;
  actions: ActionRecorder;
  logger: Logger;
  now?: () => Date;
  generateSecret?: SecretGenerator;
  hooks?: PlatformHooks;
  /** Release lookup; default the product catalog (tests add releases with failing images). */
  releases?: ReleaseCatalog;
}

function objectId(kind: string | undefined, name: string | undefined): string {
  return `${kind ?? "?"}/${name ?? "?"}`;
}

/** 32 characters from a URL-safe alphabet; `length` caps it for keys that need fewer. */
export const randomSecret: SecretGenerator = ({ length }) =>
  randomBytes(Math.ceil((length * 3) / 4) + 3)
    .toString("base64url")
    .replace(/[-_]/g, "x")
    .slice(0, length);

export class PlatformReconciler {
  private readonly now: () => Date;
  private readonly generate: SecretGenerator;
  private readonly releases: ReleaseCatalog;
  private counter = 0;
  /**
   * The last status this reconciler wrote per platform uid, with the resourceVersion the write
   * produced: while the cache holds an older version it has not seen the write yet, and a decision
   * taken from it (an upgrade step) would be taken from stale state.
   */
  private readonly written = new Map<string, { after: string; status: OntoPlatformStatus }>();

  constructor(private readonly deps: PlatformReconcilerDeps) {
    this.now = deps.now ?? (() => new Date());
    this.generate = deps.generateSecret ?? randomSecret;
    this.releases = deps.releases ?? PRODUCT_CATALOG;
  }

  /** The managed kinds this cluster serves (optional ones only when discovered). */
  servedKinds(): ManagedKind[] {
    return servedKinds(this.deps.capabilities());
  }

  async reconcile(request: Request): Promise<Result> {
    const { namespace, name } = request;
    const cached = this.deps.cache(PLATFORM_REF, namespace ?? "").getByName(namespace, name) as
      OntoPlatform | undefined;
    if (!cached || cached.metadata.uid === undefined) return {};
    let platform = this.withOwnWrites(cached);
    // Deletion: owner references let the garbage collector remove the children.
    if ((platform.metadata as { deletionTimestamp?: string }).deletionTimestamp) return {};
    const reconcileId = `${name}-${(this.counter++).toString(36)}-${Date.now().toString(36)}`;
    const log = this.deps.logger.child({ platform: `${namespace}/${name}`, reconcileId });

    const taken = this.namespaceTakenBy(platform);
    if (taken) {
      await this.writeStatus(platform, {
        ...platform.status,
        phase: "Error",
        observedGeneration: platform.metadata.generation ?? 0,
        conditions: this.conditionsWith(
          platform,
          CONDITION.Degraded,
          "True",
          REASON.NamespaceTaken,
          `OntoPlatform ${taken} already manages namespace ${namespace}; one platform per namespace`,
        ),
      });
      return {};
    }

    let spec: ResolvedSpec;
    try {
      spec = resolveSpec(platform.spec);
    } catch (err) {
      const message = errorFields(err).error;
      await this.writeStatus(platform, {
        ...platform.status,
        phase: "Error",
        observedGeneration: platform.metadata.generation ?? 0,
        conditions: this.conditionsWith(platform, CONDITION.Degraded, "True", REASON.InvalidSpec, message),
      });
      return {};
    }

    // A version no release describes: say which, and change nothing (the platform keeps what it runs).
    const unknown = unknownReleases(this.releases, spec.version, platform.status);
    if (unknown) {
      await this.writeStatus(platform, {
        ...platform.status,
        phase: platform.status?.version ? "Degraded" : "Error",
        observedGeneration: platform.metadata.generation ?? 0,
        conditions: this.conditionsWith(platform, CONDITION.Degraded, "True", REASON.UnknownRelease, unknown),
      });
      return {};
    }

    if (spec.paused) {
      const status = this.statusFor(platform, spec, {
        applyErrors: [],
        problems: [],
        changed: 0,
        paused: true,
      });
      await this.writeStatus(platform, status);
      return {};
    }

    platform = await this.withVerticalScaling(platform, spec, reconcileId);
    const decision = await this.deps.hooks?.upgradeStep?.(platform, spec);
    if (decision) platform = await this.writeAhead(platform, decision, reconcileId);
    const desired = this.render(platform, spec, decision?.step).map(withAppliedHash);
    const problems = [
      ...this.specProblems(platform, spec),
      ...quotaProblems(desired, spec.tenancy.mode === "namespace" ? spec.tenancy.resourceQuota : undefined),
    ];
    const applyErrors: string[] = [];
    let changed = await this.secureNamespace(platform, spec, reconcileId, applyErrors);

    for (const obj of desired) {
      const id = objectId(obj.kind, obj.metadata.name);
      const live = this.deps
        .cache(obj, obj.metadata.namespace)
        .getByName(obj.metadata.namespace, obj.metadata.name);
      const need = applyNeed(obj, live);
      if (!need.apply) continue;
      const verb: ActionVerb = need.reason === "Missing" ? "create" : "update";
      const message =
        need.reason === "Missing"
          ? `created ${id}`
          : need.reason === "Drift"
            ? `reverted manual change of ${id} at ${need.path ?? "?"}`
            : `updated ${id} to the spec`;
      try {
        await this.applyObject(obj, live);
        changed++;
        this.record(platform, reconcileId, verb, obj, need.reason, message, "ok");
      } catch (err) {
        const detail = errorFields(err).error;
        applyErrors.push(`${id}: ${detail}`);
        this.record(
          platform,
          reconcileId,
          verb,
          obj,
          "ApplyFailed",
          `could not apply ${id}`,
          "error",
          detail,
        );
      }
    }

    changed += await this.prune(platform, spec, desired, reconcileId, applyErrors);
    changed += await this.replaceStuckStatefulPods(platform, reconcileId, applyErrors);
    changed += await this.deletePods(platform, decision?.deletePods ?? [], reconcileId, applyErrors);

    const status = this.statusFor(platform, spec, { applyErrors, problems, changed, paused: false });
    await this.writeStatus(platform, status);
    log.debug({ changed, errors: applyErrors.length, phase: status.phase }, "reconciled");
    if (applyErrors.length > 0)
      throw new Error(`apply failed for ${applyErrors.length} object(s): ${applyErrors[0]}`);
    const requeueAfterMs = status.phase === "Running" ? RESYNC_MS : PROGRESS_RECHECK_MS;
    return { requeueAfterMs: Math.min(requeueAfterMs, decision?.requeueAfterMs ?? requeueAfterMs) };
  }

  /** The cached platform, with the status this reconciler last wrote if the cache has not seen it yet. */
  private withOwnWrites(platform: OntoPlatform): OntoPlatform {
    const uid = platform.metadata.uid ?? "";
    const own = this.written.get(uid);
    if (!own) return platform;
    if (!olderThan(platform.metadata.resourceVersion, own.after)) {
      this.written.delete(uid);
      return platform;
    }
    return { ...platform, status: own.status };
  }

  /**
   * The platform with status.verticalScaling computed from its VPAs (when the API is served),
   * written before anything is applied (as an upgrade step is), so the requests render applies
   * from it survive a crash between the two; a change of the applied requests is recorded (Event,
   * audit line), the rollout it causes by the apply.
   */
  private async withVerticalScaling(
    platform: OntoPlatform,
    spec: ResolvedSpec,
    reconcileId: string,
  ): Promise<OntoPlatform> {
    const ns = platform.metadata.namespace;
    const previous = platform.status?.verticalScaling;
    const vpas = this.deps.capabilities().verticalPodAutoscaler
      ? this.deps.cache(VPA_REF, ns).byNamespace(ns)
      : [];
    const next = verticalScalingStatus({
      spec,
      platformName: platform.metadata.name,
      previous,
      vpas,
      now: this.now(),
    });
    for (const [name, state] of Object.entries(next ?? {})) {
      if (!state.applied || state.appliedAt === previous?.[name]?.appliedAt) continue;
      const amounts = Object.entries(state.applied)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ");
      this.record(
        platform,
        reconcileId,
        "status",
        { ...VPA_REF, namespace: ns, name },
        "VerticalScalingApplied",
        `requests of ${name} set to ${amounts} from the VerticalPodAutoscaler's recommendation`,
        "ok",
      );
    }
    const { verticalScaling: _previous, ...rest } = platform.status ?? {};
    const status: OntoPlatformStatus = { ...rest, ...(next ? { verticalScaling: next } : {}) };
    await this.writeStatus(platform, status);
    return { ...platform, status };
  }

  /** Persists the upgrade decision before acting on it, then records what was decided. */
  private async writeAhead(
    platform: OntoPlatform,
    decision: UpgradeDecision,
    reconcileId: string,
  ): Promise<OntoPlatform> {
    if (!decision.upgrade && !decision.condition) return platform;
    let status: OntoPlatformStatus = {
      ...platform.status,
      ...(decision.upgrade ? { upgrade: decision.upgrade } : {}),
    };
    if (decision.condition) {
      status = {
        ...status,
        conditions: setCondition(
          status.conditions ?? [],
          {
            type: CONDITION.Upgrading,
            ...decision.condition,
            observedGeneration: platform.metadata.generation ?? 0,
          },
          this.now(),
        ),
      };
    }
    await this.writeStatus(platform, status);
    for (const note of decision.notes ?? []) {
      this.deps.actions.record({
        platform,
        verb: "status",
        target: { ...note.target, namespace: platform.metadata.namespace },
        reason: note.reason,
        message: note.message,
        reconcileId,
        actor: "upgrade",
        outcome: "ok",
        warning: note.warning,
      });
    }
    decision.committed?.();
    return { ...platform, status };
  }

  /** Deletes pods the upgrade asked to replace (they are recreated by their controller). */
  private async deletePods(
    platform: OntoPlatform,
    pods: { name: string; reason: string; message: string }[],
    reconcileId: string,
    applyErrors: string[],
  ): Promise<number> {
    let deleted = 0;
    for (const pod of pods) {
      const target = {
        apiVersion: "v1",
        kind: "Pod",
        namespace: platform.metadata.namespace,
        name: pod.name,
      };
      try {
        await this.deps.client.delete(target);
        deleted++;
        this.record(platform, reconcileId, "delete", target, pod.reason, pod.message, "ok");
      } catch (err) {
        const detail = errorFields(err).error;
        applyErrors.push(`delete Pod/${pod.name}: ${detail}`);
        this.record(platform, reconcileId, "delete", target, pod.reason, pod.message, "error", detail);
      }
    }
    return deleted;
  }

  /** The objects the operator applies for `platform` (also what `onto render` prints). */
  render(platform: OntoPlatform, spec: ResolvedSpec, upgrade?: UpgradeStep): RenderedObject[] {
    const ns = platform.metadata.namespace;
    return renderFor(platform, spec, {
      capabilities: this.deps.capabilities(),
      releases: this.releases,
      existingSecrets: decodeGeneratedSecrets(
        this.deps.cache({ apiVersion: "v1", kind: "Secret" }, ns).byNamespace(ns),
        platform.metadata.name,
      ),
      generateSecret: this.generate,
      upgrade,
    });
  }

  private async applyObject(obj: RenderedObject, live: KubeObject | undefined): Promise<void> {
    try {
      await this.deps.client.apply(obj, { force: true });
    } catch (err) {
      // A Job's pod template is immutable: a changed Job is replaced, which is what re-running it means.
      if (obj.kind === "Job" && live && err instanceof InvalidError) {
        await this.deps.client.delete(
          {
            apiVersion: obj.apiVersion,
            kind: obj.kind,
            namespace: obj.metadata.namespace,
            name: obj.metadata.name,
          },
          { propagationPolicy: "Background" },
        );
        await this.deps.client.create(obj);
        return;
      }
      throw err;
    }
  }

  /** Labels a tenant namespace to enforce the restricted Pod Security Standard; 1 when it changed. */
  private async secureNamespace(
    platform: OntoPlatform,
    spec: ResolvedSpec,
    reconcileId: string,
    applyErrors: string[],
  ): Promise<number> {
    const wanted = namespaceSecurity(platform.metadata.namespace, spec);
    if (!wanted) return 0;
    const live = this.deps.cache(wanted, "").getByName(undefined, wanted.metadata.name);
    const missing = Object.entries(wanted.metadata.labels).filter(
      ([k, v]) => live?.metadata?.labels?.[k] !== v,
    );
    if (live && missing.length === 0) return 0;
    const target = { apiVersion: "v1", kind: "Namespace", name: wanted.metadata.name };
    try {
      await this.deps.client.apply(wanted, { force: true });
      this.record(
        platform,
        reconcileId,
        "patch",
        target,
        "PodSecurityRestricted",
        `namespace ${wanted.metadata.name} now enforces the restricted Pod Security Standard`,
        "ok",
      );
      return 1;
    } catch (err) {
      const detail = errorFields(err).error;
      applyErrors.push(`Namespace/${wanted.metadata.name}: ${detail}`);
      this.record(
        platform,
        reconcileId,
        "patch",
        target,
        "PodSecurityFailed",
        `could not label namespace ${wanted.metadata.name}`,
        "error",
        detail,
      );
      return 0;
    }
  }

  /** Deletes what this platform created earlier and the spec no longer asks for. */
  private async prune(
    platform: OntoPlatform,
    spec: ResolvedSpec,
    desired: RenderedObject[],
    reconcileId: string,
    applyErrors: string[],
  ): Promise<number> {
    const wanted = new Set(desired.map((o) => objectId(o.kind, o.metadata.name)));
    let pruned = 0;
    for (const kind of this.servedKinds()) {
      const ref = { apiVersion: apiVersionOf(kind), kind: kind.kind };
      const owned = this.deps
        .cache(ref, platform.metadata.namespace)
        .byNamespace(platform.metadata.namespace)
        .filter(
          (o) =>
            o.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY &&
            o.metadata.labels[INSTANCE_LABEL] === platform.metadata.name &&
            (o.metadata.ownerReferences ?? []).some((r) => r.uid === platform.metadata.uid),
        );
      for (const obj of owned) {
        const name = obj.metadata?.name ?? "";
        const id = objectId(kind.kind, name);
        if (wanted.has(id)) continue;
        if (
          kind.kind === "Secret" &&
          obj.metadata?.labels?.[GENERATED_SECRET_LABEL] &&
          spec.retentionPolicy.secrets === "Retain"
        )
          continue;
        const target = { ...ref, namespace: platform.metadata.namespace, name };
        try {
          await this.deps.client.delete(target, { propagationPolicy: "Background" });
          pruned++;
          this.record(
            platform,
            reconcileId,
            "delete",
            target,
            "Pruned",
            `pruned ${id}: the spec no longer asks for it`,
            "ok",
          );
        } catch (err) {
          const detail = errorFields(err).error;
          applyErrors.push(`prune ${id}: ${detail}`);
          this.record(
            platform,
            reconcileId,
            "delete",
            target,
            "PruneFailed",
            `could not prune ${id}`,
            "error",
            detail,
          );
        }
      }
    }
    return pruned;
  }

  /** What the spec asks for that the cluster cannot give, each naming its field. */
  private specProblems(platform: OntoPlatform, spec: ResolvedSpec): SpecProblem[] {
    const problems: SpecProblem[] = [];
    const ns = platform.metadata.namespace;
    const secrets = this.deps.cache({ apiVersion: "v1", kind: "Secret" }, ns);
    const need = (field: string, secretName: string | undefined): void => {
      if (secretName && !secrets.getByName(ns, secretName)) {
        problems.push({
          field,
          reason: REASON.MissingTLSSecret,
          message: `Secret ${ns}/${secretName} does not exist`,
        });
      }
    };
    if (spec.global.tlsEnabled) need("spec.global.tlsSecretName", spec.global.tlsSecretName);
    const ingress = spec.gateway.ingress;
    if (ingress.enabled && ingress.tls) {
      need(
        ingress.tlsSecretName ? "spec.gateway.ingress.tlsSecretName" : "spec.global.tlsSecretName",
        ingress.tlsSecretName ?? spec.global.tlsSecretName,
      );
    }
    return problems.filter((p, i) => problems.findIndex((q) => q.message === p.message) === i);
  }

  private statusFor(
    platform: OntoPlatform,
    spec: ResolvedSpec,
    outcome: { applyErrors: string[]; problems: SpecProblem[]; changed: number; paused: boolean },
  ): OntoPlatformStatus {
    const workloads = new Map<string, ComponentWorkload>();
    const unschedulable = this.unschedulablePods(platform);
    for (const component of ["Deployment", "StatefulSet"] as const) {
      const store = this.deps.cache({ apiVersion: "apps/v1", kind: component }, platform.metadata.namespace);
      for (const obj of store.byNamespace(platform.metadata.namespace)) {
        const info = componentByName(obj.metadata?.name ?? "");
        if (!info || info.kind !== component) continue;
        if (obj.metadata?.labels?.[INSTANCE_LABEL] !== platform.metadata.name) continue;
        const view = obj as KubeObject & Pick<ComponentWorkload, "spec" | "status">;
        workloads.set(info.name, {
          kind: component,
          ...(obj.metadata.generation !== undefined ? { generation: obj.metadata.generation } : {}),
          labels: obj.metadata.labels,
          ...(view.spec ? { spec: view.spec } : {}),
          ...(view.status ? { status: view.status } : {}),
          ...(unschedulable.has(info.name) ? { unschedulable: unschedulable.get(info.name) } : {}),
        });
      }
    }
    return computeStatus({
      spec,
      generation: platform.metadata.generation ?? 0,
      previous: platform.status,
      workloads,
      ...outcome,
      now: this.now(),
    });
  }

  /**
   * A StatefulSet never replaces a pod of an old revision that cannot start (Kubernetes waits for
   * it to become Ready first), so after a spec fix such as a corrected node pool the platform would
   * stay stuck. A pod of an outdated revision that the scheduler cannot place, at or above the
   * rollout partition (pods below it keep the old revision on purpose during an upgrade), is
   * deleted so the StatefulSet recreates it from the current revision.
   */
  private async replaceStuckStatefulPods(
    platform: OntoPlatform,
    reconcileId: string,
    applyErrors: string[],
  ): Promise<number> {
    const ns = platform.metadata.namespace;
    const pods = this.deps.cache({ apiVersion: "v1", kind: "Pod" }, ns).byNamespace(ns);
    let replaced = 0;
    type Sts = KubeObject & {
      spec?: { updateStrategy?: { rollingUpdate?: { partition?: number } } };
      status?: { updateRevision?: string };
    };
    type PodView = KubeObject & {
      status?: { phase?: string; conditions?: { type: string; status: string }[] };
    };
    for (const sts of this.deps
      .cache({ apiVersion: "apps/v1", kind: "StatefulSet" }, ns)
      .byNamespace(ns) as Sts[]) {
      const name = sts.metadata?.name ?? "";
      if (sts.metadata?.labels?.[INSTANCE_LABEL] !== platform.metadata.name || !sts.status?.updateRevision)
        continue;
      const partition = sts.spec?.updateStrategy?.rollingUpdate?.partition ?? 0;
      for (const pod of pods as PodView[]) {
        const podName = pod.metadata?.name ?? "";
        const ordinal = Number(podName.slice(name.length + 1));
        if (!podName.startsWith(`${name}-`) || !Number.isInteger(ordinal) || ordinal < partition) continue;
        if (pod.metadata?.deletionTimestamp || pod.status?.phase !== "Pending") continue;
        if (pod.metadata?.labels?.["controller-revision-hash"] === sts.status.updateRevision) continue;
        const unschedulable = pod.status.conditions?.some(
          (c) => c.type === "PodScheduled" && c.status === "False",
        );
        if (!unschedulable) continue;
        const target = { apiVersion: "v1", kind: "Pod", namespace: ns, name: podName };
        try {
          await this.deps.client.delete(target);
          replaced++;
          this.record(
            platform,
            reconcileId,
            "delete",
            target,
            "StuckPodReplaced",
            `deleted ${podName}: an outdated revision the scheduler cannot place; StatefulSet ${name} recreates it from the current spec`,
            "ok",
          );
        } catch (err) {
          const detail = errorFields(err).error;
          applyErrors.push(`Pod/${podName}: ${detail}`);
          this.record(
            platform,
            reconcileId,
            "delete",
            target,
            "StuckPodReplaceFailed",
            `could not replace stuck pod ${podName}`,
            "error",
            detail,
          );
        }
      }
    }
    return replaced;
  }

  /** Per component, the scheduler's message for one of its pods it cannot place (from the Pod cache). */
  private unschedulablePods(platform: OntoPlatform): Map<string, string> {
    const ns = platform.metadata.namespace;
    const found = new Map<string, string>();
    for (const pod of this.deps.cache({ apiVersion: "v1", kind: "Pod" }, ns).byNamespace(ns)) {
      const labels = pod.metadata?.labels;
      const component = labels?.[NAME_LABEL];
      if (!component || labels[INSTANCE_LABEL] !== platform.metadata.name || pod.metadata?.deletionTimestamp)
        continue;
      const conditions = (
        pod as KubeObject & { status?: { conditions?: { type: string; status: string; message?: string }[] } }
      ).status?.conditions;
      const scheduled = conditions?.find((c) => c.type === "PodScheduled");
      if (scheduled?.status === "False" && scheduled.message && !found.has(component)) {
        found.set(component, scheduled.message.split("\n")[0]?.slice(0, 300) ?? "");
      }
    }
    return found;
  }

  private conditionsWith(
    platform: OntoPlatform,
    type: ConditionType,
    status: "True" | "False",
    reason: Reason,
    message: string,
  ) {
    const others = (platform.status?.conditions ?? []).filter((c) => c.type !== type);
    const previous = platform.status?.conditions?.find((c) => c.type === type);
    const lastTransitionTime =
      previous && previous.status === status
        ? previous.lastTransitionTime
        : this.now()
            .toISOString()
            .replace(/\.\d{3}Z$/, "Z");
    return [
      ...others,
      {
        type,
        status,
        reason,
        message,
        lastTransitionTime,
        observedGeneration: platform.metadata.generation ?? 0,
      },
    ];
  }

  /** Writes status only when it differs from what the cache holds. */
  private async writeStatus(platform: OntoPlatform, status: OntoPlatformStatus): Promise<void> {
    const patch = mergePatchDiff(platform.status ?? {}, status);
    if (patch === undefined) return;
    const written = await this.deps.client.patchStatus<OntoPlatform & KubeObject>(
      { ...PLATFORM_REF, namespace: platform.metadata.namespace, name: platform.metadata.name },
      patch,
    );
    const after = written.metadata?.resourceVersion;
    if (after) this.written.set(platform.metadata.uid ?? "", { after, status: written.status ?? status });
  }

  private namespaceTakenBy(platform: OntoPlatform): string | undefined {
    const others = this.deps
      .cache(PLATFORM_REF, platform.metadata.namespace)
      .byNamespace(platform.metadata.namespace)
      .filter((p) => p.metadata?.name !== platform.metadata.name && !p.metadata?.deletionTimestamp);
    // Timestamps from the watch are RFC 3339 strings, which sort as time does.
    const stamp = (p: KubeObject): string => {
      const t = p.metadata?.creationTimestamp;
      return typeof t === "string" ? t : "";
    };
    const key = (p: KubeObject): string => `${stamp(p)}/${p.metadata?.name ?? ""}`;
    const older = others.filter((p) => key(p) < key(platform as unknown as KubeObject));
    return older[0]?.metadata?.name;
  }

  private record(
    platform: OntoPlatform,
    reconcileId: string,
    verb: ActionVerb,
    obj: { apiVersion: string; kind: string; namespace?: string; name: string } | RenderedObject,
    reason: string,
    message: string,
    outcome: "ok" | "error",
    error?: string,
  ): void {
    this.deps.actions.record({
      platform: platform,
      verb,
      target:
        "metadata" in obj
          ? {
              apiVersion: obj.apiVersion,
              kind: obj.kind,
              namespace: obj.metadata.namespace,
              name: obj.metadata.name,
            }
          : obj,
      reason,
      message,
      reconcileId,
      actor: "reconciler",
      outcome,
      error,
    });
  }
}

/**
 * Whether the cache's resourceVersion is older than one this process wrote. Resource versions are
 * opaque to clients in general; the API server's etcd storage makes them increasing integers, and
 * anything else is taken as caught up (the cache is then trusted, as before this guard existed).
 */
function olderThan(cached: string | undefined, written: string): boolean {
  if (cached === undefined) return true;
  if (!/^\d+$/.test(cached) || !/^\d+$/.test(written)) return false;
  return BigInt(cached) < BigInt(written);
}
