// The OntoPlatform resource, spec and status, as one TypeBox schema. It is the single source of
// the TypeScript types below, of the CRD's OpenAPI v3 schema (scripts/generate.ts), of the
// defaults (resolveSpec) and of the offline validator (`onto validate`). Descriptions become
// what `kubectl explain` prints, so they are written for the person editing the YAML.
import { Type } from "@sinclair/typebox";
import type { Static } from "@sinclair/typebox";
import {
  boundedMap,
  cel,
  count,
  dateTime,
  defaulted,
  dnsLabel,
  dnsSubdomain,
  DURATION,
  extendedResourceName,
  isQualifiedName,
  LABEL_VALUE,
  qualifiedName,
  quantity,
  quantityAtMost,
  SEMVER,
  STORAGE_QUANTITY,
  uniqueBy,
} from "./schema-kit.js";
import type { Resolved } from "./schema-kit.js";
import { MAX_MESSAGE } from "./messages.js";

/** The largest replica count any component accepts, so a typo cannot ask for a million pods. */
export const MAX_REPLICAS = 100;
/** The largest volume any component may request. */
export const MAX_STORAGE = "64Ti";
/**
 * The longest platform name: it is the app.kubernetes.io/instance label of every object the
 * platform owns, and a label value has at most 63 characters.
 */
export const MAX_PLATFORM_NAME = 63;
/**
 * A registry host (with an optional port) and path, in the image reference grammar (the
 * distribution spec): path components are lowercase alphanumerics joined by one '.', one or two
 * '_', or '-'s ("0-.a" is not one). At most 200 characters, so that with a repository and a tag
 * appended the name stays within the 255 an image reference may have.
 */
const IMAGE_REPOSITORY_PREFIX =
  "^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*(:[0-9]{1,5})?(/[a-z0-9]+(([.]|_|__|-+)[a-z0-9]+)*)*$";
/** Keys of maps the operator writes, by component name. */
const COMPONENT_KEYS = {
  rule: (k: string) => `${k}.size() <= 63`,
  message: "keys are component names",
  maxLength: 63,
  examples: { patterns: ["^[a-z][-a-z]{0,20}$"] },
};

/** Keys of maps by Secret name (a DNS subdomain of at most 253 characters). */
const SECRET_NAME_KEYS = {
  rule: (k: string) => `${k}.size() <= 253`,
  message: "keys are Secret names",
  maxLength: 253,
  examples: { patterns: ["^[a-z][-a-z]{0,20}$"] },
};

// ---------------------------------------------------------------- shared pieces

const replicas = (value: number) =>
  defaulted(
    Type.Integer({
      minimum: 1,
      maximum: MAX_REPLICAS,
      description: `Number of pods (1..${MAX_REPLICAS}). With autoscaling enabled the HorizontalPodAutoscaler owns the count and this is only the starting point.`,
    }),
    value,
  );

const resources = (defaults: { cpu: string; memory: string }) =>
  defaulted(
    Type.Object(
      {
        requests: defaulted(
          Type.Object(
            {
              cpu: defaulted(quantity("CPU the scheduler reserves, e.g. 500m or 2."), defaults.cpu),
              memory: defaulted(quantity("Memory the scheduler reserves, e.g. 1Gi."), defaults.memory),
            },
            { description: "Resources reserved for each pod." },
          ),
          {},
        ),
        limits: Type.Optional(
          Type.Object(
            {
              cpu: Type.Optional(quantity("CPU limit; absent means unlimited CPU.")),
              memory: Type.Optional(
                quantity(
                  "Memory limit; absent means no limit set by the spec. Self-healing may raise it after an OOM kill (see status.healing).",
                ),
              ),
            },
            {
              description:
                "Upper bounds for each pod. Optional: a tenancy LimitRange may supply them; each must be at least the request.",
            },
          ),
        ),
      },
      {
        description: "CPU and memory per pod, as Kubernetes quantities.",
        ...cel(
          {
            rule: `!has(self.limits) || !has(self.limits.cpu) || (${quantityAtMost("self.requests.cpu", "self.limits.cpu")})`,
            message: "requests.cpu must not exceed limits.cpu",
            fieldPath: ".requests.cpu",
          },
          {
            rule: `!has(self.limits) || !has(self.limits.memory) || (${quantityAtMost("self.requests.memory", "self.limits.memory")})`,
            message: "requests.memory must not exceed limits.memory",
            fieldPath: ".requests.memory",
          },
        ),
      },
    ),
    {},
  );

const storage = (value: string) =>
  defaulted(
    Type.String({
      pattern: STORAGE_QUANTITY,
      maxLength: 32,
      description: `Size of each pod's persistent volume, e.g. 100Gi (at most ${MAX_STORAGE}). It can grow (if the storage class allows expansion) but never shrink.`,
      ...cel(
        {
          rule: quantityAtMost("self", `'${MAX_STORAGE}'`),
          message: `storage must be at most ${MAX_STORAGE}`,
        },
        {
          rule: "!isQuantity(self) || quantity(self).compareTo(quantity('0')) > 0",
          message: "storage must be greater than zero",
        },
        {
          rule: quantityAtMost("oldSelf", "self"),
          message: "storage cannot shrink: a persistent volume can only grow",
        },
      ),
    }),
    value,
  );

/** The largest HPA policy period and stabilization window the API server accepts. */
const MAX_HPA_PERIOD_SECONDS = 1800;
const MAX_HPA_WINDOW_SECONDS = 3600;

const scalingRule = (
  direction: "up" | "down",
  d: { pods: number; periodSeconds: number; stabilizationWindowSeconds: number },
) =>
  defaulted(
    Type.Object(
      {
        pods: defaulted(
          Type.Integer({
            minimum: 1,
            maximum: MAX_REPLICAS,
            description: `Most pods the autoscaler adds or removes per period when scaling ${direction}.`,
          }),
          d.pods,
        ),
        periodSeconds: defaulted(
          Type.Integer({
            minimum: 1,
            maximum: MAX_HPA_PERIOD_SECONDS,
            description: `Length of that period in seconds (1..${MAX_HPA_PERIOD_SECONDS}).`,
          }),
          d.periodSeconds,
        ),
        stabilizationWindowSeconds: defaulted(
          Type.Integer({
            minimum: 0,
            maximum: MAX_HPA_WINDOW_SECONDS,
            description: `Seconds of past recommendations the autoscaler considers before scaling ${direction} (0..${MAX_HPA_WINDOW_SECONDS}); it ${direction === "up" ? "takes the lowest" : "takes the highest"}, so brief swings do not move the count.`,
          }),
          d.stabilizationWindowSeconds,
        ),
      },
      { description: `How fast the autoscaler scales ${direction}.` },
    ),
    {},
  );

