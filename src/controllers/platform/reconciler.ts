// The platform reconciler (seed 3.1): one OntoPlatform in, every object of the platform applied in
// the seed's order in one pass, what the spec no longer asks for pruned, and a status that tells
// the truth. Level-triggered: every decision is made again from the informer caches; a reconcile
// that finds nothing to change sends no request at all. The steps below follow the data flow;
// each concern lives in its own file, its decisions pure, its actions run through act().
import {
  PLATFORM_REF,
  REASON,
  type OntoPlatform,
  type OntoPlatformStatus,
  type ResolvedSpec,
} from "../../api/index.js";
import { isServerUnavailable, type KubeClient, type KubeObject } from "../../kube/index.js";
import { PRODUCT_CATALOG, type ReleaseCatalog } from "../../release/index.js";
import {
  servedKinds,
  type Capabilities,
  type ManagedKind,
  type RenderedObject,
  type SecretGenerator,
  type UpgradeStep,
} from "../../render/index.js";
import type { ReadonlyStore, Request, Result } from "../../runtime/index.js";
import type { Registry } from "prom-client";
import { actAll, record, type ActionContext, type ClusterAction } from "../shared/act.js";
import type { ActionRecorder } from "../shared/actions.js";
import { isTerminating } from "../shared/kube-views.js";
import type { PlatformHooks } from "../shared/upgrade-decision.js";
import { objectId, planApply } from "./apply.js";
import { CertificateMetrics } from "./certificate-metrics.js";
import { CERTIFICATE_REF, certificateReady, readIssuer } from "./cert-manager.js";
import {
  liveTlsSerial,
  planCertificates,
  withPlatformCertificate,
  type CertManagerView,
} from "./certificates.js";
import { fleetWaitText, type FleetLimit } from "../shared/fleet-limit.js";
import { decideDisruption, holdForFleet, wantsFleetSlot, type Disruption } from "./disruption.js";
import { withAppliedHash } from "./drift.js";
import { ForeignFieldReader } from "./foreign.js";
import { checkGates } from "./gates.js";
import { planNamespaceLabels } from "./namespace-labels.js";
import { placementProblems } from "./placement.js";
import { planPrune } from "./prune.js";
import { quotaProblems } from "./quota.js";
import { decodeGeneratedSecrets, randomSecret, renderFor } from "./render-input.js";
import { findNamesakes } from "./namesakes.js";
import { tlsProblems } from "./spec-problems.js";
import { platformStatus, type Outcome } from "./status-input.js";
import { StatusWriter } from "../shared/status-writer.js";
import { ProgressPace } from "./status-pace.js";
import { planRecreations } from "./statefulset-recreate.js";
import { storageClassProblems } from "./storage-class.js";
import { planStuckPodReplacement, planUpgradePodDeletions } from "./stuck-pods.js";
import { VPA_REF } from "./vertical.js";
import {
  CLAIM_REF,
  STORAGE_CLASS_REF,
  planClaimGrowth,
  planVolumeGrowth,
  withKeptStorage,
} from "./volume-growth.js";
import { writeAhead, writeVerticalScaling } from "./write-ahead.js";
import { OwnCreates } from "./own-creates.js";

const refOf = (obj: RenderedObject) => ({
  apiVersion: obj.apiVersion,
  kind: obj.kind,
  namespace: obj.metadata.namespace,
  name: obj.metadata.name,
});

/** Seed 3.1: a platform that is in order is looked at again every five minutes. */
const RESYNC_MS = 5 * 60_000;
/** While components are coming up, look again soon even if no watch event arrives. */
const PROGRESS_RECHECK_MS = 15_000;

type Ref = { apiVersion: string; kind: string };

export interface PlatformReconcilerDeps {
  client: KubeClient;
  /** The synced informer cache of a kind for a namespace (see operator.ts). */
  cache: (kind: Ref, namespace: string) => ReadonlyStore<KubeObject>;
  /** What the cluster serves beyond the built-in APIs (refreshed by the caller). */
  capabilities: () => Capabilities;
  actions: ActionRecorder;
  now?: () => Date;
  generateSecret?: SecretGenerator;
  hooks?: PlatformHooks;
  /** Release lookup; default the product catalog (tests add releases with failing images). */
  releases?: ReleaseCatalog;
  /** Where the certificate expiry gauge is exported (absent: not exported). */
  registry?: Registry;
  /** The operator's fleet limit (absent: no limit). */
  fleet?: FleetLimit;
}

