// The OntoRelease resource (cluster-scoped, onto.paas/v1alpha1): one platform version as data.
// Which image every component runs (tag and, optionally, digest), which versions it may be
// upgraded from (the upgrade graph), and per component the upgrade steps that cannot be undone
// (points of no return). The product's own releases are objects of this kind too (shipped by the
// chart and the kustomize base, and built into the operator); a user adds a version by creating one.
import { Type, type Static } from "@sinclair/typebox";
import { COMPONENTS } from "./components.js";
import { SEMVER, cel, count, dateTime, defaulted, type Resolved } from "./schema-kit.js";
import { MAX_MESSAGE } from "./messages.js";

/** Third-party images a release pins, by role (a role is not always a component: minio-client runs a Job). */
export const INFRASTRUCTURE_IMAGES = [
  "postgres",
  "redis",
  "minio",
  "minio-client",
  "kafka",
  "nessie",
  "temporal",
] as const;
export type InfrastructureImage = (typeof INFRASTRUCTURE_IMAGES)[number];

/** Services built by the platform itself; their repository defaults to `<spec.global.imageRegistry>/<name>`. */
export const PLATFORM_SERVICES = [
  "ontology-service",
  "schema-registry",
  "auth-service",
  "data-service",
  "reasoning-service",
  "agent-runtime",
  "gateway",
] as const;
export type PlatformService = (typeof PLATFORM_SERVICES)[number];

export const IMAGE_ROLES = [...INFRASTRUCTURE_IMAGES, ...PLATFORM_SERVICES] as const;
export type ImageRole = (typeof IMAGE_ROLES)[number];

// Image reference parts, after the distribution reference grammar (RE2 and JavaScript alike, no
// backslashes). A repository may start with a registry host (with a port); a tag is what a
// registry accepts; a digest is sha256 or sha512 in lowercase hex.
const PATH_COMPONENT = "[a-z0-9]+(([.]|_|__|-+)[a-z0-9]+)*";
export const IMAGE_REPOSITORY = `^([a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?([.][a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)*(:[0-9]{1,5})?/)?${PATH_COMPONENT}(/${PATH_COMPONENT})*$`;
export const IMAGE_TAG = "^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$";
export const IMAGE_DIGEST = "^sha(256:[a-f0-9]{64}|512:[a-f0-9]{128})$";

function repository(description: string) {
  return Type.String({ minLength: 1, maxLength: 255, pattern: IMAGE_REPOSITORY, description });
}

const imageFields = {
  tag: Type.String({ minLength: 1, maxLength: 128, pattern: IMAGE_TAG, description: "Image tag." }),
  digest: Type.Optional(
    Type.String({
      maxLength: 135,
      pattern: IMAGE_DIGEST,
      description:
        "Content digest (sha256:<64 hex>). Given, the image is pulled as repository:tag@digest, so the bits cannot change under the tag.",
    }),
  ),
};

function infrastructureImage(role: InfrastructureImage) {
  return Type.Object(
    {
      repository: repository(
        `Repository of the ${role} image, with its registry unless it is Docker Hub (e.g. postgres, ghcr.io/projectnessie/nessie).`,
      ),
      ...imageFields,
    },
    { description: `The ${role} image.` },
  );
}

function serviceImage(role: PlatformService) {
  return Type.Object(
    {
      repository: Type.Optional(
        repository(
          `Repository of the ${role} image; absent: <spec.global.imageRegistry>/${role} of the platform.`,
        ),
      ),
      ...imageFields,
    },
    { description: `The ${role} image.` },
  );
}

const images = Type.Object(
  {
    ...(Object.fromEntries(INFRASTRUCTURE_IMAGES.map((r) => [r, infrastructureImage(r)])) as {
      [K in InfrastructureImage]: ReturnType<typeof infrastructureImage>;
    }),
    ...(Object.fromEntries(PLATFORM_SERVICES.map((r) => [r, serviceImage(r)])) as {
      [K in PlatformService]: ReturnType<typeof serviceImage>;
    }),
  },
  { description: "The image of every component (and of the bucket Job, minio-client)." },
);

export const UPGRADE_PATHS = ["Allowed", "ForceRequired", "Refused"] as const;
export type UpgradePath = (typeof UPGRADE_PATHS)[number];