const autoscaling = defaulted(
  Type.Object(
    {
      enabled: defaulted(
        Type.Boolean({
          description:
            "Create a HorizontalPodAutoscaler (CPU and gRPC requests per second); it then owns the replica count.",
        }),
        false,
      ),
      minReplicas: defaulted(
        Type.Integer({ minimum: 1, maximum: MAX_REPLICAS, description: "Fewest pods the autoscaler keeps." }),
        2,
      ),
      maxReplicas: defaulted(
        Type.Integer({ minimum: 1, maximum: MAX_REPLICAS, description: "Most pods the autoscaler may run." }),
        10,
      ),
      targetCPUUtilization: defaulted(
        Type.Integer({
          minimum: 1,
          maximum: 100,
          description: "Average CPU utilization (percent of the request) the autoscaler aims for.",
        }),
        70,
      ),
      behavior: defaulted(
        Type.Object(
          {
            // Seed 4.1: up by at most 2 pods a minute; down by 1 every 2 minutes after 5 quiet minutes.
            scaleUp: scalingRule("up", { pods: 2, periodSeconds: 60, stabilizationWindowSeconds: 60 }),
            scaleDown: scalingRule("down", { pods: 1, periodSeconds: 120, stabilizationWindowSeconds: 300 }),
          },
          { description: "Scale-up and scale-down rates of the HorizontalPodAutoscaler." },
        ),
        {},
      ),
    },
    {
      description: "Horizontal autoscaling of this stateless component.",
      ...cel({
        rule: "self.minReplicas <= self.maxReplicas",
        message: "minReplicas must be less than or equal to maxReplicas",
        fieldPath: ".minReplicas",
      }),
    },
  ),
  {},
);

/** How the operator treats the VerticalPodAutoscaler's recommendation for a component. */
export const VERTICAL_SCALING_MODES = ["Off", "Recommend", "Apply"] as const;

const resourceBound = (which: "min" | "max") =>
  Type.Optional(
    Type.Object(
      {
        cpu: Type.Optional(
          quantity(
            `CPU request the recommendation is ${which === "min" ? "raised to at least" : "capped at"}.`,
          ),
        ),
        memory: Type.Optional(
          quantity(
            `Memory request the recommendation is ${which === "min" ? "raised to at least" : "capped at"}.`,
          ),
        ),
      },
      {
        description:
          which === "min"
            ? "Lowest requests the operator applies."
            : "Highest requests the operator applies; a request never exceeds the component's limit either.",
      },
    ),
  );

const verticalScaling = defaulted(
  Type.Object(
    {
      mode: defaulted(
        Type.Union(
          VERTICAL_SCALING_MODES.map((m) => Type.Literal(m)),
          {
            description:
              "Off: no VerticalPodAutoscaler. Recommend: one in recommendation mode (needs the VPA installed); its recommendation is shown in status.verticalScaling and `onto status`. Apply: also set the requests to the recommendation, within minAllowed..maxAllowed, through a normal rolling update; only when the requests are outside the recommended range. With horizontal autoscaling on, only memory is recommended and applied: the HPA alone acts on CPU.",
          },
        ),
        "Recommend",
      ),
      minAllowed: resourceBound("min"),
      maxAllowed: resourceBound("max"),
    },
    {
      description: "Vertical scaling from the VerticalPodAutoscaler's recommendation.",
      ...cel(
        {
          rule: `!has(self.minAllowed) || !has(self.maxAllowed) || !has(self.minAllowed.cpu) || !has(self.maxAllowed.cpu) || (${quantityAtMost("self.minAllowed.cpu", "self.maxAllowed.cpu")})`,
          message: "minAllowed.cpu must not exceed maxAllowed.cpu",
          fieldPath: ".minAllowed.cpu",
        },
        {
          rule: `!has(self.minAllowed) || !has(self.maxAllowed) || !has(self.minAllowed.memory) || !has(self.maxAllowed.memory) || (${quantityAtMost("self.minAllowed.memory", "self.maxAllowed.memory")})`,
          message: "minAllowed.memory must not exceed maxAllowed.memory",
          fieldPath: ".minAllowed.memory",
        },
      ),
    },
  ),
  {},
);

interface ComponentDefaults {
  replicas: number;
  cpu: string;
  memory: string;
}

/** A stateless service: a Deployment that may autoscale. */
const serviceFields = (d: ComponentDefaults) => ({
  replicas: replicas(d.replicas),
  resources: resources(d),
  autoscaling,
  nodePool: componentNodePool,
  verticalScaling,
});

/** A stateful component: a StatefulSet with one persistent volume per pod. */
const statefulFields = (d: ComponentDefaults & { storage: string }) => ({
  replicas: replicas(d.replicas),
  storage: storage(d.storage),
  resources: resources(d),
  nodePool: componentNodePool,
  verticalScaling,
});

const SERVICE = { replicas: 2, cpu: "250m", memory: "512Mi" };

// ---------------------------------------------------------------- global

const toleration = Type.Object(
  {
    key: Type.Optional(qualifiedName("Taint key; absent (with operator Exists) tolerates every taint.")),
    operator: defaulted(
      Type.Union([Type.Literal("Exists"), Type.Literal("Equal")], { description: "Exists or Equal." }),
      "Equal",
    ),
    value: Type.Optional(Type.String({ pattern: LABEL_VALUE, maxLength: 63, description: "Taint value." })),
    effect: Type.Optional(
      Type.Union([Type.Literal("NoSchedule"), Type.Literal("PreferNoSchedule"), Type.Literal("NoExecute")], {
        description: "Taint effect to tolerate; absent tolerates every effect.",
      }),
    ),
    tolerationSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 31_536_000,
        description: "For NoExecute: how long the pod stays bound after the taint (at most a year).",
      }),
    ),
  },
  {
    description: "A Kubernetes toleration.",
    ...cel(
      {
        rule: "self.operator != 'Exists' || !has(self.value)",
        message: "a toleration with operator Exists must not have a value",
        fieldPath: ".value",
      },
      {
        rule: "has(self.key) || self.operator == 'Exists'",
        message: "a toleration without a key must use operator Exists (it then tolerates every taint)",
        fieldPath: ".operator",
      },
      {
        rule: "!has(self.tolerationSeconds) || (has(self.effect) && self.effect == 'NoExecute')",
        message: "tolerationSeconds needs effect NoExecute",
        fieldPath: ".effect",
      },
    ),
  },
);

/**
 * A dedicated node pool: the node labels pods require and the taints they tolerate. On a
 * component it is merged over spec.global.nodePool (docs/reference/ontoplatform.md, "Node pools").
 */
const nodePool = (whose: string) =>
  Type.Object(
    {
      nodeSelector: defaulted(
        boundedMap(Type.String({ pattern: LABEL_VALUE, maxLength: 63, description: "Label value." }), {
          maxProperties: 16,
          description: `Node labels ${whose} require.`,
          keys: {
            rule: isQualifiedName,
            message:
              "nodeSelector keys must be valid label keys such as node-pool or example.com/pool (a name of at most 63 characters, optionally after a DNS prefix of at most 253 and '/')",
            maxLength: 317,
            examples: { patterns: ["^([a-z0-9]{1,10}[.][a-z]{2,5}/)?[a-z0-9]([-a-z0-9_.]{0,20}[a-z0-9])?$"] },
          },
        }),
        {},
      ),
      tolerations: defaulted(
        Type.Array(toleration, {
          maxItems: 16,
          description: `Taints of the dedicated nodes that ${whose} tolerate.`,
        }),
        [],
      ),
    },
    { description: `Dedicated node pool for ${whose} (node selector and tolerations).` },
  );