export class PlatformReconciler {
  private readonly now: () => Date;
  private readonly releases: ReleaseCatalog;
  private readonly status = new StatusWriter();
  private readonly foreign = new ForeignFieldReader();
  private readonly ownCreates = new OwnCreates();
  private readonly pace = new ProgressPace();
  private readonly certificateMetrics: CertificateMetrics | undefined;

  constructor(private readonly deps: PlatformReconcilerDeps) {
    this.now = deps.now ?? (() => new Date());
    this.releases = deps.releases ?? PRODUCT_CATALOG;
    this.certificateMetrics = deps.registry ? new CertificateMetrics(deps.registry) : undefined;
  }

  /** The managed kinds this cluster serves (optional ones only when discovered). */
  servedKinds(): ManagedKind[] {
    return servedKinds(this.deps.capabilities());
  }

  /** With spec.global.tls.issuerRef: cert-manager's Certificate and, while it is not Ready, the issuer. */
  private async certManagerView(
    client: KubeClient,
    ns: string,
    spec: ResolvedSpec,
  ): Promise<CertManagerView | undefined> {
    const ref = spec.global.tls.issuerRef;
    const name = spec.global.tlsSecretName;
    if (!ref || !name) return undefined;
    if (!this.deps.capabilities().certManager)
      return { served: false, certificate: undefined, issuer: undefined };
    const certificate = this.deps.cache(CERTIFICATE_REF, ns).getByName(ns, name);
    const issuer = certificateReady(certificate) ? undefined : await readIssuer(client, ref, ns);
    return { served: true, certificate, issuer };
  }