const upgradeRule = Type.Object(
  {
    versions: Type.String({
      minLength: 1,
      maxLength: 256,
      description:
        "Versions this rule covers, as a semantic version range (e.g. '>=1.5.0 <1.6.0', '1.5.x', '*'); pre-releases match too.",
    }),
    path: Type.Union(
      UPGRADE_PATHS.map((p) => Type.Literal(p)),
      {
        description:
          "Allowed: the upgrade starts; ForceRequired: only with spec.upgradeStrategy.force or the force annotation; Refused: never, not even forced.",
      },
    ),
    reason: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 512,
        description: "Why (shown when the path is refused or needs force), e.g. 'a downgrade'.",
      }),
    ),
  },
  {
    description: "One edge set of the upgrade graph: from which versions, and how.",
    ...cel({
      rule: "self.path == 'Allowed' || has(self.reason)",
      message: "a path that is ForceRequired or Refused needs a reason",
      fieldPath: ".reason",
      reason: "FieldValueRequired",
    }),
  },
);

export const UPGRADE_STEPS = ["Canary", "Rollout"] as const;
export type UpgradeStepName = (typeof UPGRADE_STEPS)[number];

const irreversibleStep = Type.Object(
  {
    component: Type.Union(
      COMPONENTS.map((c) => Type.Literal(c.name)),
      { description: "The component whose upgrade to this release cannot be undone from this step on." },
    ),
    step: Type.Union(
      UPGRADE_STEPS.map((s) => Type.Literal(s)),
      {
        description:
          "The first step that cannot be undone: Canary (the first pod of the new version, e.g. a schema migration at start) or Rollout (every pod).",
      },
    ),
    reason: Type.String({
      minLength: 1,
      maxLength: 512,
      description: "What makes it irreversible (shown when a rollback is withheld or refused).",
    }),
  },
  { description: "A point of no return." },
);

export const OntoReleaseSpecSchema = Type.Object(
  {
    version: Type.String({
      minLength: 1,
      maxLength: 64,
      description:
        "The platform version this release is (what OntoPlatform spec.version names), a semantic version.",
      ...cel({
        rule: `self.matches('${SEMVER}')`,
        message: "version must be a semantic version such as 1.6.0",
      }),
    }),
    description: Type.Optional(
      Type.String({ maxLength: 1024, description: "What this release is, for people." }),
    ),
    overrideBuiltIn: defaulted(
      Type.Boolean({
        description:
          "Replace the operator's built-in release of the same version with this one. Without it, an object that differs from a built-in release is not used.",
      }),
      false,
    ),
    images,
    upgradeFrom: Type.Array(upgradeRule, {
      minItems: 1,
      maxItems: 32,
      description:
        "The upgrade graph into this release: the first rule whose range holds the running version decides; a version no rule covers is refused.",
    }),
    irreversible: defaulted(
      Type.Array(irreversibleStep, {
        maxItems: 32,
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["component"],
        description:
          "Steps of upgrading to this release that cannot be rolled back. Once one has started, a failure later in the upgrade stops it for a forward fix instead of rolling back, and a downgrade below this release is refused.",
      }),
      [],
    ),
  },
  { description: "One platform version: its images, its upgrade graph, its points of no return." },
);

const releaseCondition = Type.Object(
  {
    type: Type.String({ pattern: "^[A-Za-z][A-Za-z0-9]*$", maxLength: 64, description: "Accepted." }),
    status: Type.Union([Type.Literal("True"), Type.Literal("False"), Type.Literal("Unknown")]),
    reason: Type.String({ maxLength: 128, description: "One CamelCase word a program can match." }),
    message: Type.String({ maxLength: MAX_MESSAGE, description: "What a person should know or do." }),
    lastTransitionTime: dateTime("When status last changed."),
    observedGeneration: Type.Optional(count()),
  },
  { description: "A Kubernetes condition." },
);

export const OntoReleaseStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(count()),
    conditions: Type.Optional(
      Type.Array(releaseCondition, {
        maxItems: 8,
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["type"],
        description: "Accepted: whether the operator uses this object for its version, and why.",
      }),
    ),
  },
  { description: "What the operator made of this release, written by the operator." },
);

export type OntoReleaseSpec = Static<typeof OntoReleaseSpecSchema>;
/** The spec after defaulting (overrideBuiltIn and irreversible present). */
export type ResolvedReleaseSpec = Resolved<typeof OntoReleaseSpecSchema>;
export type OntoReleaseStatus = Static<typeof OntoReleaseStatusSchema>;
export type ReleaseImage = ResolvedReleaseSpec["images"][ImageRole];
export type UpgradeRule = ResolvedReleaseSpec["upgradeFrom"][number];
export type IrreversibleStep = ResolvedReleaseSpec["irreversible"][number];

export interface OntoRelease {
  apiVersion: "onto.paas/v1alpha1";
  kind: "OntoRelease";
  metadata: {
    name: string;
    uid?: string;
    generation?: number;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
  };
  spec: OntoReleaseSpec;
  status?: OntoReleaseStatus;
}