/** A component's own node pool, merged over spec.global.nodePool. */
const componentNodePool = Type.Optional(
  Type.Object(nodePool("this component's pods").properties, {
    description:
      "Node pool of this component's pods, over spec.global.nodePool: its nodeSelector keys replace the platform's values for the same keys and add the others; its tolerations are added to the platform's.",
  }),
);

const tlsSettings = Type.Object(
  {
    certificateLifetime: defaulted(
      Type.String({
        pattern: DURATION,
        minLength: 2,
        maxLength: 24,
        description:
          "Validity of each certificate the operator issues from its per-platform CA, or with issuerRef the duration of the cert-manager Certificate (at least 1h); not of a Secret you supply. E.g. 2160h (90 days, the default).",
      }),
      "2160h",
    ),
    renewAtFraction: defaulted(
      Type.Number({
        minimum: 0.05,
        maximum: 0.95,
        description:
          "Renew an issued certificate once this fraction of its lifetime has passed (default 2/3: a 90-day certificate is renewed after 60 days).",
      }),
      0.6667,
    ),
    issuerRef: Type.Optional(
      Type.Object(
        {
          name: dnsSubdomain("Name of the cert-manager Issuer or ClusterIssuer."),
          kind: defaulted(
            Type.Union([Type.Literal("Issuer"), Type.Literal("ClusterIssuer")], {
              description: "Issuer (in the platform's namespace) or ClusterIssuer.",
            }),
            "Issuer",
          ),
          group: defaulted(
            Type.String({
              minLength: 1,
              maxLength: 253,
              description: "API group of the issuer kind; cert-manager.io for cert-manager's own issuers.",
            }),
            "cert-manager.io",
          ),
        },
        {
          description:
            "Issue the platform certificate through cert-manager instead of the operator's per-platform CA: the operator writes a cert-manager Certificate for global.tlsSecretName with every name the platform needs, its lifetime (certificateLifetime, at least 1h for cert-manager) and renewal point (renewAtFraction), and cert-manager issues and renews the Secret. Needs cert-manager's API (cert-manager.io/v1) in the cluster.",
        },
      ),
    ),
  },
  {
    description:
      "How the platform certificate (global.tlsSecretName) is issued and renewed when the Secret does not exist: by the operator from a per-platform CA, or by cert-manager (issuerRef). A Secret you create yourself is used as it is and never overwritten.",
    // cert-manager refuses a Certificate whose duration is under an hour: caught here, with the
    // field named, instead of as a Certificate that never issues.
    ...cel({
      rule: "!has(self.issuerRef) || !has(self.certificateLifetime) || duration(self.certificateLifetime) >= duration('1h')",
      message:
        "certificateLifetime must be at least 1h when issuerRef is set: cert-manager issues no shorter certificate",
      fieldPath: ".certificateLifetime",
    }),
  },
);

const global = defaulted(
  Type.Object(
    {
      imagePullPolicy: defaulted(
        Type.Union([Type.Literal("Always"), Type.Literal("IfNotPresent"), Type.Literal("Never")], {
          description: "Image pull policy of every container.",
        }),
        "IfNotPresent",
      ),
      imageRegistry: defaulted(
        Type.String({
          pattern: IMAGE_REPOSITORY_PREFIX,
          maxLength: 200,
          description:
            "Registry and path the component images are pulled from (registry/path/<component>:<version>).",
        }),
        "registry.example.com/coomia-dip",
      ),
      imageMirror: Type.Optional(
        Type.String({
          pattern: IMAGE_REPOSITORY_PREFIX,
          maxLength: 200,
          description:
            "Air-gapped installs: pull every image the platform runs (infrastructure included) from this registry[/path], keeping each image's repository path and tag/digest (docker.io/library/postgres:16.6 -> <mirror>/library/postgres:16.6). `onto images --version V --registry <mirror>` lists what to copy there.",
        }),
      ),
      imagePullSecrets: defaulted(
        Type.Array(dnsSubdomain("Name of a docker-registry Secret in the platform's namespace."), {
          maxItems: 16,
          uniqueItems: true,
          "x-kubernetes-list-type": "set",
          description: "Secrets used to pull images from a private registry.",
        }),
        [],
      ),
      storageClass: Type.Optional(
        dnsSubdomain(
          "StorageClass of every persistent volume; absent uses the cluster's default class. Cannot change after it is set.",
        ),
      ),
      tlsEnabled: defaulted(
        Type.Boolean({ description: "Serve TLS between components and at the gateway." }),
        false,
      ),
      tlsSecretName: Type.Optional(
        dnsSubdomain("kubernetes.io/tls Secret with the certificate; required when tlsEnabled is true."),
      ),
      tls: defaulted(tlsSettings, {}),
      nodePool: defaulted(nodePool("the platform's pods"), {}),
    },
    {
      description: "Settings shared by every component.",
      ...cel(
        {
          rule: "!self.tlsEnabled || has(self.tlsSecretName)",
          message: "tlsSecretName is required when tlsEnabled is true",
          fieldPath: ".tlsSecretName",
          reason: "FieldValueRequired",
        },
        {
          rule: "has(self.storageClass) == has(oldSelf.storageClass) && (!has(self.storageClass) || self.storageClass == oldSelf.storageClass)",
          message: "storageClass cannot change after creation: existing volumes keep their class",
          fieldPath: ".storageClass",
          reason: "FieldValueForbidden",
        },
      ),
    },
  ),
  {},
);

// ---------------------------------------------------------------- infrastructure

const bucket = Type.Object(
  {
    name: Type.String({
      pattern: "^[a-z0-9][a-z0-9.-]*[a-z0-9]$",
      minLength: 3,
      maxLength: 63,
      description: "S3 bucket name: 3-63 lowercase letters, digits, dots and hyphens.",
    }),
  },
  { description: "A bucket the operator creates in MinIO." },
);

const topic = Type.Object(
  {
    name: Type.String({
      pattern: "^[a-zA-Z0-9._-]+$",
      minLength: 1,
      maxLength: 249,
      description: "Kafka topic name: letters, digits, '.', '_' and '-'.",
      ...cel({ rule: "self != '.' && self != '..'", message: "a topic cannot be named '.' or '..'" }),
    }),
    partitions: defaulted(
      Type.Integer({ minimum: 1, maximum: 1000, description: "Number of partitions." }),
      12,
    ),
    replicationFactor: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 10,
        description:
          "Copies of each partition; at most the Kafka replicas. Absent means min(3, kafka replicas).",
      }),
    ),
  },
  { description: "A Kafka topic the operator creates." },
);

