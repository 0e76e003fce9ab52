// The conditions the operator writes on an OntoPlatform and every reason each can carry, declared
// once as data: the controllers set them through these constants (a misspelt reason does not
// compile), and the table in docs/operations/troubleshooting.md is generated from the same entries
// (`npm run generate`; a unit test fails when the page is stale).

export const CONDITION_TYPES = [
  "Available",
  "Progressing",
  "Degraded",
  "Upgrading",
  "ForeignChanges",
  "MemoryRaised",
  "MemoryAtCap",
  "CrashLoop",
  "HealingWithheld",
] as const;

export type ConditionType = (typeof CONDITION_TYPES)[number];

/** Condition types by name: `CONDITION.Degraded`. */
export const CONDITION = Object.fromEntries(CONDITION_TYPES.map((t) => [t, t])) as {
  readonly [T in ConditionType]: T;
};

/** The conditions the healer owns (the platform reconciler leaves them as they are). */
export const HEALING_CONDITION_TYPES = [
  "MemoryRaised",
  "MemoryAtCap",
  "CrashLoop",
  "HealingWithheld",
] as const;

/** What a reason means for a person, and what to do about it (empty: nothing to do). */
export interface ReasonDoc {
  conditions: readonly ConditionType[];
  status: "True" | "False";
  means: string;
  todo: string;
}

const NOT_READY_LINK = "see [a component stays not Ready](#a-component-stays-not-ready)";