  async reconcile(cached: OntoPlatform, request: Request): Promise<Result> {
    const key = `${cached.metadata.namespace}/${cached.metadata.name}`;
    // Deletion: owner references let the garbage collector remove the children.
    if (cached.metadata.uid === undefined || isTerminating(cached)) {
      this.deps.fleet?.forget(key);
      this.pace.forget(cached.metadata.uid ?? "");
      return {};
    }
    let platform = this.status.latest(cached);
    const ns = platform.metadata.namespace;
    const client = this.deps.client.withSignal(request.signal);
    const ctx: ActionContext = {
      client,
      recorder: this.deps.actions,
      actor: "reconciler",
      platform,
      reconcileId: request.id,
    };
    const store = (kind: Ref, namespace = ns) => this.deps.cache(kind, namespace);
    const objects = (apiVersion: string, kind: string) => store({ apiVersion, kind }).byNamespace(ns);
    const shown: { disruption?: Disruption | undefined } = {};
    const statusOf = (spec: ResolvedSpec, outcome: Outcome) => (current: OntoPlatformStatus) => ({
      ...platformStatus(platform, current, spec, outcome, objects, this.now()),
      ...(shown.disruption ? { disruption: shown.disruption } : {}),
    });

    const gate = checkGates(platform, store(PLATFORM_REF), this.releases, this.now());
    if (!gate.open) {
      this.deps.fleet?.forget(key);
      await this.status.write(client, platform, gate.status);
      return {};
    }
    const spec = gate.spec;
    const outcome: Outcome = { errors: [], problems: [], changed: 0, paused: spec.paused, certificates: {} };
    if (spec.paused) {
      this.deps.fleet?.forget(key);
      await this.status.write(client, platform, statusOf(spec, outcome));
      return {};
    }

    const vpas = this.deps.capabilities().verticalPodAutoscaler
      ? objects(VPA_REF.apiVersion, VPA_REF.kind)
      : [];
    platform = await writeVerticalScaling(this.status, ctx, platform, spec, vpas, this.now());
    const decision = await this.deps.hooks?.upgradeStep?.(platform, spec);
    if (decision) platform = await writeAhead(this.status, ctx, platform, decision, this.now());
    const liveKey = (obj: KubeObject) =>
      `${obj.apiVersion ?? ""}/${obj.kind ?? ""}/${ns}/${obj.metadata?.name ?? ""}`;
    const live = (obj: RenderedObject) =>
      this.ownCreates.lookup(liveKey(obj), store(obj).getByName(ns, obj.metadata.name), this.now().getTime());
    const storageClass = (name: string) => store(STORAGE_CLASS_REF, "").getByName(undefined, name);
    // A larger storage grows the claims in place; where the StorageClass does not allow it, the
    // component is rendered at the size it has (and a problem says why).
    let rendered = this.render(platform, spec, decision?.step);
    const growth = planVolumeGrowth({
      desired: rendered,
      live,
      claims: objects(CLAIM_REF.apiVersion, CLAIM_REF.kind),
      storageClass,
    });
    if (growth.kept.size > 0)
      rendered = this.render(platform, withKeptStorage(spec, growth.kept), decision?.step);
    const secrets = store({ apiVersion: "v1", kind: "Secret" });
    const certificates = await planCertificates({
      platform: { name: platform.metadata.name, namespace: ns, uid: platform.metadata.uid ?? "" },
      spec,
      desired: rendered,
      secrets,
      now: this.now(),
      previous: platform.status?.certificates,
      certManager: await this.certManagerView(client, ns, spec),
    });
    const desired = withPlatformCertificate(rendered, spec, certificates, (obj) =>
      liveTlsSerial(live(obj)),
    ).map(withAppliedHash);
    outcome.certificates = certificates.states;
    this.certificateMetrics?.set(ns, platform.metadata.name, certificates.states);
    const quota = spec.tenancy.mode === "namespace" ? spec.tenancy.resourceQuota : undefined;
    outcome.problems = [
      ...certificates.problems,
      ...tlsProblems(ns, spec, secrets),
      ...quotaProblems(desired, quota),
      ...placementProblems(spec, desired, store({ apiVersion: "v1", kind: "Node" }, "").list()),
      ...storageClassProblems(spec, storageClass),
      ...growth.problems,
    ];
    // Pod restarts that must wait (an operator-side change, outside every maintenance window, the fleet limit).
    const decided = decideDisruption({
      platform,
      spec,
      desired,
      live,
      pods: objects("v1", "Pod"),
      certificates: certificates.states,
      now: this.now(),
    });
    // The fleet limit: one synchronous request takes, keeps or frees this platform's slot (no
    // await between the count and the taking; see shared/fleet-limit.ts). An upgrade waiting for
    // the fleet (decided above) keeps its place in the queue.
    const upgradeWaits = decision?.condition?.reason === REASON.WaitingForFleetLimit;
    const answer = this.deps.fleet?.request(key, {
      wants: wantsFleetSlot(decided) || upgradeWaits,
      rolling: decided.rolling,
      since: decided.fleetSince ?? this.now(),
    }) ?? { admitted: true };
    const hold = holdForFleet(decided, answer, platform, this.now());
    if (!answer.admitted && !decided.fleetSince && hold.held.size > decided.held.size)
      this.deps.actions.notice(
        platform,
        "WaitingForFleetLimit",
        `${[...hold.held].filter((id) => !decided.held.has(id)).join(", ")} wait for the fleet limit: ${fleetWaitText(answer)}`,
      );
    shown.disruption = hold.status;
    outcome.problems.push(...hold.problems);
    // A namesake that is not the platform's is neither applied nor re-created (pruning never
    // touches it: it is not the platform's either).
    const namesakes = findNamesakes(desired, live, {
      name: platform.metadata.name,
      uid: platform.metadata.uid ?? "",
    });
    outcome.problems.push(...namesakes.problems);
    for (const { workload, message } of hold.bypassed)
      record(ctx, {
        verb: "update",
        target: refOf(workload),
        reason: "EmergencyRestart",
        message,
        warning: true,
      });
    const applicable = desired.filter((o) => {
      const id = objectId(o.kind, o.metadata.name);
      return !hold.held.has(id) && !namesakes.ids.has(id);
    });
    let recreated = new Set<string>();
    // Each stage is planned from the caches as they are when it starts, then carried out.
    const stages: (() => ClusterAction[])[] = [
      () => planNamespaceLabels(ns, spec, store({ apiVersion: "v1", kind: "Namespace" }, "")),
      // Claims grow before their StatefulSet is re-created with the larger claim template.
      () => planClaimGrowth(platform, growth.grow),
      // A StatefulSet whose immutable fields change is re-created keeping its pods, not applied.
      () => {
        const recreations = planRecreations(platform, applicable, live);
        recreated = recreations.ids;
        return recreations.actions;
      },
      () =>
        planApply(
          applicable.filter((o) => !recreated.has(objectId(o.kind, o.metadata.name))),
          live,
          (obj) => this.ownCreates.record(liveKey(obj), obj, this.now().getTime()),
        ),
      () => planPrune(platform, spec, desired, this.servedKinds(), (kind) => store(kind)),
      () => planStuckPodReplacement(platform, objects("apps/v1", "StatefulSet"), objects("v1", "Pod")),
      () => planUpgradePodDeletions(ns, decision?.deletePods ?? []),
    ];
    const causes: unknown[] = [];
    // The platform deleted while this pass applies: the rest of the pass stops (the cache sees the
    // deletion within the watch's latency; owned objects written after it are only collected again).
    const deleted = (): boolean => {
      const now = store(PLATFORM_REF).getByName(ns, platform.metadata.name);
      return now === undefined || now.metadata?.uid !== platform.metadata.uid || isTerminating(now);
    };
    for (const stage of stages) {
      const done = await actAll(ctx, stage(), deleted);
      outcome.changed += done.changed;
      outcome.errors.push(...done.errors);
      causes.push(...done.causes);
    }
    outcome.foreign = await this.foreign.read(client, desired, (obj) =>
      store(obj).getByName(ns, obj.metadata.name),
    );

    const uid = platform.metadata.uid ?? "";
    const previous = platform.status ?? {};
    const computed = statusOf(spec, outcome)(previous);
    const paceMs = this.pace.waitMs(uid, previous, computed, this.now().getTime());
    let status = computed;
    if (paceMs === 0) {
      // What was computed above, unless a conflict brought a fresher status to compute from.
      const written = await this.status.write(client, platform, (current) =>
        current === previous ? computed : statusOf(spec, outcome)(current),
      );
      status = written.status;
      if (written.sent) this.pace.wrote(uid, this.now().getTime());
    }
    request.log.debug(
      { changed: outcome.changed, errors: outcome.errors.length, phase: status.phase },
      "reconciled",
    );
    // The cause says whether the API server was unreachable (the controller then retries at a fixed
    // pace instead of growing the key's backoff).
    if (outcome.errors.length > 0)
      throw new Error(`apply failed for ${outcome.errors.length} object(s): ${outcome.errors[0]}`, {
        cause: causes.find(isServerUnavailable) ?? causes[0],
      });
    const requeueAfterMs = status.phase === "Running" ? RESYNC_MS : PROGRESS_RECHECK_MS;
    return {
      requeueAfterMs: Math.min(
        requeueAfterMs,
        decision?.requeueAfterMs ?? requeueAfterMs,
        hold.requeueAfterMs ?? requeueAfterMs,
        // Look again when the certificate is due (a second late, so it is due by then).
        certificates.renewInMs !== undefined ? certificates.renewInMs + 1000 : requeueAfterMs,
        // Progress held back (status-pace.ts) is written when its interval has passed.
        paceMs > 0 ? paceMs : requeueAfterMs,
      ),
    };
  }

  /** The objects the operator applies for `platform` (also what `onto render` prints). */
  render(platform: OntoPlatform, spec: ResolvedSpec, upgrade?: UpgradeStep): RenderedObject[] {
    const ns = platform.metadata.namespace;
    const secrets = this.deps.cache({ apiVersion: "v1", kind: "Secret" }, ns).byNamespace(ns);
    return renderFor(platform, spec, {
      capabilities: this.deps.capabilities(),
      releases: this.releases,
      existingSecrets: decodeGeneratedSecrets(secrets, platform.metadata.name),
      generateSecret: this.deps.generateSecret ?? randomSecret,
      upgrade,
    });
  }
}