const infrastructure = defaulted(
  Type.Object(
    {
      postgres: defaulted(
        Type.Object(
          {
            ...statefulFields({ replicas: 1, storage: "20Gi", cpu: "500m", memory: "1Gi" }),
            failoverDelaySeconds: defaulted(
              Type.Integer({
                minimum: 1,
                maximum: 300,
                description:
                  "How long the primary may be unreachable (its pod gone, its node NotReady, or not answering SQL) before the operator promotes the most advanced streaming standby.",
              }),
              5,
            ),
            maxStandbyLagBytes: defaulted(
              Type.Integer({
                minimum: 0,
                // 1 TiB: far above any volume this platform runs, within JavaScript's exact integers.
                maximum: 1024 ** 4,
                description:
                  "A streaming standby whose replay lags the primary by more than this many bytes of WAL leaves the read-only Service postgres-ro until it catches up.",
              }),
              16 * 1024 * 1024,
            ),
            synchronous: defaulted(
              Type.Boolean({
                description:
                  "Synchronous replication (quorum of one standby, synchronous_standby_names 'ANY 1 (*)'): a commit is acknowledged only once a standby has it, so a failover loses no acknowledged write; writes wait while no standby streams. Default asynchronous.",
              }),
              false,
            ),
          },
          {
            description:
              "PostgreSQL: metadata store of the platform. More than one replica adds streaming standbys; the operator fails over to the most advanced one when the primary is lost.",
          },
        ),
        {},
      ),
      redis: defaulted(
        Type.Object(
          {
            ...statefulFields({ replicas: 1, storage: "5Gi", cpu: "100m", memory: "256Mi" }),
            mode: defaulted(
              Type.Union([Type.Literal("standalone"), Type.Literal("sentinel")], {
                description:
                  "standalone: one Redis; sentinel: a primary, replicas and Sentinel failover (3+ replicas).",
              }),
              "standalone",
            ),
          },
          {
            description: "Redis: cache and locks.",
            ...cel(
              {
                rule: "self.mode != 'sentinel' || self.replicas >= 3",
                message: "redis mode sentinel needs at least 3 replicas for a failover quorum",
                fieldPath: ".replicas",
              },
              {
                rule: "self.mode != 'standalone' || self.replicas == 1",
                message: "redis mode standalone runs exactly 1 replica; use mode sentinel for more",
                fieldPath: ".replicas",
              },
            ),
          },
        ),
        {},
      ),
      minio: defaulted(
        Type.Object(
          {
            ...statefulFields({ replicas: 1, storage: "50Gi", cpu: "250m", memory: "512Mi" }),
            buckets: defaulted(
              Type.Array(bucket, {
                maxItems: 64,
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                description: "Buckets created in MinIO.",
                ...cel({ rule: uniqueBy("name"), message: "bucket names must be unique" }),
              }),
              [{ name: "onto-data" }, { name: "onto-iceberg" }],
            ),
          },
          {
            description: "MinIO: object storage for data and the Iceberg warehouse.",
            ...cel({
              rule: "self.replicas == 1 || self.replicas >= 4",
              message: "minio runs 1 replica (standalone) or at least 4 (distributed erasure coding)",
              fieldPath: ".replicas",
            }),
          },
        ),
        {},
      ),
      kafka: defaulted(
        Type.Object(
          {
            ...statefulFields({ replicas: 3, storage: "20Gi", cpu: "500m", memory: "1Gi" }),
            topics: defaulted(
              Type.Array(topic, {
                maxItems: 128,
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                description: "Topics created in Kafka.",
                ...cel({ rule: uniqueBy("name"), message: "topic names must be unique" }),
              }),
              [{ name: "ontology-events", partitions: 12 }],
            ),
          },
          {
            description: "Kafka (KRaft): the event bus.",
            ...cel({
              rule: "self.topics.all(t, !has(t.replicationFactor) || t.replicationFactor <= self.replicas)",
              message: "a topic's replicationFactor cannot exceed the Kafka replicas",
              fieldPath: ".topics",
            }),
          },
        ),
        {},
      ),
    },
    { description: "Stateful infrastructure: PostgreSQL, Redis, MinIO, Kafka." },
  ),
  {},
);

// ---------------------------------------------------------------- planes

const controlPlane = defaulted(
  Type.Object(
    {
      ontologyService: defaulted(
        Type.Object(serviceFields(SERVICE), { description: "Ontology service (gRPC 9090)." }),
        {},
      ),
      schemaRegistry: defaulted(Type.Object(serviceFields(SERVICE), { description: "Schema registry." }), {}),
      authService: defaulted(
        Type.Object(serviceFields(SERVICE), { description: "Authentication service." }),
        {},
      ),
    },
    { description: "Control layer (B): ontology, schema registry, authentication." },
  ),
  {},
);

const dataPlane = defaulted(
  Type.Object(
    {
      dataService: defaulted(Type.Object(serviceFields(SERVICE), { description: "Data service." }), {}),
      nessie: defaulted(
        Type.Object(statefulFields({ replicas: 1, storage: "10Gi", cpu: "250m", memory: "512Mi" }), {
          description: "Project Nessie: the Iceberg catalog with git-like versioning.",
        }),
        {},
      ),
    },
    { description: "Data layer (C): data service and the Nessie catalog." },
  ),
  {},
);

const intelligencePlane = defaulted(
  Type.Object(
    {
      reasoningService: defaulted(
        Type.Object(
          {
            ...serviceFields(SERVICE),
            gpu: defaulted(
              Type.Object(
                {
                  enabled: defaulted(Type.Boolean({ description: "Request GPUs for each pod." }), false),
                  count: defaulted(
                    Type.Integer({ minimum: 1, maximum: 16, description: "GPUs per pod." }),
                    1,
                  ),
                  type: defaulted(
                    extendedResourceName("Extended resource name of the GPU, e.g. nvidia.com/gpu."),
                    "nvidia.com/gpu",
                  ),
                },
                { description: "GPU acceleration." },
              ),
              {},
            ),
          },
          { description: "Reasoning service." },
        ),
        {},
      ),
      agentRuntime: defaulted(
        Type.Object(
          {
            ...serviceFields(SERVICE),
            temporal: defaulted(
              Type.Object(
                {
                  enabled: defaulted(
                    Type.Boolean({ description: "Run a Temporal server for durable agent workflows." }),
                    false,
                  ),
                  replicas: replicas(1),
                  resources: resources({ cpu: "250m", memory: "512Mi" }),
                  nodePool: componentNodePool,
                },
                { description: "Temporal workflow engine (persists in the platform's PostgreSQL)." },
              ),
              {},
            ),
          },
          { description: "Agent runtime." },
        ),
        {},
      ),
    },
    { description: "Intelligence layer (D/E): reasoning and agents." },
  ),
  {},
);

const gateway = defaulted(
  Type.Object(
    {
      ...serviceFields(SERVICE),
      ingress: defaulted(
        Type.Object(
          {
            enabled: defaulted(
              Type.Boolean({ description: "Expose the gateway through an Ingress." }),
              false,
            ),
            host: Type.Optional(
              Type.String({
                pattern: "^([*][.])?[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
                maxLength: 253,
                description:
                  "Host name of the Ingress, e.g. platform.example.com (a DNS name, not an IP address); required when enabled.",
                ...cel({
                  rule: "!self.matches('(^|[.])[0-9]+$')",
                  message: "host must be a DNS name, not an IP address: its last label cannot be all digits",
                }),
              }),
            ),
            tls: defaulted(Type.Boolean({ description: "Terminate TLS at the Ingress." }), false),
            tlsSecretName: Type.Optional(
              dnsSubdomain("TLS Secret of the Ingress; absent uses global.tlsSecretName."),
            ),
            className: Type.Optional(dnsSubdomain("IngressClass; absent uses the cluster's default class.")),
          },
          {
            description: "Ingress of the gateway.",
            ...cel({
              rule: "!self.enabled || has(self.host)",
              message: "host is required when ingress is enabled",
              fieldPath: ".host",
              reason: "FieldValueRequired",
            }),
          },
        ),
        {},
      ),
    },
    { description: "API gateway: the platform's entry point." },
  ),
  {},
);