const REASON_DOCS = {
  AllComponentsReady: {
    conditions: ["Available"],
    status: "True",
    means: "every enabled component has all its pods Ready at its version",
    todo: "",
  },
  ComponentsScaling: {
    conditions: ["Available"],
    status: "True",
    means:
      "some components are changing only their number of pods (an autoscaler's step) with at least the wanted number Ready; the platform stays Running",
    todo: "",
  },
  ComponentsNotReady: {
    conditions: ["Available"],
    status: "False",
    means: "lists the components not Ready; `onto status` shows each one's reason",
    todo: NOT_READY_LINK,
  },
  Applied: {
    conditions: ["Progressing"],
    status: "True",
    means: "this pass changed N objects",
    todo: "wait; it settles to `ReconcileComplete`",
  },
  WaitingForComponents: {
    conditions: ["Progressing"],
    status: "True",
    means: "nothing left to apply, pods still coming up or rolling",
    todo: "wait, or look at the component",
  },
  ReconcileComplete: {
    conditions: ["Progressing"],
    status: "False",
    means: "the cluster matches the spec",
    todo: "",
  },
  Paused: {
    conditions: ["Progressing"],
    status: "False",
    means: "`spec.paused` is true: nothing is applied",
    todo: "`onto resume NAME`",
  },
  AsExpected: {
    conditions: ["Degraded"],
    status: "False",
    means: "no problem found",
    todo: "",
  },
  ApplyFailed: {
    conditions: ["Degraded"],
    status: "True",
    means: "the API server refused an object; the message names it and quotes the error (phase `Error`)",
    todo: "read the error: an admission webhook, a quota, a conflicting object not owned by the platform, RBAC of the operator",
  },
  NameTaken: {
    conditions: ["Degraded"],
    status: "True",
    means:
      "an object the platform would create already exists and is not the platform's (no owner reference to it, not labelled as made for it): it is left as it is, not applied, never pruned",
    todo: "delete or rename that object, or change the spec field that names it (for the platform certificate, `global.tlsSecretName`)",
  },
  InvalidSpec: {
    conditions: ["Degraded"],
    status: "True",
    means: "the spec cannot be rendered (e.g. a version the catalog does not know) (phase `Error`)",
    todo: "fix the field the message names; `onto validate -f FILE --server`",
  },
  NamespaceTaken: {
    conditions: ["Degraded"],
    status: "True",
    means: "another OntoPlatform already manages this namespace (phase `Error`)",
    todo: "one platform per namespace: move or delete this one",
  },
  InvalidMaintenanceWindow: {
    conditions: ["Degraded"],
    status: "True",
    means:
      "a `spec.maintenance.windows` entry has a start that is not a cron expression, an unknown time zone or a duration over 7 days; it never opens",
    todo: "fix the field the message names (docs/operations/disruption.md)",
  },
  MissingTLSSecret: {
    conditions: ["Degraded"],
    status: "True",
    means:
      "the ingress TLS Secret (`spec.gateway.ingress.tlsSecretName`) does not exist; the platform certificate (`spec.global.tlsSecretName`) is issued by the operator when missing, but an ingress Secret of another name is yours (phase `Degraded`)",
    todo: "create the `kubernetes.io/tls` Secret in the platform's namespace, or leave `tlsSecretName` out of the ingress to use the platform certificate",
  },
  InvalidTLSSecret: {
    conditions: ["Degraded"],
    status: "True",
    means:
      "the TLS Secret you supplied cannot be used: no `tls.key`/`tls.crt`, not a certificate, a key that does not match it, or (with `tlsEnabled`) no `ca.crt` or a certificate that does not name what the platform's TLS clients verify; the message names the field, the key or the missing names (phase `Degraded`, the Secret is left as it is)",
    todo: "fix the Secret's data, or delete it to let the operator issue one",
  },
  TLSCertificateExpired: {
    conditions: ["Degraded"],
    status: "True",
    means:
      "the certificate in the TLS Secret you supplied has expired (the operator renews only the certificates it issued; yours is left as it is)",
    todo: "put a renewed certificate into the Secret, or delete it to let the operator issue one",
  },
  CertManagerNotServed: {
    conditions: ["Degraded"],
    status: "True",
    means:
      "`spec.global.tls.issuerRef` asks cert-manager to issue the platform certificate, but the cluster does not serve cert-manager's API (`cert-manager.io/v1` Certificate); nothing is issued and the Secret, if any, is left as it is",
    todo: "install cert-manager (the operator looks for its API again every 10 minutes), or remove `issuerRef` to let the operator issue the certificate",
  },
  IssuerNotFound: {
    conditions: ["Degraded"],
    status: "True",
    means:
      "the cert-manager Issuer or ClusterIssuer `spec.global.tls.issuerRef` names does not exist, so the platform certificate cannot be issued",
    todo: "create the issuer, or fix `issuerRef.name`/`kind`",
  },
  IssuerNotReady: {
    conditions: ["Degraded"],
    status: "True",
    means:
      "the cert-manager issuer `spec.global.tls.issuerRef` names exists but is not Ready (its message says why, e.g. a CA issuer whose Secret is missing), or cert-manager failed to issue the Certificate",
    todo: "fix the issuer as its message says (`kubectl describe issuer`); cert-manager tries again by itself",
  },
  QuotaExceeded: {
    conditions: ["Degraded"],
    status: "True",
    means: "the platform's own workloads do not fit `tenancy.resourceQuota`; names the key and the amounts",
    todo: "raise the quota or lower replicas/requests",
  },
  NoMatchingNode: {
    conditions: ["Degraded"],
    status: "True",
    means:
      "no schedulable node has the labels of a component's node selector: its pods would stay Pending; the message names the component and the labels (phase `Degraded`)",
    todo: "fix the `nodePool.nodeSelector` the condition names, or label nodes (`kubectl label node`)",
  },
  RequestsExceedNodes: {
    conditions: ["Degraded"],
    status: "True",
    means:
      "a component's pod requests more CPU or memory than any node it may run on can give; the message has both (phase `Degraded`)",
    todo: "lower the `resources.requests` the condition names, or add larger nodes to the pool",
  },
  StorageClassNotFound: {
    conditions: ["Degraded"],
    status: "True",
    means:
      "`spec.global.storageClass` names a StorageClass the cluster does not have: the claims of Postgres, Redis, MinIO, Kafka and Nessie would stay Pending and their pods unscheduled (phase `Degraded`)",
    todo: "create the StorageClass (`kubectl get storageclass` lists the ones there are); the class cannot change once set (docs/operations/storage.md)",
  },
  VolumeExpansionUnsupported: {
    conditions: ["Degraded"],
    status: "True",
    means:
      "a component's `storage` grew, but the StorageClass of its claims does not allow volume expansion (`allowVolumeExpansion` is not true): nothing is changed, the claims and the StatefulSet keep their size; the message names the field, the class and the claims",
    todo: "set `allowVolumeExpansion: true` on the StorageClass if its provisioner can grow volumes, or set `storage` back to the claims' size (docs/operations/storage.md)",
  },
  UnknownRelease: {
    conditions: ["Degraded"],
    status: "True",
    means:
      "`spec.version` (or a version components still run) is neither built in nor an accepted OntoRelease; nothing is changed",
    todo: "create the OntoRelease, fix its `Accepted` problem (`kubectl get ontoreleases`), or set another version",
  },
  OtherManager: {
    conditions: ["ForeignChanges"],
    status: "True",
    means:
      "another field manager added items to lists of objects the operator applies (an env var, a volume, a container); applying cannot remove them, so the operator leaves them, and the message names each object, item and manager",
    todo: "remove the item with the tool that added it (or `kubectl edit`), or stop that tool; see [a field the operator cannot take back](#a-field-the-operator-cannot-take-back)",
  },
  NoForeignChanges: {
    conditions: ["ForeignChanges"],
    status: "False",
    means: "no other manager holds items in the operator's objects any more",
    todo: "",
  },
  Upgrading: {
    conditions: ["Upgrading"],
    status: "True",
    means: "an upgrade is at the component and step the message names",
    todo: "`onto upgrade NAME --to V --watch` to follow it",
  },
  RollingBack: {
    conditions: ["Upgrading"],
    status: "True",
    means: "a canary or rollout failed; the component the message names is going back to the version it ran",
    todo: "`onto upgrade NAME --to V --watch` to follow it",
  },
  UpgradeSucceeded: {
    conditions: ["Upgrading"],
    status: "False",
    means: "the last upgrade finished",
    todo: "",
  },
  UpToDate: {
    conditions: ["Upgrading"],
    status: "False",
    means: "every component already runs the image of `spec.version`: nothing to upgrade",
    todo: "",
  },
  UpgradeRefused: {
    conditions: ["Upgrading"],
    status: "False",
    means: "a downgrade or skipped minor version without force",
    todo: "choose another version, or `onto upgrade ... --force`",
  },
  WaitingForMaintenanceWindow: {
    conditions: ["Upgrading"],
    status: "False",
    means: "the version change waits for the next maintenance window (`status.disruption.nextWindow`)",
    todo: "wait, or annotate the platform `onto.paas/approve-restarts=true` to start now",
  },
  WaitingForFleetLimit: {
    conditions: ["Upgrading"],
    status: "False",
    means:
      "the version change waits until fewer platforms restart pods than the operator's `--max-restarting-platforms`",
    todo: "wait (the platforms restarting are named in the message); the limit is the operator's flag",
  },
  UpgradeBlocked: {
    conditions: ["Upgrading"],
    status: "False",
    means: "not starting while the platform is Degraded or in Error (rechecked every 15 s)",
    todo: "fix what `Degraded` says first, or force",
  },
  UpgradeFailed: {
    conditions: ["Upgrading"],
    status: "False",
    means:
      "a canary or rollout failed and was rolled back; `status.upgrade.failure` has the component, reason, message",
    todo: "fix the cause, then `onto upgrade NAME --to V --retry`, or set `spec.version` back",
  },
  ForwardFixRequired: {
    conditions: ["Upgrading"],
    status: "False",
    means:
      "an upgrade failed after a point of no return and was **not** rolled back (`status.upgrade.phase: ForwardFix`; `pointOfNoReturn` names the step)",
    todo: "set `spec.version` to a release that fixes it, or fix the cause and `onto upgrade NAME --to V --retry`; see [releases](releases.md#points-of-no-return)",
  },
  RollbackRefused: {
    conditions: ["Upgrading"],
    status: "False",
    means: "the new `spec.version` would undo a step that cannot be undone; nothing changed",
    todo: "fix forward with a newer release; going back needs a restore from backup",
  },
  OOMKilled: {
    conditions: ["MemoryRaised"],
    status: "True",
    means: "healing raised a memory limit after OOM kills (in `status.healing.memoryOverrides`)",
    todo: "raise `resources.limits.memory` in the spec; the override is dropped once the spec passes it",
  },
  NoOverride: {
    conditions: ["MemoryRaised"],
    status: "False",
    means: "no memory limit is raised by healing (any earlier override was dropped)",
    todo: "",
  },
  MemoryAtCap: {
    conditions: ["MemoryAtCap"],
    status: "True",
    means: "the raise reached `selfHealing.maxMemory`",
    todo: "the workload needs more memory than healing may give: change the spec or the cap",
  },
  BelowCap: {
    conditions: ["MemoryAtCap"],
    status: "False",
    means: "no component is OOMKilled at `selfHealing.maxMemory`",
    todo: "",
  },
  MissingSecret: {
    conditions: ["CrashLoop"],
    status: "True",
    means:
      "a container crash-loops, or cannot start (CreateContainerConfigError, a failed mount), and a Secret its pod refers to does not exist; the message names it and quotes the kubelet",
    todo: "restore the Secret",
  },
  MissingConfigMap: {
    conditions: ["CrashLoop"],
    status: "True",
    means:
      "a container crash-loops, or cannot start (CreateContainerConfigError, a failed mount), and a ConfigMap its pod refers to does not exist; the message names it and quotes the kubelet",
    todo: "restore the ConfigMap",
  },
  DependencyNotReady: {
    conditions: ["CrashLoop"],
    status: "True",
    means:
      "a container crash-loops while a component it depends on is not Ready; the message names the dependency",
    todo: "fix the dependency first (its own reason is in `onto status`)",
  },
  ContainerExited: {
    conditions: ["CrashLoop"],
    status: "True",
    means:
      "a container crash-loops for a reason of its own; the message has the exit code and the last message",
    todo: "read the container's log (`kubectl logs --previous`)",
  },
  NoCrashLoop: {
    conditions: ["CrashLoop"],
    status: "False",
    means: "no platform pod is in CrashLoopBackOff or waits on a missing Secret or ConfigMap",
    todo: "",
  },
  GuardRail: {
    conditions: ["HealingWithheld"],
    status: "True",
    means: "a healing action was held back (hourly rate limit, most of the node pool NotReady)",
    todo: "an outage is bigger than healing: look at the nodes",
  },
  NotWithheld: {
    conditions: ["HealingWithheld"],
    status: "False",
    means: "no healing action is held back",
    todo: "",
  },
  HealingDisabled: {
    conditions: HEALING_CONDITION_TYPES,
    status: "False",
    means: "`spec.selfHealing.enabled` is false: the healer takes no action",
    todo: "",
  },
} as const satisfies Record<string, ReasonDoc>;

export type Reason = keyof typeof REASON_DOCS;

/** Reasons by name: `REASON.ApplyFailed`. */
export const REASON = Object.fromEntries(Object.keys(REASON_DOCS).map((r) => [r, r])) as {
  readonly [R in Reason]: R;
};

/** Every reason with what it means, in the order of CONDITION_TYPES, then as declared. */
export function reasonDocs(): [Reason, ReasonDoc][] {
  const all = Object.entries(REASON_DOCS) as [Reason, ReasonDoc][];
  const rank = (doc: ReasonDoc): number => CONDITION_TYPES.indexOf(doc.conditions[0] ?? "Available");
  return all
    .map((entry, i) => ({ entry, i }))
    .sort((a, b) => rank(a.entry[1]) - rank(b.entry[1]) || a.i - b.i)
    .map((x) => x.entry);
}