// ---------------------------------------------------------------- cross-cutting

const observability = defaulted(
  Type.Object(
    {
      metrics: defaulted(
        Type.Object(
          {
            enabled: defaulted(
              Type.Boolean({ description: "Expose Prometheus metrics on every component." }),
              true,
            ),
            serviceMonitor: defaulted(
              Type.Boolean({
                description: "Create Prometheus Operator ServiceMonitors (only if that CRD is installed).",
              }),
              false,
            ),
          },
          { description: "Prometheus metrics." },
        ),
        {},
      ),
      tracing: defaulted(
        Type.Object(
          {
            enabled: defaulted(Type.Boolean({ description: "Send traces to Jaeger." }), false),
            jaegerEndpoint: Type.Optional(
              Type.String({
                // An IPv4 address or a DNS name whose last label starts with a letter (a numeric
                // last label is read as a broken IPv4 address by URL parsers), an optional port of
                // at most 65535, a path of URL-safe characters: what every consumer parses (render
                // derives the OTLP endpoint from it).
                pattern:
                  "^https?://(((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])[.]){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])|([a-z0-9]([-a-z0-9]*[a-z0-9])?[.])*[a-z]([-a-z0-9]*[a-z0-9])?)(:([0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?(/[-A-Za-z0-9._~%/]*)?$",
                maxLength: 512,
                description:
                  "Jaeger collector URL, e.g. http://jaeger:14268/api/traces (a host name, an optional port, a path); required when enabled.",
                ...cel({
                  rule: "!self.contains('xn--')",
                  message: "jaegerEndpoint: use an ASCII host name or an IP address (no xn-- labels)",
                }),
              }),
            ),
          },
          {
            description: "Distributed tracing.",
            ...cel({
              rule: "!self.enabled || has(self.jaegerEndpoint)",
              message: "jaegerEndpoint is required when tracing is enabled",
              fieldPath: ".jaegerEndpoint",
              reason: "FieldValueRequired",
            }),
          },
        ),
        {},
      ),
      logging: defaulted(
        Type.Object(
          {
            level: defaulted(
              Type.Union(
                [Type.Literal("DEBUG"), Type.Literal("INFO"), Type.Literal("WARN"), Type.Literal("ERROR")],
                { description: "Log level of every component." },
              ),
              "INFO",
            ),
            format: defaulted(
              Type.Union([Type.Literal("json"), Type.Literal("text")], { description: "Log line format." }),
              "json",
            ),
          },
          { description: "Logging." },
        ),
        {},
      ),
    },
    { description: "Metrics, tracing and logging." },
  ),
  {},
);

/** The quota resource names without '/' the API server knows (its standardQuotaResources). */
const STANDARD_QUOTA_RESOURCES = [
  "cpu",
  "memory",
  "ephemeral-storage",
  "requests.cpu",
  "requests.memory",
  "requests.storage",
  "requests.ephemeral-storage",
  "limits.cpu",
  "limits.memory",
  "limits.ephemeral-storage",
  "pods",
  "resourcequotas",
  "services",
  "replicationcontrollers",
  "secrets",
  "persistentvolumeclaims",
  "configmaps",
  "services.nodeports",
  "services.loadbalancers",
];
/** Of those, the ones counted in whole numbers (the API server's integerResources). */
const INTEGER_QUOTA_RESOURCES = [
  "pods",
  "resourcequotas",
  "services",
  "replicationcontrollers",
  "secrets",
  "configmaps",
  "persistentvolumeclaims",
  "services.nodeports",
  "services.loadbalancers",
];
const celList = (items: string[]): string => `[${items.map((i) => `'${i}'`).join(", ")}]`;

const tenancy = defaulted(
  Type.Object(
    {
      mode: defaulted(
        Type.Union([Type.Literal("none"), Type.Literal("namespace")], {
          description:
            "namespace: the platform is a tenant isolated in its namespace (quota, limit range, network policy); none: no tenant guard rails.",
        }),
        "none",
      ),
      resourceQuota: Type.Optional(
        boundedMap(quantity("Quota amount."), {
          maxProperties: 32,
          description:
            "ResourceQuota hard limits of the namespace, by quota resource name: requests.cpu, requests.memory, limits.cpu, limits.memory, pods, count/deployments.apps, requests.nvidia.com/gpu, ... Counts (pods, services, count/..., extended resources) must be whole numbers.",
          keys: {
            rule: (k) =>
              `${isQualifiedName(k)} && (${k}.contains('/') || ${k} in ${celList(STANDARD_QUOTA_RESOURCES)} || ${k}.startsWith('hugepages-') || ${k}.startsWith('requests.hugepages-'))`,
            message:
              "resourceQuota keys must be quota resource names: a standard one (requests.cpu, limits.memory, pods, ...) or a qualified name with '/' such as count/pods",
            maxLength: 317,
            examples: {
              names: [
                ...STANDARD_QUOTA_RESOURCES,
                "count/pods",
                "count/deployments.apps",
                "requests.nvidia.com/gpu",
              ],
            },
          },
          rules: [
            {
              // The API server's IsIntegerResourceName: the standard counts and extended resources.
              rule: `self.all(k, !(k in ${celList(INTEGER_QUOTA_RESOURCES)} || (k.contains('/') && !k.contains('kubernetes.io/') && !k.startsWith('requests.'))) || !isQuantity(self[k]) || quantity(self[k]).isInteger())`,
              message:
                "counted quota resources (pods, services, count/..., extended resources) take whole numbers",
            },
          ],
        }),
      ),
      networkPolicy: defaulted(
        Type.Object(
          {
            isolate: defaulted(
              Type.Boolean({
                description: "Deny traffic from other namespaces (default-deny ingress NetworkPolicy).",
              }),
              false,
            ),
            allowedNamespaces: defaulted(
              Type.Array(dnsLabel("Namespace name."), {
                maxItems: 64,
                uniqueItems: true,
                "x-kubernetes-list-type": "set",
                description: "Namespaces still allowed to reach the platform when isolated.",
              }),
              [],
            ),
          },
          { description: "Network isolation." },
        ),
        {},
      ),
    },
    {
      description: "Multi-tenancy guard rails (seed section 6).",
      ...cel({
        rule: "self.mode == 'namespace' || (!has(self.resourceQuota) && !self.networkPolicy.isolate)",
        message: "resourceQuota and networkPolicy.isolate need tenancy mode namespace",
        fieldPath: ".mode",
      }),
    },
  ),
  {},
);

const upgradeStrategy = defaulted(
  Type.Object(
    {
      canary: defaulted(
        Type.Boolean({
          description: "Start each component's upgrade with one canary pod of the new version.",
        }),
        true,
      ),
      healthTimeoutSeconds: defaulted(
        Type.Integer({
          minimum: 30,
          maximum: 3600,
          description: "How long a canary or rollout may take to become healthy before it is rolled back.",
        }),
        300,
      ),
      soakSeconds: defaulted(
        Type.Integer({
          minimum: 0,
          maximum: 3600,
          description: "How long a healthy canary must stay healthy before the rest is rolled.",
        }),
        30,
      ),
      rollbackScope: defaulted(
        Type.Union([Type.Literal("Component"), Type.Literal("Platform")], {
          description:
            "On failure, roll back only the failed component (Component) or every component upgraded so far (Platform).",
        }),
        "Component",
      ),
      force: defaulted(
        Type.Boolean({
          description:
            "Allow upgrade paths the release catalog calls unsafe (downgrade, skipped minor version).",
        }),
        false,
      ),
    },
    { description: "How a change of spec.version is rolled out." },
  ),
  {},
);

const selfHealing = defaulted(
  Type.Object(
    {
      enabled: defaulted(
        Type.Boolean({ description: "Act on OOM kills, crash loops, evictions and lost nodes." }),
        true,
      ),
      oomMemoryFactor: defaulted(
        Type.Number({
          minimum: 1.1,
          maximum: 4,
          description: "Factor applied to a component's memory limit after an OOM kill (1.1..4).",
        }),
        1.5,
      ),
      maxMemory: defaulted(quantity("Memory limit that OOM healing never raises beyond, e.g. 32Gi."), "32Gi"),
      cooldownSeconds: defaulted(
        Type.Integer({
          minimum: 0,
          maximum: 86400,
          description: "Minimum time between two healing actions on the same component.",
        }),
        300,
      ),
      nodeLossGraceSeconds: defaulted(
        Type.Integer({
          minimum: 30,
          maximum: 86400,
          description: "How long a node may be NotReady before its stranded pods are freed.",
        }),
        300,
      ),
      maxActionsPerHour: defaulted(
        Type.Integer({
          minimum: 1,
          maximum: 1000,
          description: "Rate limit on healing actions across the platform.",
        }),
        10,
      ),
    },
    { description: "Self-healing policy (seed section 5)." },
  ),
  {},
);

const maintenance = defaulted(
  Type.Object(
    {
      windows: defaulted(
        Type.Array(
          Type.Object({
            start: Type.String({
              minLength: 9,
              maxLength: 128,
              description:
                "When a window opens, as cron fields: minute hour day-of-month month day-of-week (five fields), or with a leading seconds field (six), e.g. '0 2 * * SAT'.",
            }),
            duration: Type.String({
              minLength: 2,
              maxLength: 16,
              pattern: DURATION,
              description: "How long a window stays open once it opens, e.g. 4h, 90m, 30s (at most 7 days).",
            }),
            timeZone: defaulted(
              Type.String({
                minLength: 1,
                maxLength: 64,
                description: "IANA time zone the start is read in, e.g. Europe/Berlin.",
              }),
              "UTC",
            ),
          }),
          {
            maxItems: 16,
            description:
              "Maintenance windows. When any is set, disruptive actions (version upgrades, config and resource rolls, the OOM memory raise, volume growth) wait for a window; emergencies (the fix of a crash-looping workload) do not.",
          },
        ),
        [],
      ),
    },
    { description: "When the operator may restart pods (docs/operations/disruption.md)." },
  ),
  {},
);

const retentionPolicy = defaulted(
  Type.Object(
    {
      persistentVolumeClaims: defaulted(
        Type.Union([Type.Literal("Retain"), Type.Literal("Delete")], {
          description: "What happens to data volumes when the platform or a component is removed.",
        }),
        "Retain",
      ),
      secrets: defaulted(
        Type.Union([Type.Literal("Retain"), Type.Literal("Delete")], {
          description: "What happens to generated Secrets (passwords, keys) when the platform is removed.",
        }),
        "Retain",
      ),
    },
    { description: "Retention of data and credentials on removal." },
  ),
  {},
);

// ---------------------------------------------------------------- spec

export const OntoPlatformSpecSchema = Type.Object(
  {
    version: Type.String({
      minLength: 1,
      maxLength: 64,
      description:
        "Platform release to run, a semantic version such as 1.5.0. Changing it starts an upgrade.",
      ...cel({
        rule: `self.matches('${SEMVER}')`,
        message: "version must be a semantic version such as 1.5.0",
      }),
    }),
    paused: defaulted(
      Type.Boolean({
        description: "Stop reconciling: the operator changes nothing until this is false again.",
      }),
      false,
    ),
    global,
    infrastructure,
    controlPlane,
    dataPlane,
    intelligencePlane,
    gateway,
    observability,
    tenancy,
    upgradeStrategy,
    selfHealing,
    maintenance,
    retentionPolicy,
  },
  {
    description: "Desired state of a coomia-dip platform.",
    ...cel({
      rule: "!self.gateway.ingress.enabled || !self.gateway.ingress.tls || has(self.gateway.ingress.tlsSecretName) || has(self.global.tlsSecretName)",
      message: "ingress tls needs gateway.ingress.tlsSecretName or global.tlsSecretName",
      fieldPath: ".gateway.ingress.tlsSecretName",
      reason: "FieldValueRequired",
    }),
  },
);

// ---------------------------------------------------------------- status

export const PLATFORM_PHASES = [
  "Pending",
  "Provisioning",
  "Running",
  "Upgrading",
  "Degraded",
  "Error",
] as const;
const platformPhase = Type.Union(
  PLATFORM_PHASES.map((p) => Type.Literal(p)),
  { description: "Summary of the platform's state." },
);

const condition = Type.Object(
  {
    type: Type.String({
      pattern: "^[A-Za-z][A-Za-z0-9]*$",
      maxLength: 64,
      description: "Available, Progressing, Degraded, Upgrading, ...",
    }),
    status: Type.Union([Type.Literal("True"), Type.Literal("False"), Type.Literal("Unknown")]),
    reason: Type.String({ maxLength: 128, description: "One CamelCase word a program can match." }),
    message: Type.String({ maxLength: MAX_MESSAGE, description: "What a person should know or do." }),
    lastTransitionTime: dateTime("When status last changed."),
    observedGeneration: Type.Optional(count()),
  },
  { description: "A Kubernetes condition." },
);

const planeState = Type.Union([Type.Literal("Ready"), Type.Literal("NotReady"), Type.Literal("Disabled")]);

const componentState = Type.Object(
  {
    ready: count("Ready pods."),
    desired: count("Desired pods."),
    phase: Type.Union(
      [Type.Literal("Pending"), Type.Literal("Progressing"), Type.Literal("Ready"), Type.Literal("Degraded")],
      { description: "State of the component." },
    ),
    message: Type.Optional(Type.String({ maxLength: MAX_MESSAGE })),
    version: Type.Optional(Type.String({ maxLength: 64, description: "Version the component runs." })),
  },
  { description: "State of one component." },
);

const postgresMember = Type.Object(
  {
    name: Type.String({ maxLength: 253, description: "Pod name, e.g. postgres-1." }),
    role: Type.String({
      maxLength: 32,
      description:
        "primary, standby (streaming within maxStandbyLagBytes: in postgres-ro), lagging (a standby not streaming or behind), fenced (a former primary not yet rejoined), unknown (did not answer).",
    }),
    lagBytes: Type.Optional(
      Type.Integer({
        minimum: 0,
        // WAL positions are 64-bit; a lag beyond JavaScript's exact integers is reported at the cap.
        maximum: Number.MAX_SAFE_INTEGER,
        description: "WAL bytes between the primary's position and this standby's replay.",
      }),
    ),
    receivedLsn: Type.Optional(
      Type.String({
        maxLength: 32,
        description: "Last WAL position received (standby) or written (primary).",
      }),
    ),
    notStreamingSince: Type.Optional(
      dateTime(
        "A standby that answers but does not stream from the primary: since when. After 60 s of that under a healthy primary its pod is restarted, so it rewinds or clones again and follows the primary's timeline.",
      ),
    ),
  },
  { description: "One Postgres member as last observed." },
);

const postgresStatus = Type.Object(
  {
    currentPrimary: Type.Optional(
      Type.String({ maxLength: 253, description: "The pod that is the primary now." }),
    ),
    targetPrimary: Type.Optional(
      Type.String({
        maxLength: 253,
        description:
          "The pod being made the primary (equal to currentPrimary when no failover or switchover is in flight).",
      }),
    ),
    timeline: Type.Optional(
      Type.Integer({
        minimum: 1,
        // Postgres' TimeLineID is a 32-bit unsigned integer.
        maximum: 4294967295,
        description: "The primary's WAL timeline; each promotion adds one.",
      }),
    ),
    primaryUnreachableSince: Type.Optional(
      dateTime("Since when the primary has not answered (absent while it answers)."),
    ),
    members: Type.Optional(
      Type.Array(postgresMember, { maxItems: 32, description: "Members, by pod name." }),
    ),
    failoverWithheld: Type.Optional(
      Type.String({
        maxLength: 1024,
        description: "A failover is due but held back by a guard rail, and why.",
      }),
    ),
    targetReason: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          "Why targetPrimary is being promoted, written ahead with it (absent when no promotion is in flight).",
      }),
    ),
    recentFailovers: Type.Optional(
      Type.Array(dateTime(), {
        maxItems: 100,
        description:
          "When the automatic failovers of the last hour were made: they count with the healer's actions against selfHealing.maxActionsPerHour.",
      }),
    ),
    lastFailover: Type.Optional(
      Type.Object(
        {
          at: dateTime(),
          from: Type.String({ maxLength: 253 }),
          to: Type.String({ maxLength: 253 }),
          reason: Type.String({ maxLength: 64 }),
        },
        { description: "The last promotion the operator made (failover or switchover)." },
      ),
    ),
    switchover: Type.Optional(
      Type.Object(
        {
          requestedAt: Type.String({
            maxLength: 64,
            description: "The request's onto.paas/switchover-requested-at annotation.",
          }),
          to: Type.Optional(Type.String({ maxLength: 253 })),
          outcome: Type.String({ maxLength: 32, description: "Done, Refused or InProgress." }),
          message: Type.String({ maxLength: 1024 }),
        },
        { description: "The last switchover request and what became of it." },
      ),
    ),
  },
  { description: "Postgres roles as state: which member is the primary, and each standby's lag." },
);

const upgradeStatus = Type.Object(
  {
    from: Type.String({ maxLength: 64, description: "Version upgraded from." }),
    to: Type.String({ maxLength: 64, description: "Version upgraded to." }),
    phase: Type.Union(
      [
        Type.Literal("InProgress"),
        Type.Literal("RollingBack"),
        Type.Literal("Succeeded"),
        Type.Literal("Failed"),
        Type.Literal("Superseded"),
        Type.Literal("ForwardFix"),
      ],
      {
        description:
          "State of the upgrade; Superseded: spec.version changed while it ran, a new upgrade took over at a component boundary; ForwardFix: it failed after a point of no return, so it was not rolled back and waits for a fix (a newer spec.version, or the retry annotation once the cause is fixed).",
      },
    ),
    group: Type.Optional(Type.String({ maxLength: 64, description: "Plane being upgraded." })),
    component: Type.Optional(Type.String({ maxLength: 64, description: "Component being upgraded." })),
    step: Type.Optional(
      Type.String({ maxLength: 64, description: "Step within the component (e.g. Canary, Soak, Rollout)." }),
    ),
    startedAt: dateTime(),
    stepStartedAt: Type.Optional(dateTime("When the current step began.")),
    finishedAt: Type.Optional(dateTime()),
    completedComponents: Type.Array(Type.String({ maxLength: 64 }), {
      maxItems: 64,
      description: "Components already running the target version.",
    }),
    planned: Type.Optional(
      boundedMap(Type.String({ maxLength: 64 }), {
        maxProperties: 64,
        description:
          "Components this upgrade changes (their image differs), each with the version it ran before; a rollback returns it there.",
        keys: COMPONENT_KEYS,
      }),
    ),
    progress: Type.Optional(
      Type.String({ maxLength: 16, description: "Components upgraded over components planned, e.g. 3/13." }),
    ),
    retryRequest: Type.Optional(
      Type.String({
        maxLength: 256,
        description: "Value of the onto.paas/retry-upgrade annotation this attempt answered.",
      }),
    ),
    failure: Type.Optional(
      Type.Object({
        component: Type.String({ maxLength: 64 }),
        reason: Type.String({ maxLength: 128 }),
        message: Type.String({ maxLength: MAX_MESSAGE }),
      }),
    ),
    pointOfNoReturn: Type.Optional(
      Type.Object(
        {
          component: Type.String({ maxLength: 64 }),
          step: Type.String({ maxLength: 64 }),
          version: Type.String({
            maxLength: 64,
            description: "The release that marks the step irreversible.",
          }),
          reason: Type.String({ maxLength: 512 }),
          at: dateTime("When the step started."),
        },
        {
          description:
            "The first step of this upgrade that cannot be undone, once it started: from then on a failure stops the upgrade for a forward fix instead of rolling back.",
        },
      ),
    ),
  },
  { description: "Progress of the upgrade in flight (or the last one), persisted so it survives restarts." },
);

const memoryOverride = Type.Object(
  {
    memoryLimit: quantity("Raised memory limit."),
    memoryRequest: Type.Optional(quantity("Raised memory request, when it had to follow the limit.")),
    raisedAt: dateTime(),
    raises: count("How many times the limit was raised."),
    atCap: Type.Boolean({ description: "The limit reached selfHealing.maxMemory." }),
  },
  { description: "Memory raised after OOM kills." },
);

const resourceAmounts = (description: string) =>
  Type.Object(
    {
      cpu: Type.Optional(quantity("CPU.")),
      memory: Type.Optional(quantity("Memory.")),
    },
    { description },
  );

const certificateState = Type.Object({
  issuer: Type.Union([Type.Literal("operator"), Type.Literal("cert-manager"), Type.Literal("user")], {
    description:
      "operator: issued from the platform's CA and renewed by the operator; cert-manager: issued and renewed by cert-manager (spec.global.tls.issuerRef); user: a Secret you supplied.",
  }),
  notAfter: dateTime("When the certificate expires."),
  renewAt: Type.Optional(dateTime("When the operator renews it (issued certificates).")),
  serial: Type.String({ maxLength: 64, description: "Serial number, hex." }),
  replaced: Type.Optional(
    Type.Array(
      Type.Object({
        serial: Type.String({ maxLength: 64, description: "Serial number, hex." }),
        notAfter: dateTime("When it expires."),
        renewAt: dateTime("When it was due for renewal."),
      }),
      {
        maxItems: 4,
        description:
          "The certificates this one replaced, newest first: pods whose restart waits (a maintenance window, the fleet limit) may still run with one of them, and their restart goes ahead at once when it expires within half its renewal margin (notAfter - renewAt).",
      },
    ),
  ),
});

const verticalState = Type.Object(
  {
    mode: Type.Union(
      VERTICAL_SCALING_MODES.map((m) => Type.Literal(m)),
      { description: "The component's verticalScaling.mode." },
    ),
    container: Type.String({ maxLength: 63, description: "Container the recommendation is for." }),
    target: Type.Optional(resourceAmounts("Requests the VerticalPodAutoscaler recommends.")),
    withinRange: Type.Optional(
      Type.Boolean({
        description:
          "Whether the requests the component runs with lie within the recommender's range (lowerBound..upperBound in the VerticalPodAutoscaler's status); false: the recommender finds them too low or too high. The range itself is not copied here: the recommender moves it on every pass.",
      }),
    ),
    applied: Type.Optional(
      resourceAmounts("Requests the operator set from the recommendation (mode Apply), within bounds."),
    ),
    appliedAt: Type.Optional(dateTime("When applied last changed.")),
  },
  { description: "The VerticalPodAutoscaler's recommendation for one component and what was applied." },
);

export const OntoPlatformStatusSchema = Type.Object(
  {
    phase: Type.Optional(platformPhase),
    version: Type.Optional(Type.String({ maxLength: 64, description: "Version the platform fully runs." })),
    observedGeneration: Type.Optional(count()),
    ready: Type.Optional(
      Type.String({ maxLength: 16, description: "Ready components over enabled components, e.g. 14/14." }),
    ),
    readyComponents: Type.Optional(count()),
    totalComponents: Type.Optional(count()),
    conditions: Type.Optional(
      Type.Array(condition, {
        maxItems: 32,
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["type"],
      }),
    ),
    components: Type.Optional(
      Type.Object(
        {
          infrastructure: Type.Optional(planeState),
          controlPlane: Type.Optional(planeState),
          dataPlane: Type.Optional(planeState),
          intelligencePlane: Type.Optional(planeState),
          gateway: Type.Optional(planeState),
        },
        { description: "State per plane." },
      ),
    ),
    componentStatuses: Type.Optional(
      boundedMap(componentState, {
        maxProperties: 64,
        description: "State per component, by component name.",
        keys: COMPONENT_KEYS,
      }),
    ),
    upgrade: Type.Optional(upgradeStatus),
    postgres: Type.Optional(postgresStatus),
    healing: Type.Optional(
      Type.Object(
        {
          memoryOverrides: Type.Optional(
            boundedMap(memoryOverride, {
              maxProperties: 64,
              description: "Raised memory limits, by component name.",
              keys: COMPONENT_KEYS,
            }),
          ),
          recentActions: Type.Optional(
            Type.Array(
              Type.Object({
                at: dateTime(),
                component: Type.String({ maxLength: 64 }),
                action: Type.String({ maxLength: 64 }),
              }),
              { maxItems: 100, description: "Recent healing actions, for the hourly rate limit." },
            ),
          ),
        },
        { description: "State of self-healing, persisted so it survives restarts." },
      ),
    ),
    disruption: Type.Optional(
      Type.Object(
        {
          waiting: Type.Optional(
            Type.Array(
              Type.Object({
                workload: Type.String({ maxLength: 128, description: "Kind/name of the workload." }),
                reasons: Type.Array(Type.String({ maxLength: 32 }), {
                  maxItems: 8,
                  description: "Why its pods would restart: image, config, resources, certificate, template.",
                }),
                cause: Type.String({
                  maxLength: 32,
                  description:
                    "What holds it: OperatorChange (a newer operator's render), MaintenanceWindow (outside every window), FleetLimit.",
                }),
                since: dateTime("When it started waiting."),
              }),
              { maxItems: 64, description: "Pod restarts the operator holds back, by workload." },
            ),
          ),
          nextWindow: Type.Optional(dateTime("When the next maintenance window opens.")),
          windowOpenUntil: Type.Optional(dateTime("When the open maintenance window closes.")),
          restarting: Type.Optional(
            Type.Array(Type.String({ maxLength: 128 }), {
              maxItems: 64,
              description:
                "Workloads whose pods are being replaced now (they count toward the operator's fleet limit).",
            }),
          ),
        },
        { description: "Disruption control: what waits for a window or an opt-in, and the next window." },
      ),
    ),
    certificates: Type.Optional(
      boundedMap(certificateState, {
        maxProperties: 8,
        description: "The platform's TLS certificates by Secret name: who issued each and when it expires.",
        keys: SECRET_NAME_KEYS,
      }),
    ),
    verticalScaling: Type.Optional(
      boundedMap(verticalState, {
        maxProperties: 64,
        description:
          "Recommendations of the VerticalPodAutoscalers by component name, and the requests applied from them (persisted, so a restart renders the same requests).",
        keys: COMPONENT_KEYS,
      }),
    ),
  },
  { description: "Observed state of the platform, written by the operator." },
);

/** The spec as a user writes it: only `version` is required. */
export type OntoPlatformSpec = Static<typeof OntoPlatformSpecSchema>;

/**
 * The spec after `resolveSpec`: every defaulted field is present, deeply. Fields that stay
 * optional by nature: global.storageClass, global.tlsSecretName, resources.limits (and its cpu,
 * memory), kafka topics' replicationFactor (see topicReplicationFactor), gateway.ingress.host,
 * tlsSecretName and className, observability.tracing.jaegerEndpoint, tenancy.resourceQuota,
 * nodePool tolerations' key/value/effect/tolerationSeconds.
 */
export type ResolvedSpec = Resolved<typeof OntoPlatformSpecSchema>;

export type OntoPlatformStatus = Static<typeof OntoPlatformStatusSchema>;
export type PlatformPhase = (typeof PLATFORM_PHASES)[number];
export type Condition = Static<typeof condition>;
export type ComponentState = Static<typeof componentState>;
export type UpgradeStatus = Static<typeof upgradeStatus>;
export type PostgresStatus = Static<typeof postgresStatus>;
export type PostgresMemberStatus = Static<typeof postgresMember>;
export type MemoryOverride = Static<typeof memoryOverride>;
export type VerticalState = Static<typeof verticalState>;
export type CertificateState = Static<typeof certificateState>;
export type VerticalScalingMode = (typeof VERTICAL_SCALING_MODES)[number];
export type PlaneState = Static<typeof planeState>;

/** The metadata fields the operator reads. */
export interface OntoPlatformMetadata {
  name: string;
  namespace: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface OntoPlatform {
  apiVersion: "onto.paas/v1alpha1";
  kind: "OntoPlatform";
  metadata: OntoPlatformMetadata;
  spec: OntoPlatformSpec;
  status?: OntoPlatformStatus;
}
